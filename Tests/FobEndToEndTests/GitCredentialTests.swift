import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// A git that sees no user or system configuration, never prompts, and finds
/// `git-credential-fob` (a link to the built `fob`) on its `PATH`.
struct GitSandbox {
    let vault: ProcessTestVault
    let home = TemporaryDirectory(prefix: "fob-git-home")

    init(vault: ProcessTestVault) throws {
        self.vault = vault
        try FileManager.default.createSymbolicLink(
            atPath: home.file("git-credential-fob").path,
            withDestinationPath: FobProcess.binaryURL.path)
    }

    var environment: [String: String] {
        FobProcess.baseEnvironment.merging(vault.environment) { $1 }.merging([
            "HOME": home.url.path, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
            "PATH": home.url.path + ":" + FobProcess.baseEnvironment["PATH"]!,
        ]) { $1 }
    }

    /// Runs `git -c credential.helper=HELPER ARGS` with `input` on stdin.
    func git(
        _ arguments: [String], input: String = "", helper: String = "fob",
        environment extra: [String: String] = [:], timeout: Double = 60
    ) throws -> ProcessResult {
        try ChildProcess.run(
            executable: "/usr/bin/git", arguments: ["-c", "credential.helper=\(helper)"] + arguments,
            environment: environment.merging(extra) { $1 }, stdin: Array(input.utf8), timeout: timeout)
    }
}

/// `fob git-credential` (as `git-credential-fob`) driven by the real `git`.
@Suite struct GitCredentialTests {
    @Test func approveFillAndRejectThroughGit() throws {
        let box = try GitSandbox(vault: try ProcessTestVault())
        let approve = try box.git(
            ["credential", "approve"],
            input: "protocol=https\nhost=example.com\nusername=ana\npassword=s3cret\n\n")
        #expect(approve.status == 0, "\(approve.stderrText)")
        let fill = try box.git(["credential", "fill"], input: "protocol=https\nhost=example.com\n\n")
        #expect(fill.status == 0, "\(fill.stderrText)")
        #expect(fill.stdoutText == "protocol=https\nhost=example.com\nusername=ana\npassword=s3cret\n")

        // Stored as an internet password that `fob ls` shows, never with its secret.
        let list = try box.vault.run(["ls"])
        #expect(list.stdoutText.contains("example.com  ana"))
        #expect(!list.stdoutText.contains("s3cret"))
        #expect(try box.vault.run(["ls", "--service", "example.com"]).stdoutText.contains("example.com  ana"))
        let item = try box.vault.open().items(matching: ItemQuery(itemClass: .internetPassword), withSecrets: true)[0]
        #expect(item.service == "example.com")
        #expect(item.internetProtocol == "htps")
        #expect(item.secret?.unsafeString == "s3cret")

        let reject = try box.git(
            ["credential", "reject"],
            input: "protocol=https\nhost=example.com\nusername=ana\npassword=s3cret\n\n")
        #expect(reject.status == 0)
        let after = try box.git(["credential", "fill"], input: "protocol=https\nhost=example.com\n\n")
        #expect(after.status != 0, "git must ask the user, and cannot")
        #expect(!after.stdoutText.contains("s3cret"))
    }

    @Test func portsProtocolsAndUsersAreKeptApart() throws {
        let box = try GitSandbox(vault: try ProcessTestVault())
        for (host, proto, user, password) in [
            ("example.com", "https", "ana", "one"), ("example.com:8443", "https", "ana", "two"),
            ("example.com", "http", "ana", "three"), ("example.com", "https", "bob", "four"),
        ] {
            let r = try box.git(
                ["credential", "approve"],
                input: "protocol=\(proto)\nhost=\(host)\nusername=\(user)\npassword=\(password)\n\n")
            #expect(r.status == 0)
        }
        func fill(_ request: String) throws -> String {
            try box.git(["credential", "fill"], input: request + "\n").stdoutText
        }
        #expect(try fill("protocol=https\nhost=example.com:8443\n").contains("password=two\n"))
        #expect(try fill("protocol=http\nhost=example.com\n").contains("password=three\n"))
        #expect(try fill("protocol=https\nhost=example.com\nusername=bob\n").contains("password=four\n"))
        #expect(try fill("protocol=https\nhost=example.com\nusername=ana\n").contains("password=one\n"))

        // Erase removes only the matching credential; a password that differs keeps it.
        _ = try box.git(
            ["credential", "reject"], input: "protocol=https\nhost=example.com\nusername=bob\npassword=wrong\n\n")
        #expect(try fill("protocol=https\nhost=example.com\nusername=bob\n").contains("password=four\n"))
        _ = try box.git(
            ["credential", "reject"], input: "protocol=https\nhost=example.com\nusername=bob\npassword=four\n\n")
        #expect(try box.vault.open().items(matching: ItemQuery(itemClass: .internetPassword)).count == 3)
        #expect(try fill("protocol=https\nhost=example.com:8443\n").contains("password=two\n"))
    }

    @Test func anExpiredPasswordIsNotReturned() throws {
        let v = try ProcessTestVault()
        let past = Int(Date().timeIntervalSince1970) - 60
        let future = Int(Date().timeIntervalSince1970) + 3600
        // Stored while valid (written directly), then expired.
        var item = Item(
            itemClass: .internetPassword, service: "old.example", account: "ana",
            customFields: [CustomField(name: "password_expiry_utc", text: String(past))], secret: .text("stale"))
        item.internetProtocol = "htps"
        try v.open().add(item)
        let stale = try v.run(["git-credential", "get"], input: "protocol=https\nhost=old.example\n")
        #expect(stale.status == 0)
        #expect(stale.stdout.isEmpty)

        let store = try v.run(
            ["git-credential", "store"],
            input:
                "protocol=https\nhost=new.example\nusername=ana\npassword=fresh\npassword_expiry_utc=\(future)\noauth_refresh_token=rt\n"
        )
        #expect(store.status == 0)
        let fresh = try v.run(
            ["git-credential", "get"], input: "protocol=https\nhost=new.example\ncapability[]=authtype\n")
        #expect(
            fresh.stdoutText == "username=ana\npassword=fresh\npassword_expiry_utc=\(future)\noauth_refresh_token=rt\n")
    }

    @Test func aLockedVaultWithoutATerminalAnswersNothingAtOnce() throws {
        let v = try ProcessTestVault()
        _ = try v.run(["git-credential", "store"], input: "protocol=https\nhost=h\nusername=ana\npassword=pw\n")
        let started = Date()
        let get = try FobProcess.run(
            ["git-credential", "get"], environment: ["FOB_VAULT": v.path],
            input: "protocol=https\nhost=h\n", timeout: 10)
        #expect(get.status == 0)
        #expect(get.stdout.isEmpty)
        #expect(get.stderr.isEmpty)
        #expect(!get.timedOut)
        #expect(Date().timeIntervalSince(started) < 5)
        // No vault at all: the same quiet answer.
        let none = try FobProcess.run(
            ["git-credential", "get"], environment: ["FOB_VAULT": v.path + ".missing"],
            input: "protocol=https\nhost=h\n", timeout: 10)
        #expect(none.status == 0)
        #expect(none.stdout.isEmpty)
    }

    @Test func cloneOverHTTPWithBasicAuthentication() throws {
        let box = try GitSandbox(vault: try ProcessTestVault())
        let site = TemporaryDirectory(prefix: "fob-git-site")
        let work = TemporaryDirectory(prefix: "fob-git-work")
        // A repository with one commit, served as a dumb-HTTP bare repository.
        let source = work.file("source").path
        let env = box.environment.merging([
            "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
            "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com",
        ]) { $1 }
        func sh(_ script: String) throws -> ProcessResult {
            try ChildProcess.run(executable: "/bin/sh", arguments: ["-c", script], environment: env)
        }
        let setup = try sh(
            """
            set -e; git init -q '\(source)'; cd '\(source)'; echo hello > README; git add README; git commit -qm first
            git clone -q --bare '\(source)' '\(site.file("repo.git").path)'; cd '\(site.file("repo.git").path)'; git update-server-info
            """)
        #expect(setup.status == 0, "\(setup.stderrText)")
        let server = try BasicAuthServer(root: site.url.path, user: "ana", password: "pa55word")
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/repo.git"
        let helper = "\(FobProcess.binaryURL.path) git-credential"

        // Nothing stored: git cannot ask, the clone fails.
        let denied = try box.git(["clone", "-q", url, work.file("denied").path], helper: helper)
        #expect(denied.status != 0)

        // The credential in the URL: git approves it, and fob stores it.
        let first = try box.git(
            [
                "clone", "-q", "http://ana:pa55word@127.0.0.1:\(server.port)/repo.git",
                work.file("first").path,
            ], helper: helper)
        #expect(first.status == 0, "\(first.stderrText)")
        let stored = try box.vault.open().items(matching: ItemQuery(itemClass: .internetPassword), withSecrets: true)
        #expect(stored.map(\.account) == ["ana"])
        #expect(stored.first?.port == server.port)

        // Then a clone without it: fob answers git's question.
        let second = try box.git(["clone", "-q", url, work.file("second").path], helper: helper)
        #expect(second.status == 0, "\(second.stderrText)")
        let readme = try String(contentsOf: work.file("second/README"), encoding: .utf8)
        #expect(readme == "hello\n")
    }
}

/// Python's http.server on 127.0.0.1 (a port the kernel picks) serving a
/// directory only to one user name and password (HTTP basic authentication);
/// it exits by itself after two minutes.
final class BasicAuthServer {
    let process: ChildProcess
    let port: Int
    private let directory = TemporaryDirectory(prefix: "fob-http")

    init(root: String, user: String, password: String) throws {
        let script = """
            import base64, http.server, os, signal, sys
            root, expected, port_file = sys.argv[1], 'Basic ' + base64.b64encode(sys.argv[2].encode()).decode(), sys.argv[3]
            class Handler(http.server.SimpleHTTPRequestHandler):
                def __init__(self, *a, **k): super().__init__(*a, directory=root, **k)
                def do_GET(self):
                    if self.headers.get('Authorization') != expected:
                        self.send_response(401)
                        self.send_header('WWW-Authenticate', 'Basic realm="fob"')
                        self.send_header('Content-Length', '0')
                        self.end_headers()
                        return
                    super().do_GET()
                def log_message(self, *a): pass
            server = http.server.HTTPServer(('127.0.0.1', 0), Handler)
            signal.alarm(120)
            with open(port_file + '.tmp', 'w') as f: f.write(str(server.server_address[1]))
            os.rename(port_file + '.tmp', port_file)
            server.serve_forever()
            """
        let portFile = directory.file("port").path
        // The credential is given in argv only to this test server, never to fob.
        process = try ChildProcess(
            executable: "/usr/bin/python3",
            arguments: ["-c", script, root, "\(user):\(password)", portFile],
            environment: FobProcess.baseEnvironment)
        var found: Int?
        for _ in 0..<500 {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let value = Int(text) {
                found = value
                break
            }
            usleep(20_000)
        }
        guard let found else {
            process.send(signal: SIGKILL)
            throw ServerError.didNotStart
        }
        port = found
    }

    enum ServerError: Error { case didNotStart }

    func stop() {
        process.send(signal: SIGTERM)
        _ = process.wait(timeout: 10)
    }
}

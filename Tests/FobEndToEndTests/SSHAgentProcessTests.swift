import FobAgent
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// An sshd of the test's own on a loopback port (TESTING.md "sshd on loopback").
final class LoopbackSSHD: @unchecked Sendable {
    let port: Int
    let directory: TemporaryDirectory
    let process: ChildProcess
    let hostKeyLine: String

    init(authorizedKeys: String, maxAuthTries: Int = 6) throws {
        directory = TemporaryDirectory(prefix: "fob-sshd")
        let dir = directory.url.path
        mkdir("/run/sshd", 0o755)
        _ = try sshTool("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", dir + "/host"])
        hostKeyLine = try String(contentsOfFile: dir + "/host.pub", encoding: .utf8)
            .split(separator: " ").prefix(2).joined(separator: " ")
        try authorizedKeys.write(toFile: dir + "/authorized_keys", atomically: true, encoding: .utf8)
        port = Int.random(in: 20_000..<40_000)
        let config = """
            ListenAddress 127.0.0.1
            HostKey \(dir)/host
            AuthorizedKeysFile \(dir)/authorized_keys
            PidFile \(dir)/sshd.pid
            UsePAM no
            StrictModes no
            PermitRootLogin yes
            MaxAuthTries \(maxAuthTries)

            """
        try config.write(toFile: dir + "/config", atomically: true, encoding: .utf8)
        process = try ChildProcess(
            executable: "/usr/sbin/sshd", arguments: ["-D", "-e", "-f", dir + "/config", "-p", String(port)],
            environment: ["PATH": FobProcess.baseEnvironment["PATH"]!])
        for _ in 0..<100 where !LoopbackSSHD.accepts(port) { usleep(50_000) }
    }

    /// The known_hosts line of this server.
    var knownHostsLine: String { "[127.0.0.1]:\(port) \(hostKeyLine)" }

    /// Whether a socket listens on 127.0.0.1:`port` (read from /proc/net/tcp:
    /// a probe connection would be one more client for sshd to handle).
    static func accepts(_ port: Int) -> Bool {
        let table = (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)) ?? ""
        let local = "0100007F:" + String(format: "%04X", port)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1] == local && fields[3] == "0A"
        }
    }

    deinit {
        kill(process.pid, SIGTERM)
        _ = process.wait(timeout: 5)
    }
}

/// Runs an OpenSSH tool from /usr/bin.
@discardableResult
func sshTool(_ tool: String, _ arguments: [String], environment: [String: String] = [:], stdin: String = "")
    throws -> ProcessResult
{
    try ChildProcess.run(
        executable: "/usr/bin/" + tool, arguments: arguments,
        environment: ["PATH": FobProcess.baseEnvironment["PATH"]!].merging(environment) { $1 },
        stdin: Array(stdin.utf8), timeout: 30)
}

/// A vault with its agent started by the test (its standard error read for
/// the agent's log lines), its SSH socket, and a HOME whose known_hosts the agent reads.
final class SSHAgentFixture: @unchecked Sendable {
    let fixture: AgentFixture
    let home: TemporaryDirectory
    let agent: ChildProcess

    /// - Parameter pinentry: what a fake pinentry answers `CONFIRM` and
    ///   `GETPIN` with (`password` types the vault's master password), or
    ///   `nil` for none on the agent's `FOB_PINENTRY`.
    init(pinentry: (confirm: String, pin: String)? = nil) throws {
        fixture = try AgentFixture()
        home = TemporaryDirectory(prefix: "fob-ssh-home")
        mkdir(home.url.path + "/.ssh", 0o700)
        fixture.extraEnvironment["HOME"] = home.url.path
        fixture.extraEnvironment["FOB_PINENTRY"] = home.url.path + "/pinentry"
        if let pinentry {
            let pin =
                pinentry.pin == "password"
                ? "printf 'D %s\\n' \"$(cat '\(fixture.vault.passwordFile)')\"; echo OK" : "echo '\(pinentry.pin)'"
            let script = """
                #!/bin/sh
                echo "OK Pleased to meet you"
                while read -r line; do
                  echo "$line" >> '\(home.url.path)/pinentry.log'
                  case "$line" in
                    CONFIRM) echo '\(pinentry.confirm)';;
                    GETPIN) \(pin);;
                    BYE) echo OK; exit 0;;
                    *) echo OK;;
                  esac
                done
                """
            try script.write(toFile: home.url.path + "/pinentry", atomically: true, encoding: .utf8)
            chmod(home.url.path + "/pinentry", 0o755)
        }
        agent = try FobProcess.start(["agent"], environment: fixture.environment)
        _ = fixture.eventually { FileManager.default.fileExists(atPath: socket) }
        #expect(try fixture.unlock().status == 0)
    }

    var socket: String { SSHAgentListener.socketPath(for: fixture.endpoint) }
    var knownHosts: String { home.url.path + "/.ssh/known_hosts" }

    func fob(_ arguments: [String]) throws -> ProcessResult { try fixture.run(arguments) }

    /// `ssh` to the server with this agent, as root, running `command`.
    func ssh(_ server: LoopbackSSHD, _ extra: [String] = [], command: String = "true") throws -> ProcessResult {
        try sshTool(
            "ssh",
            [
                "-F", "/dev/null", "-o", "IdentityAgent=\(socket)", "-o", "UserKnownHostsFile=\(knownHosts)",
                "-o", "BatchMode=yes", "-v", "-p", String(server.port),
            ] + extra + ["root@127.0.0.1", command], environment: ["HOME": home.url.path])
    }

    /// Stops the agent (by its pid) and returns its standard error: its log lines.
    var log: String {
        kill(agent.pid, SIGTERM)
        return agent.wait(timeout: 10).stderrText
    }

    deinit {
        kill(agent.pid, SIGTERM)
        _ = agent.wait(timeout: 10)
    }
}

private let canRunSSHD = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd")

@Suite(.serialized, .enabled(if: canRunSSHD)) struct SSHAgentProcessTests {
    @Test func logsInWithEd25519ECDSAAndRSAKeysAndSignsFilesWithSSHKeygen() throws {
        let f = try SSHAgentFixture()
        var lines: [String] = []
        for (name, type) in [("ed", "ed25519"), ("ec", "ecdsa"), ("rs", "rsa")] {
            let made = try f.fob(["ssh", "keygen", "--type", type, name])
            #expect(made.status == 0, "\(made.stderrText)")
            lines.append(made.stdoutText)
        }
        let env = ["SSH_AUTH_SOCK": f.socket]
        let listed = try sshTool("ssh-add", ["-l"], environment: env)
        #expect(listed.stdoutText.contains("(ED25519)") && listed.stdoutText.contains("(ECDSA)"))
        #expect(listed.stdoutText.contains("3072 SHA256:") && listed.stdoutText.contains("(RSA)"))
        let publicLines = try sshTool("ssh-add", ["-L"], environment: env).stdoutText
        #expect(Set(publicLines.split(separator: "\n")) == Set(lines.joined().split(separator: "\n")))
        let server = try LoopbackSSHD(authorizedKeys: publicLines)
        try (server.knownHostsLine + "\n").write(toFile: f.knownHosts, atomically: true, encoding: .utf8)
        let dir = f.home.url.path
        for (index, name) in ["ed", "ec", "rs"].enumerated() {
            try (lines[index]).write(toFile: "\(dir)/\(name).pub", atomically: true, encoding: .utf8)
            let login = try f.ssh(
                server, ["-o", "IdentitiesOnly=yes", "-o", "IdentityFile=\(dir)/\(name).pub"], command: "echo in")
            #expect(login.status == 0 && login.stdoutText == "in\n", "\(name): \(login.stderrText)")
        }
        try "data\n".write(toFile: "\(dir)/f", atomically: true, encoding: .utf8)
        #expect(
            try sshTool(
                "ssh-keygen", ["-Y", "sign", "-f", "\(dir)/rs.pub", "-n", "file", "\(dir)/f"], environment: env
            ).status == 0)
        try ("me " + lines[2]).write(toFile: "\(dir)/allowed", atomically: true, encoding: .utf8)
        let verified = try sshTool(
            "ssh-keygen", ["-Y", "verify", "-f", "\(dir)/allowed", "-I", "me", "-n", "file", "-s", "\(dir)/f.sig"],
            stdin: "data\n")
        #expect(verified.status == 0, "\(verified.stderrText)")
        #expect(f.log.contains("for [127.0.0.1]:\(server.port) (verified)"))
    }

    @Test func eightKeysOneAllowedLogsInFirstTimeAndARestrictedKeyIsNotOfferedElsewhere() throws {
        let f = try SSHAgentFixture()
        for index in 1...8 { #expect(try f.fob(["ssh", "keygen", "k\(index)"]).status == 0) }
        let allowedKey = try f.fob(["ssh", "pub", "k5"]).stdoutText
        let one = try LoopbackSSHD(authorizedKeys: allowedKey, maxAuthTries: 2)
        let two = try LoopbackSSHD(authorizedKeys: allowedKey, maxAuthTries: 2)
        try (one.knownHostsLine + "\n" + two.knownHostsLine + "\n").write(
            toFile: f.knownHosts, atomically: true, encoding: .utf8)
        for index in 1...8 {
            let pattern = index == 5 ? "[127.0.0.1]:\(one.port)" : "elsewhere.test"
            #expect(try f.fob(["ssh", "allow", "k\(index)", pattern]).status == 0)
        }
        let login = try f.ssh(one)
        #expect(login.status == 0, "\(login.stderrText)")
        let offered = login.stderrText.split(separator: "\n").filter { $0.contains("Offering public key") }
        #expect(offered.count == 1 && offered[0].contains(" k5 "))
        let other = try f.ssh(two)
        #expect(other.status != 0)
        #expect(!other.stderrText.contains("Offering public key"))
    }

    @Test func aForwardedSignatureIsSeenAsForwardedAndAsked() throws {
        let f = try SSHAgentFixture(pinentry: (confirm: "OK", pin: "ERR"))
        let key = try f.fob(["ssh", "keygen", "fwd"]).stdoutText
        let first = try LoopbackSSHD(authorizedKeys: key)
        let second = try LoopbackSSHD(authorizedKeys: key)
        let known = first.knownHostsLine + "\n" + second.knownHostsLine + "\n"
        try known.write(toFile: f.knownHosts, atomically: true, encoding: .utf8)
        let inner =
            "ssh -F /dev/null -o UserKnownHostsFile=\(f.knownHosts) -o BatchMode=yes -p \(second.port) root@127.0.0.1 echo hop"
        let login = try f.ssh(first, ["-A"], command: inner)
        #expect(login.stdoutText == "hop\n", "\(login.stderrText)")
        let log = f.log
        #expect(log.contains("for [127.0.0.1]:\(first.port) (verified)"))
        #expect(log.contains("for [127.0.0.1]:\(second.port) (verified, forwarded)"))
        // The direct login is settled by the vault's rule ('any'); the forwarded one is asked.
        let asked = try String(contentsOfFile: f.home.url.path + "/pinentry.log", encoding: .utf8)
        #expect(asked.components(separatedBy: "CONFIRM").count == 2)
        #expect(asked.contains("to log in to [127.0.0.1]:\(second.port) (verified, forwarded) through the SSH agent."))
    }

    /// `ssh-keygen -Y sign` with a key of a locked vault: pinentry asks the master password.
    private func signLocked(_ f: SSHAgentFixture) throws -> ProcessResult {
        let line = try f.fob(["ssh", "keygen", "k"]).stdoutText
        let env = ["SSH_AUTH_SOCK": f.socket]
        #expect(try sshTool("ssh-add", ["-l"], environment: env).stdoutText.contains(" k (ED25519)"))
        #expect(try f.fob(["lock"]).status == 0)
        #expect(try sshTool("ssh-add", ["-l"], environment: env).stdoutText.contains(" k (ED25519)"))
        let pub = f.home.url.path + "/k.pub"
        try line.write(toFile: pub, atomically: true, encoding: .utf8)
        try "x".write(toFile: pub + ".data", atomically: true, encoding: .utf8)
        return try sshTool("ssh-keygen", ["-Y", "sign", "-f", pub, "-n", "file", pub + ".data"], environment: env)
    }

    @Test func aLockedVaultAsksToUnlockThenSigns() throws {
        let f = try SSHAgentFixture(pinentry: (confirm: "OK", pin: "password"))
        let signed = try signLocked(f)
        #expect(signed.status == 0, "\(signed.stderrText)")
        #expect(FileManager.default.fileExists(atPath: f.home.url.path + "/k.pub.data.sig"))
        #expect(try f.fixture.status()["state"] as? String == "unlocked")
        let asked = try String(contentsOfFile: f.home.url.path + "/pinentry.log", encoding: .utf8)
        #expect(asked.contains("SETPROMPT Master password:"))
    }

    @Test func aLockedVaultWhoseQuestionIsCancelledRefusesWithALogLine() throws {
        let f = try SSHAgentFixture(pinentry: (confirm: "OK", pin: "ERR 83886179 Operation cancelled <Pinentry>"))
        let signed = try signLocked(f)
        #expect(signed.status != 0)
        let log = f.log
        #expect(log.contains("refused: the vault is locked; run 'fob unlock'"), "\(signed.stderrText) \(log)")
    }

    @Test func eachLoginIsAskedUnderAnAskRuleAndRecordedWithItsDestination() throws {
        let allowed = try SSHAgentFixture(pinentry: (confirm: "OK", pin: "ERR"))
        #expect(try allowed.fixture.run(["access", "default", "ask"], password: true).status == 0)
        let key = try allowed.fob(["ssh", "keygen", "k"]).stdoutText
        let server = try LoopbackSSHD(authorizedKeys: key)
        try (server.knownHostsLine + "\n").write(toFile: allowed.knownHosts, atomically: true, encoding: .utf8)
        let login = try allowed.ssh(server)
        #expect(login.status == 0, "\(login.stderrText)")
        let asked = try String(contentsOfFile: allowed.home.url.path + "/pinentry.log", encoding: .utf8)
        #expect(asked.contains("to log in to [127.0.0.1]:\(server.port) (verified) through the SSH agent."))
        _ = allowed.log // the agent stops and writes its access log
        let record = try allowed.fixture.run(["log"], password: true).stdoutText
        let ssh = record.split(separator: "\n").filter { $0.contains(" ssh ") }
        #expect(ssh.count == 2, "\(record)")
        #expect(ssh.first?.contains("prompt") == true)
        #expect(ssh.last?.contains("allowed-until-lock") == true)

        let denied = try SSHAgentFixture(pinentry: (confirm: "ERR 83886179 Operation cancelled <Pinentry>", pin: "ERR"))
        #expect(try denied.fixture.run(["access", "default", "ask"], password: true).status == 0)
        let other = try denied.fob(["ssh", "keygen", "k"]).stdoutText
        let refusing = try LoopbackSSHD(authorizedKeys: other)
        try (refusing.knownHostsLine + "\n").write(toFile: denied.knownHosts, atomically: true, encoding: .utf8)
        #expect(try denied.ssh(refusing).status != 0)
        #expect(denied.log.contains("the user refused"))
    }

    @Test func listingKeysIsNotAskedUnderAnAskRuleButASignatureIs() throws {
        let f = try SSHAgentFixture(pinentry: (confirm: "ERR 83886179 Operation cancelled <Pinentry>", pin: "ERR"))
        #expect(try f.fixture.run(["access", "default", "ask"], password: true).status == 0)
        let line = try f.fob(["ssh", "keygen", "k"]).stdoutText
        let listed = try f.fob(["ssh", "ls"])
        #expect(listed.status == 0 && listed.stdoutText.hasPrefix("k\tk\ted25519 256\tSHA256:"), "\(listed.stderrText)")
        let pub = try f.fob(["ssh", "pub", "k"])
        #expect(pub.status == 0 && pub.stdoutText == line, "\(pub.stderrText)")
        let allowed = try f.fob(["ssh", "allow", "k", "*.example.com"])
        #expect(allowed.status == 0, "\(allowed.stderrText)")
        #expect(try f.fob(["ssh", "ls"]).stdoutText.hasSuffix("\thosts: *.example.com\n"))
        let env = ["SSH_AUTH_SOCK": f.socket]
        #expect(try sshTool("ssh-add", ["-l"], environment: env).stdoutText.contains(" k (ED25519)"))
        #expect(try sshTool("ssh-add", ["-L"], environment: env).stdoutText == line)
        let log = f.home.url.path + "/pinentry.log"
        #expect(
            !FileManager.default.fileExists(atPath: log), "\((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")"
        )
        let pubFile = f.home.url.path + "/k.pub"
        try line.write(toFile: pubFile, atomically: true, encoding: .utf8)
        try "x".write(toFile: pubFile + ".data", atomically: true, encoding: .utf8)
        let signed = try sshTool(
            "ssh-keygen", ["-Y", "sign", "-f", pubFile, "-n", "file", pubFile + ".data"], environment: env)
        #expect(signed.status != 0)
        let asked = try String(contentsOfFile: log, encoding: .utf8)
        #expect(asked.components(separatedBy: "CONFIRM").count == 2)
    }

    @Test func sshAddStoresAKeyInTheVaultAndExportLeavesItOutUnlessAsked() throws {
        let f = try SSHAgentFixture()
        let path = f.home.url.path + "/id_added"
        try sshTool("ssh-keygen", ["-q", "-t", "ecdsa", "-b", "256", "-N", "", "-C", "added@test", "-f", path])
        let added = try sshTool("ssh-add", ["-c", path], environment: ["SSH_AUTH_SOCK": f.socket])
        #expect(added.status == 0, "\(added.stderrText)")
        let listed = try f.fob(["ssh", "ls"]).stdoutText
        #expect(listed.hasPrefix("added@test\tadded@test\tecdsa 256\tSHA256:"))
        var passwordEnvironment = f.fixture.environment
        passwordEnvironment["FOB_PASSWORD_FILE"] = f.fixture.vault.passwordFile
        let export = try FobProcess.run(["export"], environment: passwordEnvironment)
        #expect(!export.stdoutText.contains("added@test"))
        #expect(export.stderrText.contains("1 SSH keys left out"))
        let all = try FobProcess.run(["export", "--include-ssh-keys"], environment: passwordEnvironment)
        #expect(all.stdoutText.contains("added@test"))
    }

    @Test func anEncryptedFileIsImportedThroughSSHAddAndGitSignsCommitsWithAVaultKey() throws {
        let f = try SSHAgentFixture()
        let dir = f.home.url.path
        try sshTool("ssh-keygen", ["-q", "-t", "ed25519", "-N", "sesame", "-C", "enc@test", "-f", dir + "/enc"])
        try "#!/bin/sh\necho sesame\n".write(toFile: dir + "/askpass", atomically: true, encoding: .utf8)
        chmod(dir + "/askpass", 0o755)
        f.fixture.extraEnvironment["SSH_ASKPASS"] = dir + "/askpass"
        f.fixture.extraEnvironment["SSH_ASKPASS_REQUIRE"] = "force"
        f.fixture.extraEnvironment["DISPLAY"] = ":0"
        let imported = try f.fob(["ssh", "import", dir + "/enc"])
        #expect(imported.status == 0, "\(imported.stderrText)")
        #expect(try f.fob(["ssh", "ls"]).stdoutText.hasPrefix("enc@test\tenc@test\ted25519 256\tSHA256:"))
        let publicLine = try f.fob(["ssh", "pub", "enc@test"]).stdoutText
        #expect(publicLine.hasPrefix("ssh-ed25519 ") && publicLine.hasSuffix(" enc@test\n"))
        try ("git@test " + publicLine).write(toFile: dir + "/signers", atomically: true, encoding: .utf8)
        let git = [
            "HOME": dir, "GIT_CONFIG_NOSYSTEM": "1", "SSH_AUTH_SOCK": f.socket, "GIT_AUTHOR_NAME": "T",
            "GIT_AUTHOR_EMAIL": "git@test", "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "git@test",
        ]
        let repo = dir + "/repo"
        let config = [
            "-c", "gpg.format=ssh", "-c", "user.signingkey=key::\(publicLine.trimmingCharacters(in: .newlines))",
            "-c", "gpg.ssh.allowedSignersFile=\(dir)/signers",
        ]
        #expect(try sshTool("git", ["init", "-q", repo], environment: git).status == 0)
        let commit = try sshTool(
            "git", ["-C", repo] + config + ["commit", "-q", "-S", "--allow-empty", "-m", "signed"], environment: git)
        #expect(commit.status == 0, "\(commit.stderrText)")
        let verify = try sshTool("git", ["-C", repo] + config + ["verify-commit", "HEAD"], environment: git)
        #expect(verify.status == 0 && verify.stderrText.contains("Good \"git\" signature"), "\(verify.stderrText)")
    }
}

import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// What the built `fob` does with names, listings, files and messages that
/// review and black-box runs found wrong, each checked as a process.
@Suite struct DataHardeningTests {
    /// Runs `fob ARGS` through `/bin/sh` so that `printf` can put bytes
    /// that are not UTF-8 into argv (a `[String]` cannot hold them).
    /// - Parameters:
    ///   - script: shell words after `"$FOB"`, such as `save "$(printf 'x\377')" ana`.
    func shell(_ v: ProcessTestVault, _ script: String, input: String = "") throws -> ProcessResult {
        var environment = FobProcess.baseEnvironment.merging(v.environment) { $1 }
        environment["FOB"] = FobProcess.binaryURL.path
        return try ChildProcess.run(
            executable: "/bin/sh", arguments: ["-c", "exec \"$FOB\" " + script], environment: environment,
            stdin: Array(input.utf8))
    }

    /// Two names that differ only in bytes that are not UTF-8 (`x\xFF` and
    /// `x\xFE`) were both stored as `x\u{FFFD}`, so saving the second
    /// replaced the first's secret. Now each is refused with exit 2 and the
    /// vault is left as it was.
    @Test func namesThatAreNotUTF8AreRefusedAndNeverShareAnItem() throws {
        let v = try ProcessTestVault(password: "pw")
        let first = try shell(v, #"save "$(printf 'x\377')" ana"#, input: "first-secret")
        #expect(first.status == 2, "\(first.stderrText)")
        #expect(first.stderrText.contains("not UTF-8"), "\(first.stderrText)")
        #expect(first.stderrText.contains(#"x\xFF"#), "\(first.stderrText)")
        let second = try shell(v, #"save "$(printf 'x\376')" ana"#, input: "second-secret")
        #expect(second.status == 2, "\(second.stderrText)")
        let account = try shell(v, #"add mail "$(printf 'a\300b')""#, input: "s")
        #expect(account.status == 2, "\(account.stderrText)")
        #expect(try v.open().allItems().isEmpty)
        // A valid name beside it still works.
        #expect(try shell(v, #"save "$(printf 'x\303\277')" ana"#, input: "ok").status == 0)
        #expect(try v.run(["get", "x\u{FF}", "ana"]).stdoutText == "ok\n")
    }

    /// C1 control characters (U+0080–U+009F; U+009B is a one-byte CSI on
    /// some terminals) in a name are written escaped by `fob ls`, as in
    /// error messages, never raw.
    @Test func listEscapesC0AndC1ControlCharacters() throws {
        let v = try ProcessTestVault(password: "pw")
        #expect(try v.run(["add", "a\u{9B}31mred", "b\u{85}o\u{1B}"], input: "s").status == 0)
        let listing = try v.run(["ls"])
        #expect(listing.status == 0)
        #expect(!listing.stdoutText.unicodeScalars.contains { (0x80...0x9F).contains($0.value) })
        #expect(!listing.stdout.contains(0x1B))
        #expect(listing.stdoutText.contains(#"a\u{9B}31mred  b\u{85}o\u{1B}"#), "\(listing.stdoutText)")
    }

    /// A 64 KiB label made every line of `fob ls` 65,500 characters: each
    /// column is now at most 40 cells, a longer value cut with `…`, and the
    /// other rows keep their width.
    @Test func listCapsColumnWidthsAndCutsWithAnEllipsis() throws {
        let v = try ProcessTestVault(password: "pw")
        let label = String(repeating: "L", count: 65_536)
        let service = String(repeating: "密", count: 30)
        #expect(try v.run(["add", service, "ana", "--label", label], input: "s").status == 0)
        #expect(try v.run(["add", "mail", "bo"], input: "s").status == 0)
        let listing = try v.run(["ls"])
        #expect(listing.status == 0)
        let lines = listing.stdoutText.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        // 19 wide characters (38 cells) and the ellipsis: 39 cells, padded to 40 + 2.
        let cutService = String(repeating: "密", count: 19) + "…"
        #expect(lines.contains { $0.hasPrefix(cutService + "  ana") }, "\(lines)")
        #expect(lines.contains { $0.contains(String(repeating: "L", count: 39) + "…  ") }, "\(lines)")
        #expect(lines.allSatisfy { $0.count < 160 }, "\(lines.map(\.count))")
        #expect(lines.contains { $0.hasPrefix("mail" + String(repeating: " ", count: 39 - 4 + 2) + "bo") })
    }

    /// `fob run` of a file that is not executable exits 126 as the shell
    /// does (it said 127, "command not found"), a missing one 127, and the
    /// command sees itself run as typed (argv[0] was the full path).
    @Test func runExits126ForAFileThatIsNotExecutableAndKeepsArgv0() throws {
        let v = try ProcessTestVault(password: "pw")
        let script = v.directory.file("script.sh").path
        try Data("#!/bin/sh\necho ran\n".utf8).write(to: URL(fileURLWithPath: script))
        chmod(script, 0o644)
        let notExecutable = try v.run(["run", "--", script])
        #expect(notExecutable.status == 126, "\(notExecutable.stderrText)")
        #expect(!notExecutable.stdoutText.contains("ran"))
        let inPath = try v.run(["run", "--", "script.sh"], environment: ["PATH": v.directory.url.path])
        #expect(inPath.status == 126, "\(inPath.stderrText)")
        #expect(try v.run(["run", "--", v.directory.file("missing").path]).status == 127)
        #expect(try v.run(["run", "--", "no-such-command-here"]).status == 127)
        let argv0 = try v.run(["run", "--", "sh", "-c", #"tr '\0' ' ' < /proc/$$/cmdline"#])
        #expect(argv0.status == 0, "\(argv0.stderrText)")
        #expect(argv0.stdoutText.hasPrefix("sh -c "), "\(argv0.stdoutText)")
    }

    /// The `--env-file` example of docs/cli.md, exactly as printed there, gives
    /// the command both secrets (its `# comment` used to end up in the
    /// account: exit 44).
    @Test func theDocumentedEnvFileExampleRuns() throws {
        let v = try ProcessTestVault(password: "pw")
        #expect(try v.run(["add", "github.com", "ci"], input: "gh-token").status == 0)
        #expect(try v.run(["add", "api/v2", "svc/reader"], input: "api-key").status == 0)
        let page = try String(
            contentsOf: FobProcess.packageRoot.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let start = try #require(page.range(of: "The env file:\n\n```\n"))
        let end = try #require(page.range(of: "\n```", range: start.upperBound..<page.endIndex))
        let envFile = v.directory.file("env").path
        try Data((String(page[start.upperBound..<end.lowerBound]) + "\n").utf8).write(
            to: URL(fileURLWithPath: envFile))
        let run = try v.run([
            "run", "--env-file", envFile, "--", "sh", "-c", #"printf '%s|%s' "$GITHUB_TOKEN" "$API_KEY""#,
        ])
        #expect(run.status == 0, "\(run.stderrText)")
        #expect(run.stdoutText == "gh-token|api-key")
    }

    static let canMount = geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/bin/mount")

    /// A vault on a read-only file system (a mounted backup) could not even
    /// be listed ("cannot write the vault"): reading needs no write access,
    /// so ls, get and verify work, and a write says the vault is read-only.
    @Test(.enabled(if: canMount, "needs root to mount a tmpfs read-only"))
    func aVaultOnAReadOnlyFileSystemCanBeRead() throws {
        let directory = TemporaryDirectory()
        let mountPoint = directory.file("backup").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: false)
        let mount = { (arguments: [String]) throws -> ProcessResult in
            try ChildProcess.run(
                executable: "/bin/mount", arguments: arguments, environment: FobProcess.baseEnvironment)
        }
        let mounted = try mount(["-t", "tmpfs", "-o", "size=4m", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "\(mounted.stderrText)")
        defer { _ = try? ChildProcess.run(executable: "/bin/umount", arguments: [mountPoint], environment: [:]) }
        let v = try ProcessTestVault(password: "pw", create: false, directory: directory)
        let path = mountPoint + "/vault.db"
        do {
            let vault = try Vault.create(at: URL(fileURLWithPath: path), password: .text("pw"), kdf: .testing)
            try vault.add(Item(service: "mail", account: "ana", secret: .text("s3cret")))
        }
        #expect(try mount(["-o", "remount,ro", mountPoint]).status == 0)
        let env = ["FOB_VAULT": path]
        let list = try v.run(["ls"], environment: env)
        #expect(list.status == 0, "\(list.stderrText)")
        #expect(list.stdoutText.contains("mail     ana"), "\(list.stdoutText)")
        #expect(try v.run(["get", "mail", "ana"], environment: env).stdoutText == "s3cret\n")
        #expect(try v.run(["verify"], environment: env).status == 0)
        let add = try v.run(["add", "web", "bo"], input: "x", environment: env)
        #expect(add.status == 1)
        #expect(add.stderrText.contains("read-only"), "\(add.stderrText)")
    }

    /// A directory given as the vault is named as such.
    @Test func aDirectoryGivenAsTheVaultIsNamed() throws {
        let v = try ProcessTestVault(password: "pw")
        let result = try v.run(["ls"], environment: ["FOB_VAULT": v.directory.url.path])
        #expect(result.status == 1)
        #expect(result.stderrText.contains("is a directory, not a vault file"), "\(result.stderrText)")
    }
}

import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

// End-to-end tests of the `fob` binary: each runs `.build/debug/fob` as a
// child process (see FobProcess) against a vault in a temporary directory.

/// The result ended normally: no signal, no timeout, at most one line on stderr.
func expectClean(
    _ result: ProcessResult, _ comment: String = "", sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(
        result.signal == nil, "crashed with signal \(result.signal ?? 0) \(comment)", sourceLocation: sourceLocation)
    #expect(!result.timedOut, "timed out \(comment)", sourceLocation: sourceLocation)
    let lines = result.stderrText.split(separator: "\n")
    #expect(lines.count <= 1, "stderr: \(result.stderrText) \(comment)", sourceLocation: sourceLocation)
}

/// `secret` as `fob add` stores it without `--raw`: one trailing `\n` or `\r\n` dropped.
private func droppingNewline(_ secret: String) -> String {
    if secret.hasSuffix("\r\n") { return String(secret.dropLast(2)) }
    if secret.hasSuffix("\n") { return String(secret.dropLast(1)) }
    return secret
}

private let bullet = "•"

@Suite struct CLIProcessTests {
    @Test func versionAndHelpRun() throws {
        let version = try FobProcess.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdoutText.hasPrefix("fob "))
        let help = try FobProcess.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdoutText.contains("Commands:"))
    }

    @Test func aRoundTripThroughEveryCommand() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana", "--label", "Mail"], input: "pw1\n").status == 0)
        #expect(try v.run(["add", "mail", "ana"], input: "x").status == 45)
        #expect(try v.run(["save", "api", "ci", "--kind", "token"], input: "tok").status == 0)
        #expect(try v.run(["get", "mail", "ana"]).stdoutText == "pw1\n")
        #expect(try v.run(["update", "mail", "ana"], input: "pw2").status == 0)
        #expect(try v.run(["get", "mail", "ana", "--raw"]).stdoutText == "pw2")
        let list = try v.run(["ls", "--json"])
        #expect(list.status == 0)
        let items = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [[String: Any]])
        #expect(items.map { $0["service"] as? String } == ["api", "mail"])
        #expect(try v.run(["rm", "mail", "ana"]).status == 0)
        #expect(try v.run(["rm", "mail", "ana"]).status == 44)
        #expect(try v.run(["get", "mail", "ana"]).status == 44)
        let usage = try v.run(["get", "mail"])
        #expect(usage.status == 2)
        #expect(usage.stderrText.split(separator: "\n").count == 2)
        let missing = try FobProcess.run([
            "--vault", v.directory.file("none.db").path, "--password-file", v.passwordFile, "ls",
        ])
        #expect(missing.status == 50)
    }

    @Test(arguments: ["", "  pw  ", "l1\nl2\n", String(repeating: "0123456789", count: 400)])
    func secretsComeBackExactly(secret: String) throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "plain", "a"], input: secret).status == 0)
        #expect(try v.run(["add", "raw", "a", "--raw"], input: secret).status == 0)
        let stored = droppingNewline(secret)
        let plain = try v.run(["get", "plain", "a"])
        #expect(plain.status == 0)
        #expect(plain.stdoutText == stored + "\n")
        #expect(try v.run(["get", "plain", "a", "--raw"]).stdoutText == stored)
        #expect(try v.run(["get", "raw", "a", "--raw"]).stdoutText == secret)
        #expect(try v.run(["get", "raw", "a"]).stdoutText == secret + "\n")
        let json = try v.run(["get", "raw", "a", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
        #expect(object["secret"] as? String == secret)
    }
}

// MARK: - Masked prompts on a terminal

@Suite struct MaskedPromptProcessTests {
    /// The text after the last occurrence of `prompt` in the terminal output.
    private func after(_ prompt: String, in session: TerminalSession) -> String {
        let text = session.outputText
        guard let range = text.range(of: prompt, options: .backwards) else { return "" }
        return String(text[range.upperBound...])
    }

    /// Secrets must not reach a core file: `fob` sets RLIMIT_CORE to 0 (soft
    /// and hard) before it asks for anything.
    @Test func coreDumpsAreOffWhileFobRuns() throws {
        let v = try ProcessTestVault(password: "pw")
        let session = try FobProcess.startInTerminal(["--vault", v.path, "get", "mail", "ana"])
        #expect(session.waitFor("Master password: "))
        let limits = try String(contentsOfFile: "/proc/\(session.pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        let fields = core.map { $0.dropFirst("Max core file size".count).split(separator: " ") } ?? []
        #expect(fields.prefix(2) == ["0", "0"], "\(core ?? "no core limit line")")
        session.send([0x03])
        _ = session.wait()
    }

    @Test func masterPasswordPromptShowsOneBulletPerCharacter() throws {
        let v = try ProcessTestVault(password: "pÉ🔑")
        #expect(try v.run(["add", "mail", "ana"], input: "the secret").status == 0)
        let session = try FobProcess.startInTerminal(["--vault", v.path, "get", "mail", "ana"])
        #expect(session.waitFor("Master password: "))
        session.send("pÉ🔑x")
        #expect(session.waitFor("Master password: " + String(repeating: bullet, count: 4)))
        #expect(after("Master password: ", in: session) == String(repeating: bullet, count: 4))
        session.send([0x7F])
        #expect(session.waitFor(String(repeating: bullet, count: 4) + "\u{8} \u{8}"))
        session.send([0x0D])
        #expect(session.wait() == 0)
        #expect(session.outputText.contains("the secret\r\n"))
        #expect(!session.outputText.contains("pÉ"))
        #expect(!session.outputText.contains("🔑"))
    }

    @Test func backspaceOfAMultibyteCharacterAndCtrlU() throws {
        let v = try ProcessTestVault(password: "ok")
        #expect(try v.run(["add", "mail", "ana"], input: "s").status == 0)
        let session = try FobProcess.startInTerminal(["--vault", v.path, "get", "mail", "ana"])
        #expect(session.waitFor("Master password: "))
        // "o🔑" then Backspace removes the whole 4-byte key, then "k": "ok".
        session.send("o🔑")
        #expect(session.waitFor(bullet + bullet))
        session.send([0x7F])
        #expect(session.waitFor("\u{8} \u{8}"))
        session.send("k")
        session.send([0x0D])
        #expect(session.wait() == 0)
        #expect(session.outputText.contains("s\r\n"))

        let second = try FobProcess.startInTerminal(["--vault", v.path, "get", "mail", "ana"])
        #expect(second.waitFor("Master password: "))
        second.send("wrong")
        #expect(second.waitFor(String(repeating: bullet, count: 5)))
        second.send([0x15])
        #expect(second.waitFor(String(repeating: "\u{8} \u{8}", count: 5)))
        second.send("ok\r")
        #expect(second.wait() == 0)
    }

    @Test func nfdTypedPasswordUnlocksAnNFCVault() throws {
        let v = try ProcessTestVault(password: "\u{C9}t\u{E9}")
        #expect(try v.run(["add", "mail", "ana"], input: "s").status == 0)
        let session = try FobProcess.startInTerminal(
            ["--vault", v.path, "get", "mail", "ana"], environment: ["LANG": "C"])
        #expect(session.waitFor("Master password: "))
        session.send("E\u{301}te\u{301}\r")
        #expect(session.wait() == 0)
        #expect(session.outputText.contains("s\r\n"))
    }

    @Test func wrongTypedPasswordExits51() throws {
        let v = try ProcessTestVault(password: "right")
        let session = try FobProcess.startInTerminal(["--vault", v.path, "ls"])
        #expect(session.waitFor("Master password: "))
        session.send("wrong\r")
        #expect(session.wait() == 51)
        #expect(session.outputText.contains("wrong master password"))
    }

    @Test func ctrlCAbortsAndRestoresTheTerminal() throws {
        let v = try ProcessTestVault()
        let command = "'\(FobProcess.binaryURL.path)' --vault '\(v.path)' get mail ana; echo \"status=$?\"; stty -a"
        let session = try TerminalSession(
            executable: "/bin/sh", arguments: ["-c", command],
            environment: FobProcess.baseEnvironment.merging(["TERM": "xterm"]) { $1 })
        #expect(session.waitFor("Master password: "))
        #expect(session.localFlags & UInt32(ECHO) == 0)
        session.send("abc")
        #expect(session.waitFor(String(repeating: bullet, count: 3)))
        session.send([0x03])
        #expect(session.wait() == 0)
        let text = session.outputText
        #expect(text.contains("status=130"))
        #expect(text.contains("interrupted"))
        let words = Set(
            text.split(whereSeparator: { $0 == " " || $0 == ";" || $0 == "\n" || $0 == "\r" }).map(String.init))
        #expect(words.contains("echo"))
        #expect(words.contains("icanon"))
        #expect(!words.contains("-echo"))
        #expect(!words.contains("-icanon"))
    }

    @Test func sigtermDuringThePromptRestoresTheTerminal() throws {
        let v = try ProcessTestVault()
        let session = try FobProcess.startInTerminal(["--vault", v.path, "ls"])
        #expect(session.waitFor("Master password: "))
        #expect(session.localFlags & UInt32(ECHO | ICANON) == 0)
        kill(session.pid, SIGTERM)
        #expect(session.wait() == 128 + SIGTERM)
        #expect(session.localFlags & UInt32(ECHO) != 0)
        #expect(session.localFlags & UInt32(ICANON) != 0)
    }

    @Test func initAsksTwiceAndAddAsksForTheSecret() throws {
        let v = try ProcessTestVault(create: false)
        let session = try FobProcess.startInTerminal(["--vault", v.path, "init", "--kdf", "interactive"])
        #expect(session.waitFor("New master password: "))
        session.send("Éç🔑 pass\r")
        #expect(session.waitFor("Confirm: "))
        session.send("Éç🔑 pass\r")
        #expect(session.wait(timeout: 60) == 0)
        #expect(session.outputText.contains("Created the vault"))

        let passwordFile = v.directory.file("typed-password").path
        try Data("Éç🔑 pass\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        let add = try FobProcess.startInTerminal([
            "--vault", v.path, "--password-file", passwordFile, "add", "mail", "ana",
        ])
        #expect(add.waitFor("Secret for service \"mail\", account \"ana\": "))
        add.send("typed secret\r")
        #expect(add.waitFor("Retype the secret: "))
        add.send("typed secret\r")
        #expect(add.wait(timeout: 60) == 0)
        #expect(!add.outputText.contains("typed secret"))
        let got = try FobProcess.run(
            ["--vault", v.path, "--password-file", passwordFile, "get", "mail", "ana"],
            environment: ["LANG": "C"])
        #expect(got.stdoutText == "typed secret\n")
    }

    @Test func noTerminalExits36AtOnceEvenWithStdinOpen() throws {
        let v = try ProcessTestVault()
        let started = Date()
        let child = try FobProcess.start(["--vault", v.path, "get", "mail", "ana"], holdStdinOpen: true)
        let result = child.wait(timeout: 20)
        child.closeStdin()
        #expect(!result.timedOut)
        #expect(result.status == 36)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(result.stderrText.contains("errSecInteractionNotAllowed"))
        let initResult = try FobProcess.run(["--vault", v.directory.file("new.db").path, "init"], timeout: 20)
        #expect(initResult.status == 36)
        #expect(!FileManager.default.fileExists(atPath: v.directory.file("new.db").path))
    }
}

// MARK: - Master passwords

@Suite struct MasterPasswordProcessTests {
    static let passwords: [String] = [
        "x",
        String((0..<1024).map { i in Character(Unicode.Scalar(UInt8(0x21 + i % 94))) }),
        String(repeating: "aÉç🔑", count: 1024),
        "É", "ç", "🔑", "Éç🔑 with spaces ",
    ]

    @Test(arguments: passwords)
    func setThenUnlockAlsoUnderLangC(password: String) throws {
        let v = try ProcessTestVault(password: "start")
        #expect(try v.run(["add", "mail", "ana"], input: "s").status == 0)
        let newFile = v.directory.file("new-password").path
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: newFile))
        let changed = try v.run(["passwd", "--new-password-file", newFile])
        #expect(changed.status == 0, "\(changed.stderrText)")
        for lang in ["C.UTF-8", "C", "POSIX"] {
            let got = try FobProcess.run(
                ["--vault", v.path, "--password-file", newFile, "get", "mail", "ana"],
                environment: ["LANG": lang, "LC_ALL": lang])
            #expect(got.status == 0, "LANG=\(lang): \(got.stderrText)")
            #expect(got.stdoutText == "s\n")
        }
        let decomposed = password.decomposedStringWithCanonicalMapping
        if decomposed.utf8.count != password.utf8.count {
            let nfdFile = v.directory.file("nfd").path
            try Data((decomposed + "\n").utf8).write(to: URL(fileURLWithPath: nfdFile))
            let got = try FobProcess.run(
                ["--vault", v.path, "--password-file", nfdFile, "get", "mail", "ana"], environment: ["LANG": "C"])
            #expect(got.status == 0)
        }
        #expect(try v.run(["get", "mail", "ana"]).status == 51)
    }

    @Test func initWithAUnicodePasswordUnlocksUnderLangC() throws {
        let v = try ProcessTestVault(password: "Éç🔑", create: false)
        let created = try v.run(["init", "--kdf", "interactive"])
        #expect(created.status == 0, "\(created.stderrText)")
        #expect(try v.run(["add", "k", "a"], input: "v", environment: ["LANG": "C"]).status == 0)
        #expect(try v.run(["get", "k", "a"], environment: ["LANG": "C", "LC_ALL": "C"]).stdoutText == "v\n")
        let nfd = v.directory.file("nfd").path
        try Data("E\u{301}c\u{327}🔑\n".utf8).write(to: URL(fileURLWithPath: nfd))
        #expect(try FobProcess.run(["--vault", v.path, "--password-file", nfd, "get", "k", "a"]).stdoutText == "v\n")
    }

    @Test func aPasswordOverTheLimitIsRefusedNamingIt() throws {
        let v = try ProcessTestVault()
        let tooLong = v.directory.file("too-long").path
        try Data((String(repeating: "a", count: Vault.maxPasswordBytes + 1) + "\n").utf8).write(
            to: URL(fileURLWithPath: tooLong))
        let changed = try v.run(["passwd", "--new-password-file", tooLong])
        #expect(changed.status == 2)
        #expect(changed.stderrText.contains("longer than \(Vault.maxPasswordBytes) bytes"))
        #expect(try v.run(["ls"]).status == 0)
        let other = try ProcessTestVault(create: false)
        let created = try FobProcess.run(["--vault", other.path, "--password-file", tooLong, "init"])
        #expect(created.status == 2)
        #expect(created.stderrText.contains("\(Vault.maxPasswordBytes)"))
        #expect(!FileManager.default.fileExists(atPath: other.path))
    }

    @Test func wrongPasswordExits51AndChangesNothing() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "pw").status == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: v.path))
        let wrong = v.directory.file("wrong").path
        try Data("correct horsE\n".utf8).write(to: URL(fileURLWithPath: wrong))
        for arguments in [
            ["get", "mail", "ana"], ["add", "x", "y"], ["save", "mail", "ana"], ["update", "mail", "ana"],
            ["rm", "mail", "ana"], ["ls"], ["passwd", "--new-password-file", wrong],
        ] {
            let result = try v.run(arguments, input: "changed", environment: ["FOB_PASSWORD_FILE": wrong])
            #expect(result.status == 51, "\(arguments)")
            #expect(result.stdout.isEmpty)
            expectClean(result)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.path)) == before)
        #expect(try v.run(["get", "mail", "ana"]).stdoutText == "pw\n")
    }
}

// MARK: - Secrets stay secret

@Suite struct SecretExposureProcessTests {
    @Test func theVaultFilesHoldNoNamesOrSecretsInClear() throws {
        let v = try ProcessTestVault(password: "PasswordMarker-314")
        let markers = [
            "ServiceMarker-271", "AccountMarker-161", "LabelMarker-141", "SecretMarker-173", "CommentMarker-577",
        ]
        // Keep a connection open so the WAL stays on disk and is checked too.
        let holder = try v.open()
        #expect(
            try v.run(
                ["add", markers[0], markers[1], "--label", markers[2], "--comment", markers[4]], input: markers[3]
            ).status == 0)
        #expect(
            try v.run(["save", markers[0], "second-" + markers[1], "--kind", "token"], input: markers[3] + "-2").status
                == 0)
        #expect(try v.run(["passwd", "--new-password-file", v.passwordFile]).status == 0)
        let bytes = VaultFile.allBytes(v.path)
        #expect(bytes.count > 4096)
        for marker in markers + [v.password, "second-"] {
            #expect(VaultFile.firstIndex(of: Array(marker.utf8), in: bytes) == nil, "\(marker) in the vault files")
            let utf16 = marker.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
            #expect(VaultFile.firstIndex(of: utf16, in: bytes) == nil)
        }
        _ = holder
    }

    /// Every process's argv and environment, as bytes.
    private static func processTexts() -> [(pid: String, bytes: [UInt8])] {
        let pids =
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.filter { $0.allSatisfy(\.isNumber) } ?? []
        var texts: [(String, [UInt8])] = []
        for pid in pids {
            for file in ["cmdline", "environ"] {
                if let data = FileManager.default.contents(atPath: "/proc/\(pid)/\(file)") {
                    texts.append((pid, [UInt8](data)))
                }
            }
        }
        return texts
    }

    private static func pidsExposing(_ needles: [String]) -> Set<String> {
        var found: Set<String> = []
        for (pid, bytes) in processTexts() {
            for needle in needles where VaultFile.firstIndex(of: Array(needle.utf8), in: bytes) != nil {
                found.insert(pid)
            }
        }
        return found
    }

    @Test func theScannerSeesWhatIsInArgvAndEnvironment() throws {
        let marker = "ScannerCheck-\(UUID().uuidString)"
        let child = try ChildProcess(
            executable: "/bin/sleep", arguments: ["30"],
            environment: ["MARK": marker])
        defer {
            child.send(signal: SIGKILL)
            _ = child.wait()
        }
        var seen = false
        for _ in 0..<100 where !seen {
            seen = Self.pidsExposing([marker]).contains(String(child.pid))
            if !seen { usleep(20_000) }
        }
        #expect(seen)
    }

    @Test func secretsNeverAppearInAnyArgvOrEnvironment() throws {
        let password = "MasterMarker-\(UUID().uuidString.prefix(8))"
        let secret = "ItemSecretMarker-\(UUID().uuidString.prefix(8))"
        let v = try ProcessTestVault(password: password)
        let needles = [password, secret]
        // A writer blocked reading its secret from standard input: look at every process meanwhile.
        let child = try FobProcess.start(
            ["add", "mail", "ana"], environment: v.environment,
            stdin: Array(secret.utf8), holdStdinOpen: true)
        var exposures: Set<String> = []
        for _ in 0..<20 {
            exposures.formUnion(Self.pidsExposing(needles))
            usleep(10_000)
        }
        // The scan did see the writer itself (its argv and environment were readable).
        let argv = FileManager.default.contents(atPath: "/proc/\(child.pid)/cmdline").map { [UInt8]($0) } ?? []
        let environ = FileManager.default.contents(atPath: "/proc/\(child.pid)/environ").map { [UInt8]($0) } ?? []
        #expect(VaultFile.firstIndex(of: Array("add\0mail\0ana".utf8), in: argv) != nil)
        #expect(VaultFile.firstIndex(of: Array("FOB_VAULT=".utf8), in: environ) != nil)
        child.closeStdin()
        #expect(child.wait().status == 0)
        // And while other commands run, scan continuously.
        let scanning = Locked(true)
        let found = Locked<Set<String>>([])
        let scanner = Thread {
            while scanning.value {
                let pids = Self.pidsExposing(needles)
                found.mutate { $0.formUnion(pids) }
            }
        }
        scanner.start()
        for arguments in [
            ["get", "mail", "ana"], ["get", "mail", "ana", "--json"], ["ls"], ["update", "mail", "ana"],
        ] {
            #expect(try v.run(arguments, input: secret).status == 0)
        }
        let stdinPassword = try FobProcess.run(
            ["--vault", v.path, "--password-file", "-", "save", "web", "zoe"],
            input: password + "\n" + secret)
        #expect(stdinPassword.status == 0)
        scanning.mutate { $0 = false }
        while !scanner.isFinished { usleep(1000) }
        exposures.formUnion(found.value)
        #expect(exposures.isEmpty, "secret seen in /proc of \(exposures)")
    }
}

/// A value shared between threads.
final class Locked<Value>: @unchecked Sendable {
    private var stored: Value
    private let lock = NSLock()
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

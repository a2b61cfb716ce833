import FobTestSupport
import Foundation
import Testing

/// `fob completion bash|zsh|fish` run by the real shells.
@Suite struct CompletionTests {
    static func script(_ shell: String) throws -> String {
        let r = try FobProcess.run(["completion", shell])
        #expect(r.status == 0)
        return r.stdoutText
    }

    /// A stand-in `fob` on `PATH` for the names source (`fob __complete`):
    /// what an agent holding the vault unlocked would answer.
    static func namesStub() throws -> TemporaryDirectory {
        let dir = TemporaryDirectory(prefix: "fob-complete")
        let stub = """
            #!/bin/sh
            case "$*" in
              *"__complete services") printf 'mail\\0music\\0work\\0' ;;
              *"__complete accounts mail") printf 'ana\\0bob\\0' ;;
            esac
            """
        try Data(stub.utf8).write(to: dir.file("fob"))
        chmod(dir.file("fob").path, 0o755)
        return dir
    }

    /// What bash's `_fob` puts in COMPREPLY for these words (the last is the one completed).
    static func bashComplete(_ words: [String], stub: TemporaryDirectory) throws -> [String] {
        let scriptPath = stub.file("fob.bash").path
        try Data(try script("bash").utf8).write(to: URL(fileURLWithPath: scriptPath))
        let quoted = words.map { "'" + $0 + "'" }.joined(separator: " ")
        let program =
            "source '\(scriptPath)'; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _fob; printf '%s\\n' \"${COMPREPLY[@]}\""
        let r = try ChildProcess.run(
            executable: "/bin/bash", arguments: ["--norc", "-c", program],
            environment: ["PATH": stub.url.path + ":/usr/bin:/bin", "LANG": "C.UTF-8"])
        #expect(r.status == 0, "\(r.stderrText)")
        return r.stdoutText.split(separator: "\n").map(String.init)
    }

    @Test func bashCompletesCommandsOptionsValuesAndNames() throws {
        let stub = try Self.namesStub()
        let g = try Self.bashComplete(["fob", "g"], stub: stub)
        #expect(g.contains("get"))
        #expect(g.allSatisfy { $0.hasPrefix("g") })
        #expect(try Self.bashComplete(["fob", "get", "m"], stub: stub) == ["mail", "music"])
        #expect(
            try Self.bashComplete(["fob", "--vault", "/tmp/v.db", "get", "mail", ""], stub: stub) == ["ana", "bob"])
        #expect(
            try Self.bashComplete(["fob", "init", "--kdf", ""], stub: stub) == ["interactive", "moderate", "sensitive"])
        #expect(try Self.bashComplete(["fob", "--clipboard", "x"], stub: stub) == ["xclip", "xsel"])
        #expect(
            try Self.bashComplete(["fob", "add", "s", "a", "--kind", ""], stub: stub) == [
                "password", "token", "oauth", "note",
            ])
        #expect(try Self.bashComplete(["fob", "get", "--r"], stub: stub) == ["--raw"])
        #expect(try Self.bashComplete(["fob", "completion", ""], stub: stub) == ["bash", "zsh", "fish"])
        #expect(try Self.bashComplete(["fob", "oauth", "l"], stub: stub) == ["login"])
        // A value of a global option is not taken for the command.
        #expect(try Self.bashComplete(["fob", "--vault", "get", "g"], stub: stub).contains("get"))
    }

    @Test func zshAndFishScriptsPassTheirSyntaxChecks() throws {
        let dir = TemporaryDirectory(prefix: "fob-complete")
        try Data(try Self.script("zsh").utf8).write(to: dir.file("_fob"))
        try Data(try Self.script("fish").utf8).write(to: dir.file("fob.fish"))
        let zsh = try ChildProcess.run(
            executable: "/usr/bin/zsh", arguments: ["-n", dir.file("_fob").path],
            environment: FobProcess.baseEnvironment)
        #expect(zsh.status == 0, "\(zsh.stderrText)")
        let fish = try ChildProcess.run(
            executable: "/usr/bin/fish", arguments: ["--no-execute", dir.file("fob.fish").path],
            environment: FobProcess.baseEnvironment.merging(["HOME": dir.url.path]) { $1 })
        #expect(fish.status == 0, "\(fish.stderrText)")
        let bash = try ChildProcess.run(
            executable: "/bin/bash", arguments: ["-n", "-c", try Self.script("bash")],
            environment: FobProcess.baseEnvironment)
        #expect(bash.status == 0, "\(bash.stderrText)")
    }

    @Test func fishCompletesFromTheSameTable() throws {
        let stub = try Self.namesStub()
        try Data(try Self.script("fish").utf8).write(to: stub.file("fob.fish"))
        let program = "source \(stub.file("fob.fish").path); complete -C 'fob ge'; complete -C 'fob get mail '"
        let r = try ChildProcess.run(
            executable: "/usr/bin/fish", arguments: ["--no-config", "-c", program],
            environment: ["PATH": stub.url.path + ":/usr/bin:/bin", "HOME": stub.url.path, "LANG": "C.UTF-8"])
        #expect(r.stdoutText.contains("get\t"))
        #expect(r.stdoutText.contains("ana\n"))
    }

    @Test func everyCommandAndOptionIsInEveryScript() throws {
        let help = try FobProcess.run(["--help"]).stdoutText
        let commands = help.split(separator: "\n").drop { $0 != "Commands:" }.dropFirst()
            .prefix { $0.hasPrefix("  ") }.filter { !$0.hasPrefix("   ") } // not a wrapped summary's continuation
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(commands.contains("run"))
        #expect(commands.contains("docker-credential"))
        #expect(!commands.contains("else"))
        for shell in ["bash", "zsh", "fish"] {
            let text = try Self.script(shell)
            for command in commands {
                #expect(text.contains(command), "\(shell): \(command)")
                let usage = try FobProcess.run([command, "--help"]).stdoutText
                for option in usage.split(whereSeparator: { $0 == " " || $0 == "\n" }).filter({ $0.hasPrefix("[--") }) {
                    let name = option.dropFirst().prefix { $0 != " " && $0 != "]" }
                    #expect(
                        text.contains(shell == "fish" ? "-l \(name.dropFirst(2))" : String(name)),
                        "\(shell): \(command) \(name)")
                }
            }
        }
    }

    @Test func theNamesCommandNeverPromptsAndOffersNothingWithoutAnUnlockedSource() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "secret").status == 0)
        for arguments in [["__complete", "services"], ["__complete", "accounts", "mail"]] {
            let r = try v.run(arguments, timeout: 10)
            #expect(r.status == 0)
            #expect(r.stdout.isEmpty)
            #expect(r.stderr.isEmpty)
        }
        // On a terminal too: no prompt.
        let session = try FobProcess.startInTerminal(["--vault", v.path, "__complete", "services"])
        #expect(session.wait(timeout: 10) == 0)
        #expect(!session.outputText.contains("password"))
        // Hidden from fob --help.
        #expect(!(try FobProcess.run(["--help"]).stdoutText.contains("__complete")))
    }
}

/// Item names reach every shell as data: a name holding `$(…)`, backquotes,
/// `;`, `*`, spaces, a newline or quotes is offered as it is and never run.
@Suite struct CompletionNamesAreDataTests {
    /// A stand-in `fob` printing hostile names (NUL-terminated, as `fob __complete` does);
    /// each would create a file in `marks` if a shell ran it.
    static func hostileStub() throws -> (TemporaryDirectory, [String]) {
        let dir = TemporaryDirectory(prefix: "fob-complete")
        let marks = dir.url.path
        let names = [
            "$(touch \(marks)/ran1)", "b`touch \(marks)/ran2`", "c;touch \(marks)/ran3", "d*", "e with space",
            "f\nline", "g'quote\"d", "$(touch \(marks)/ran4)x",
        ]
        let nameData = names.map { $0 + "\u{0}" }.joined()
        try Data(nameData.utf8).write(to: dir.file("names"))
        let stub = """
            #!/bin/sh
            case "$*" in
              *"__complete services") cat '\(dir.file("names").path)' ;;
              *"__complete accounts"*) cat '\(dir.file("names").path)' ;;
            esac
            """
        try Data(stub.utf8).write(to: dir.file("fob"))
        chmod(dir.file("fob").path, 0o755)
        return (dir, names)
    }

    static func noneRan(_ dir: TemporaryDirectory) -> Bool {
        (1...4).allSatisfy { !FileManager.default.fileExists(atPath: dir.file("ran\($0)").path) }
    }

    /// Splits NUL-terminated output.
    static func split0(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    @Test func bashQuotesEveryNameAndRunsNone() throws {
        let (dir, names) = try Self.hostileStub()
        try Data(try CompletionTests.script("bash").utf8).write(to: dir.file("fob.bash"))
        for words in ["fob get ''", "fob get mail ''"] {
            // Each reply, read back by bash as a word, must be the name itself.
            let program = """
                source '\(dir.file("fob.bash").path)'; COMP_WORDS=(\(words)); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
                _fob; for r in "${COMPREPLY[@]}"; do eval "v=$r"; printf '%s\\0' "$v"; done
                """
            let r = try ChildProcess.run(
                executable: "/bin/bash", arguments: ["--norc", "-c", program],
                environment: ["PATH": dir.url.path + ":/usr/bin:/bin", "LANG": "C.UTF-8"])
            #expect(r.status == 0, "\(r.stderrText)")
            #expect(Set(Self.split0(r.stdout)) == Set(names), "\(words)")
        }
        // A prefix still narrows the replies.
        let narrowed = try ChildProcess.run(
            executable: "/bin/bash",
            arguments: [
                "--norc", "-c",
                "source '\(dir.file("fob.bash").path)'; COMP_WORDS=(fob get e); COMP_CWORD=2; _fob; printf '%s\\n' \"${COMPREPLY[@]}\"",
            ],
            environment: ["PATH": dir.url.path + ":/usr/bin:/bin", "LANG": "C.UTF-8"])
        #expect(narrowed.stdoutText == "e\\ with\\ space\n")
        #expect(Self.noneRan(dir))
    }

    @Test func zshAddsEveryNameAsOneCandidateAndRunsNone() throws {
        let (dir, names) = try Self.hostileStub()
        try Data(try CompletionTests.script("zsh").utf8).write(to: dir.file("_fob"))
        for words in ["(fob get '')", "(fob get mail '')"] {
            // compadd stands in for the completion system: it prints what it is given.
            let program = """
                compdef() { :; }; compadd() { shift; printf '%s\\0' "$@"; }
                source '\(dir.file("_fob").path)'; words=\(words); CURRENT=${#words}; _fob
                """
            let r = try ChildProcess.run(
                executable: "/usr/bin/zsh", arguments: ["-f", "-c", program],
                environment: ["PATH": dir.url.path + ":/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": dir.url.path])
            #expect(r.status == 0, "\(r.stderrText)")
            #expect(Set(Self.split0(r.stdout)) == Set(names), "\(words)")
        }
        #expect(Self.noneRan(dir))
    }

    @Test func fishOffersEveryNameAndRunsNone() throws {
        let (dir, names) = try Self.hostileStub()
        try Data(try CompletionTests.script("fish").utf8).write(to: dir.file("fob.fish"))
        let program = """
            source \(dir.file("fob.fish").path)
            complete -C 'fob get ' | string join0
            complete -C 'fob get mail ' | string join0
            """
        let r = try ChildProcess.run(
            executable: "/usr/bin/fish", arguments: ["--no-config", "-c", program],
            environment: ["PATH": dir.url.path + ":/usr/bin:/bin", "HOME": dir.url.path, "LANG": "C.UTF-8"])
        #expect(r.status == 0, "\(r.stderrText)")
        let offered = Self.split0(r.stdout)
        for name in names where !name.contains("\n") {
            #expect(offered.filter { $0 == name }.count == 2, "\(name): \(offered)")
        }
        #expect(Self.noneRan(dir))
    }
}

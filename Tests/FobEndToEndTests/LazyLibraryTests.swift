import FobTestSupport
import Foundation
import Testing

/// SQLite, Nettle and ncurses are loaded at their first use (CLoader), not at
/// start: `ldd` does not list them, `fob --version` and `fob get` through the
/// agent never load them, and a command that opens the vault file does. The
/// loader says which files it maps with `LD_DEBUG=files` (on standard error).
@Suite(.serialized) struct LazyLibraryTests {
    private static let lazy = ["libsqlite3.so", "libnettle.so", "libncursesw.so", "libtinfo.so"]

    private func loaded(_ result: ProcessResult) -> [String] {
        Self.lazy.filter { result.stderrText.contains("file=\($0)") }
    }

    @Test func fobLinksNone() throws {
        let libraries = try ChildProcess.run(
            executable: "/usr/bin/ldd", arguments: [FobProcess.binaryURL.path],
            environment: FobProcess.baseEnvironment
        ).stdoutText
        #expect(Self.lazy.allSatisfy { !libraries.contains($0) }, "\(libraries)")
    }

    @Test func versionLoadsNone() throws {
        let result = try FobProcess.run(["--version"], environment: ["LD_DEBUG": "files"])
        #expect(result.status == 0)
        #expect(result.stderrText.contains("file=libc.so.6"), "LD_DEBUG=files said nothing: \(result.stderrText)")
        #expect(loaded(result).isEmpty)
    }

    @Test func getThroughTheAgentLoadsNoneAndTheVaultLoadsSQLite() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        f.extraEnvironment = ["LD_DEBUG": "files"]
        let get = try f.run(["get", "mail", "ana"])
        #expect(get.stdoutText == "pw1\n")
        #expect(loaded(get).isEmpty)
        let direct = try f.run(["--no-agent", "get", "mail", "ana"], password: true)
        #expect(direct.stdoutText == "pw1\n")
        #expect(loaded(direct) == ["libsqlite3.so"])
    }

    /// A library that cannot be loaded ends the command with one line naming it.
    @Test func aLibraryThatCannotLoadIsNamed() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        let broken = TemporaryDirectory(prefix: "fob-libraries")
        #expect(
            FileManager.default.createFile(
                atPath: broken.url.appendingPathComponent("libsqlite3.so.0").path, contents: Data()))
        f.extraEnvironment = ["LD_LIBRARY_PATH": broken.url.path]
        let result = try f.run(["--no-agent", "get", "mail", "ana"], password: true)
        #expect(result.status == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText.hasPrefix("fob: cannot load libsqlite3.so.0: "), "\(result.stderrText)")
        #expect(result.stderrText.split(separator: "\n").count == 1)
    }
}

/// `fob --version` alone answers before the command line is parsed, as the
/// parser would.
@Suite struct VersionShortcutTests {
    @Test func versionAloneAnswersAsTheParserDoes() throws {
        let alone = try FobProcess.run(["--version"])
        let parsed = try FobProcess.run(["--no-agent", "--version"])
        #expect(alone.status == 0 && parsed.status == 0)
        #expect(alone.stdoutText == parsed.stdoutText)
        #expect(alone.stdoutText.hasPrefix("fob ") && alone.stderrText.isEmpty)
    }
}

import FobCLI
import FobStore
import FobTestSupport
import Foundation

/// A terminal that answers masked prompts from a script and records the prompts.
final class ScriptedTerminal: SecretPrompter {
    private var answers: [Result<String, PromptError>]
    private(set) var prompts: [String] = []

    init(_ answers: [Result<String, PromptError>]) { self.answers = answers }

    convenience init(answers: String...) { self.init(answers.map { .success($0) }) }

    func readSecret(prompt: String, maxBytes: Int) throws(PromptError) -> SecretBytes {
        prompts.append(prompt)
        guard !answers.isEmpty else { throw .interrupted }
        switch answers.removeFirst() {
        case .success(let text):
            guard text.utf8.count <= maxBytes else { throw .tooLong(maxBytes: maxBytes) }
            return SecretBytes(utf8: text)
        case .failure(let error):
            throw error
        }
    }
}

/// The result of one in-process `fob` run.
struct CLIRun {
    var status: Int32
    var stdout: [UInt8]
    var stderr: String
    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// The lines of standard error.
    var stderrLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
}

/// A temporary vault (testing KDF, password "correct horse") and a password
/// file, and a way to run `fob` against them in process.
struct CLIHarness {
    static let password = "correct horse"
    let directory = TemporaryDirectory(prefix: "fob-cli")
    var vaultPath: String { directory.file("vault.db").path }
    var passwordFile: String { directory.file("password").path }

    /// - Parameter createVault: whether to create the vault now.
    init(createVault: Bool = true) throws {
        try Data((CLIHarness.password + "\n").utf8).write(to: directory.file("password"))
        if createVault {
            _ = try Vault.create(at: directory.file("vault.db"), password: .text(CLIHarness.password), kdf: .testing)
        }
    }

    /// Writes `text` to a file in the directory and returns its path.
    func file(_ name: String, _ text: String) throws -> String {
        try Data(text.utf8).write(to: directory.file(name))
        return directory.file(name).path
    }

    /// Runs `fob` in process. Unless `plain`, `--vault` and `--password-file`
    /// are put first.
    func run(
        _ arguments: [String], stdin: [UInt8] = [], environment: [String: String] = [:],
        terminal: any SecretPrompter = NoTerminal(), stdinIsTerminal: Bool = false,
        plain: Bool = false, kdf: @escaping @Sendable (KDFParameters.Preset) -> KDFParameters = { _ in .testing },
        clock: any WallClock = LiveClock()
    ) -> CLIRun {
        let out = BufferSink()
        let err = BufferSink()
        let prefix = plain ? [] : ["--vault", vaultPath, "--password-file", passwordFile]
        let context = CLIContext(
            arguments: prefix + arguments, environment: environment,
            standardInput: BufferSource(stdin), standardOutput: out, standardError: err,
            standardInputIsTerminal: stdinIsTerminal, terminal: terminal, kdfParameters: kdf, clock: clock)
        let status = FobCLI.run(context)
        return CLIRun(status: status, stdout: out.bytes, stderr: err.text)
    }

    func run(
        _ arguments: [String], input: String, environment: [String: String] = [:], plain: Bool = false,
        clock: any WallClock = LiveClock()
    ) -> CLIRun {
        run(arguments, stdin: Array(input.utf8), environment: environment, plain: plain, clock: clock)
    }

    /// Opens the vault directly and unlocks it.
    func openVault(password: String = CLIHarness.password) throws -> Vault {
        let vault = try Vault(url: directory.file("vault.db"))
        try vault.unlock(password: .text(password))
        return vault
    }

    /// The stored secret of an item, as bytes.
    func secret(_ service: String, _ account: String) throws -> [UInt8] {
        try openVault().item(service: service, account: account).secret!.unsafeArray
    }
}

/// A registered command's names as plain values (so test macros never see
/// an existential metatype).
struct CommandInfo {
    var name: String
    var summary: String
    var options: [OptionSpec]
    var usageLines: [String]

    static var all: [CommandInfo] {
        FobCLI.commands.map {
            CommandInfo(name: $0.name, summary: $0.summary, options: $0.options, usageLines: $0.usageLines)
        }
    }
}

import FobAgent
import FobStore
import FobSystem
import FoundationEssentials

/// One `fob` subcommand.
///
/// To add a command: write a type conforming to `FobCommand` in its own
/// file under `Sources/FobCLI/Commands/`, and add one line naming it to
/// ``FobCLI/commands`` in `CommandRegistry.swift`. Then describe it in
/// `Assets/fob.1` (a test fails when `fob --help` names a command, or a
/// command has an option, that the man page lacks).
///
/// ```swift
/// enum PingCommand: FobCommand {
///     static let name = "ping"
///     static let summary = "print pong"
///     static let options: [OptionSpec] = [.flag("--loud", help: "shout")]
///     static func run(_ invocation: Invocation) throws -> Int32 {
///         invocation.standardOutput.write(invocation.arguments.flag("--loud") ? "PONG\n" : "pong\n")
///         return 0
///     }
/// }
/// ```
///
/// The runner handles `--help`/`-h`, the global options and error
/// reporting: `run` throws ``KeychainError`` (exit status
/// ``KeychainError/exitStatus``), ``UsageError`` (exit 2),
/// ``CLIFailure`` (its own status) or ``PromptError``, and returns the exit
/// status on success (normally 0).
public protocol FobCommand {
    /// The word on the command line, such as `get`.
    static var name: String { get }
    /// One line for `fob --help`.
    static var summary: String { get }
    /// The positional arguments' names, such as `["SERVICE", "ACCOUNT"]`.
    static var positionals: [String] { get }
    /// How many of the trailing ``positionals`` may be left out.
    static var optionalPositionals: Int { get }
    /// The command's own options (global options are added by the runner).
    static var options: [OptionSpec] { get }
    /// More text for `fob NAME --help`, after the usage and options; may be empty.
    static var discussion: String { get }
    /// Whether arguments past the last positional are kept (`fob run -- COMMAND ARGS…`).
    static var variadic: Bool { get }
    /// The usage lines of `fob NAME --help` (default: the one ``usage`` builds).
    static var usageLines: [String] { get }
    /// Runs the command.
    /// - Parameter invocation: the parsed arguments, global options and process state.
    /// - Returns: the exit status.
    /// - Throws: ``KeychainError``, ``UsageError``, ``CLIFailure`` or ``PromptError``.
    static func run(_ invocation: Invocation) throws -> Int32
}

extension FobCommand {
    public static var positionals: [String] { [] }
    public static var optionalPositionals: Int { 0 }
    public static var options: [OptionSpec] { [] }
    public static var discussion: String { "" }
    public static var variadic: Bool { false }

    /// `fob NAME SERVICE ACCOUNT [--label T] …`; for a ``variadic`` command
    /// the options come first, then `--` and the positionals
    /// (`fob run [--env-file FILE] -- COMMAND [ARG...]`).
    public static var usage: String {
        var words: [String] = []
        let required = positionals.count - optionalPositionals
        for (index, positional) in positionals.enumerated() {
            words.append(index < required ? positional : "[\(positional)]")
        }
        let optionWords = options.map(\.usageSynopsis)
        let parts = variadic ? optionWords + ["--"] + words : words + optionWords
        return (["fob", name] + parts).joined(separator: " ")
    }

    /// The usage lines `fob NAME --help` shows: ``usage``, unless the
    /// command has forms of its own (each as the man page's synopsis gives it).
    public static var usageLines: [String] { [usage] }

    /// The text of `fob NAME --help`.
    public static var helpText: String {
        var text = "Usage: " + usageLines.joined(separator: "\n       ") + "\n\n\(summary)\n"
        if !options.isEmpty {
            text += "\nOptions:\n"
            text += HelpFormatter.table(options.map { ($0.synopsis, $0.help) })
        }
        if !discussion.isEmpty { text += "\n\(discussion)\n" }
        text += "\nGlobal options (also accepted here): "
        text +=
            (GlobalOptions.specs.map(\.option.name) + [GlobalOptions.noAgentFlag]).joined(separator: ", ")
            + "; see 'fob --help'.\n"
        return text
    }
}

/// Column layout for help texts.
enum HelpFormatter {
    /// The widest help line: 80 columns.
    static let width = 80

    /// `text` with every line longer than ``width`` wrapped at spaces. A
    /// continuation lines up with the line's description column (after the
    /// first gap of two spaces in a table row), after `Usage: fob NAME `, or
    /// with the line's own indentation. A usage line (`Usage: fob …`, or a
    /// further form, `       fob …`) breaks only outside brackets, so
    /// `[--hidden-field NAME]...` stays whole.
    static func fit(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.count > width else { return String(line) }
            let chars = Array(line)
            let leading = chars.prefix { $0 == " " }.count
            var indent = leading
            if line.hasPrefix("Usage: ") {
                indent = min(
                    chars.count,
                    "Usage: fob ".count + (chars.dropFirst(11).firstIndex(of: " ").map { $0 - 11 + 1 } ?? 0))
            } else if let gap = (leading..<min(chars.count - 1, 40)).first(where: {
                chars[$0] == " " && chars[$0 + 1] == " "
            }) {
                indent = gap + (chars[gap...].prefix { $0 == " " }.count)
            }
            if indent > width / 2 { indent = leading + 4 }
            let isUsage = line.hasPrefix("Usage: fob ") || line.hasPrefix("       fob ")
            return wrap(chars, indent: indent, keepingBrackets: isUsage)
        }.joined(separator: "\n")
    }

    private static func wrap(_ chars: [Character], indent: Int, keepingBrackets: Bool) -> String {
        var lines: [String] = []
        var current = String(chars.prefix(indent))
        var word = ""
        let pad = String(repeating: " ", count: indent)
        func flushWord() {
            guard !word.isEmpty else { return }
            let trimmed = current
            if trimmed.count + word.count > width && trimmed.trimmingSpaces().count > 0 {
                lines.append(String(trimmed.dropLast(trimmed.hasSuffix(" ") ? 1 : 0)))
                current = pad + word
            } else {
                current += word
            }
            word = ""
        }
        var depth = 0
        for c in chars.dropFirst(indent) {
            if keepingBrackets, c == "[" { depth += 1 }
            if keepingBrackets, c == "]" { depth = max(0, depth - 1) }
            if c == " " && depth == 0 {
                flushWord()
                current += " "
            } else {
                word.append(c)
            }
        }
        flushWord()
        lines.append(current)
        return lines.joined(separator: "\n")
    }

    static func table(_ rows: [(String, String)], indent: Int = 2) -> String {
        let width = rows.map(\.0.count).max() ?? 0
        return rows.map { left, right in
            String(repeating: " ", count: indent) + left + String(repeating: " ", count: width - left.count + 2) + right
                + "\n"
        }.joined()
    }
}

/// What a running command gets: its arguments, the global options, the
/// process state, and helpers for the vault, the master password and secrets.
public final class Invocation {
    /// The command's name as typed.
    public let command: String
    /// The command's parsed arguments.
    public let arguments: ParsedArguments
    /// The global options (command line, then environment).
    public let globals: GlobalOptions
    /// The process state.
    public let context: CLIContext
    /// What asking the master password threw inside the item store, which
    /// can only throw a ``KeychainError``: ``FobCLI/run(_:)`` reports this
    /// instead (Ctrl-C at the prompt is 130, not 36).
    var passwordFailure: (any Error)?
    /// The master password of `--password-file -`, read once: the first
    /// line of standard input.
    private var passwordFromStandardInput: SecretBytes?

    /// - Parameters:
    ///   - command: the command's name.
    ///   - arguments: its parsed arguments.
    ///   - globals: the global options.
    ///   - context: the process state.
    public init(command: String, arguments: ParsedArguments, globals: GlobalOptions, context: CLIContext) {
        self.command = command
        self.arguments = arguments
        self.globals = globals
        self.context = context
    }

    /// Standard output.
    public var standardOutput: any ByteSink { context.standardOutput }
    /// Standard error.
    public var standardError: any ByteSink { context.standardError }
    /// Writes `text` to standard output and gives exit status 0: the end of
    /// a command that succeeded by printing (`return invocation.succeed(printing: text)`).
    public func succeed(printing text: String) -> Int32 {
        standardOutput.write(text)
        return 0
    }
    /// The time now, from the context's clock (every command reads it here).
    public var now: Date { context.clock.now }
    /// Standard input, shared by the password reader and the secret reader.
    private lazy var input = InputReader(source: context.standardInput)

    /// Opens the vault of `--vault`, locked.
    /// - Throws: `.noSuchKeychain` (exit 50) when there is none; `.decode`, `.io`.
    /// A backup opened away from its vault (``Vault/isBackupCopy``) is said
    /// on standard error, so an old state is never read unknowingly.
    public func openVault() throws(KeychainError) -> Vault {
        let vault = try Vault(url: globals.vaultURL)
        if vault.isBackupCopy {
            standardError.write("fob: \(vault.url.path) is a backup, opened read-only\n")
        }
        return vault
    }

    /// Opens the vault and unlocks it with the master password (from
    /// `--password-file`, else a masked prompt on the terminal). After a
    /// password asked on the terminal, the vault key is handed to the agent
    /// too (started if need be), unless `--no-agent` or `handingToAgent` is `false`.
    /// - Throws: `.noSuchKeychain`, `.authFailed` (51), `.interactionNotAllowed`
    ///   (36, no terminal and no password file), `.decode` (also for an old
    ///   copy put back: ``VaultWatermarks``), `.io`; ``CLIFailure``
    ///   when the prompt is interrupted.
    public func unlockedVault(handingToAgent: Bool = true) throws -> Vault {
        let vault = try openVault()
        let password = try masterPassword(prompt: "Master password: ")
        try vault.unlock(password: password)
        try watermarks.check(vault)
        if handingToAgent { handToAgentIfAsked(vault) }
        return vault
    }

    /// The master password: the first line of `--password-file` (`-` =
    /// standard input, up to its first newline), else asked once on the
    /// controlling terminal.
    /// - Parameter prompt: the prompt shown on the terminal.
    /// - Throws: `.interactionNotAllowed` when there is neither a password
    ///   file nor a terminal; `.io` when the file cannot be read; ``CLIFailure``
    ///   on Ctrl-C; `.param` past ``Vault/maxPasswordBytes``.
    public func masterPassword(prompt: String) throws -> SecretBytes {
        if globals.passwordFile == "-" { return try takePasswordFromStandardInput() }
        if let path = globals.passwordFile {
            return try readPasswordFile(path)
        }
        return try ask(prompt, maxBytes: Vault.maxPasswordBytes, what: "the master password")
    }

    /// A new master password: the first line of `file` when given, else
    /// asked twice on the terminal.
    /// - Parameters:
    ///   - file: a path, `-` for standard input, or `nil` to prompt.
    ///   - prompt: the first prompt, such as `"New master password: "`.
    /// - Throws: as ``masterPassword(prompt:)``, and ``CLIFailure`` when the
    ///   two entries differ.
    public func newMasterPassword(file: String?, prompt: String) throws -> SecretBytes {
        if let file { return try readPasswordFile(file) }
        let first = try ask(prompt, maxBytes: Vault.maxPasswordBytes, what: "a new master password")
        let second = try ask("Confirm: ", maxBytes: Vault.maxPasswordBytes, what: "a new master password")
        guard first == second else { throw CLIFailure("the two passwords differ; nothing was changed") }
        return first
    }

    /// An item's secret: a masked prompt (asked twice) when standard input
    /// is a terminal; otherwise all of standard input, with one trailing
    /// `\n` or `\r\n` dropped unless `raw`.
    /// - Parameters:
    ///   - raw: keep every byte of standard input.
    ///   - what: names the item in the prompt, such as `service "mail", account "ana"`.
    ///   - replacing: the secret replaces a stored one, so an empty result
    ///     (`</dev/null`, `echo "$UNSET"`, Enter twice at the prompt) is
    ///     refused rather than stored, unless `--allow-empty` was given.
    /// - Throws: `.param` past 1 MiB; `.io`; ``CLIFailure`` when the two entries differ or on Ctrl-C;
    ///   ``UsageError`` for an empty secret when `replacing`.
    public func readItemSecret(raw: Bool, what: String, replacing: Bool = false) throws -> SecretBytes {
        let secret: SecretBytes
        if context.standardInputIsTerminal {
            let first = try ask("Secret for \(what): ", maxBytes: Item.maxSecretBytes, what: "the secret")
            let second = try ask("Retype the secret: ", maxBytes: Item.maxSecretBytes, what: "the secret")
            guard first == second else { throw CLIFailure("the two entries differ; nothing was changed") }
            secret = first
        } else {
            let read = try input.readToEnd(maxBytes: Item.maxSecretBytes)
            secret = raw ? read : InputReader.droppingOneNewline(read)
        }
        if replacing && secret.count == 0 && !arguments.flag("--allow-empty") {
            throw UsageError(
                "the new secret of \(what) is empty; nothing was changed"
                    + " (--keep-secret changes only the attributes; --allow-empty stores an empty secret)",
                command: command)
        }
        return secret
    }

    /// All of standard input (a credential helper's request), through the
    /// reader the password file `-` shares.
    /// - Throws: `.param` past `maxBytes`; `.io`.
    public func readStandardInput(maxBytes: Int) throws(KeychainError) -> SecretBytes {
        try input.readToEnd(maxBytes: maxBytes)
    }

    /// One value that must not come from argv (a hidden field's value): on a
    /// terminal a masked prompt asked twice; otherwise the next line of
    /// standard input without its `\n` (or `\r\n`), so several values and
    /// then the secret can follow one another on standard input.
    /// - Parameters:
    ///   - prompt: the first prompt, such as `Value of field "pin": `.
    ///   - maxBytes: the longest value accepted.
    ///   - what: names the value in messages.
    /// - Throws: `.param` past `maxBytes`; `.io`; ``CLIFailure`` when the two entries differ or on Ctrl-C.
    public func readSecretLine(prompt: String, maxBytes: Int, what: String) throws -> SecretBytes {
        if context.standardInputIsTerminal {
            let first = try ask(prompt, maxBytes: maxBytes, what: what)
            let second = try ask("Retype it: ", maxBytes: maxBytes, what: what)
            guard first == second else { throw CLIFailure("the two entries differ; nothing was changed") }
            return first
        }
        let line = try input.readLine(maxBytes: maxBytes + 1)
        guard line.count <= maxBytes else { throw KeychainError.param("\(what) is longer than \(maxBytes) bytes") }
        return line
    }

    func ask(_ prompt: String, maxBytes: Int, what: String) throws -> SecretBytes {
        do {
            return try context.terminal.readSecret(prompt: prompt, maxBytes: maxBytes)
        } catch .noTerminal {
            throw KeychainError.interactionNotAllowed("no terminal to ask for \(what), and no --password-file")
        } catch .interrupted {
            throw CLIFailure("interrupted; nothing was changed", status: CLIFailure.interruptedStatus)
        } catch .tooLong(let limit) {
            throw KeychainError.param("\(what) is longer than \(limit) bytes")
        }
    }

    /// With `--password-file -`, the first line of standard input, read
    /// once, whether the vault is opened here or the agent serves it: what
    /// follows is the command's own input, never the password too.
    /// - Throws: as ``masterPassword(prompt:)``.
    @discardableResult
    func takePasswordFromStandardInput() throws -> SecretBytes {
        if let passwordFromStandardInput { return passwordFromStandardInput }
        let password = try readPasswordFile("-")
        passwordFromStandardInput = password
        return password
    }

    private func readPasswordFile(_ path: String) throws -> SecretBytes {
        let password: SecretBytes
        if path == "-" {
            password = try input.readLine(maxBytes: Vault.maxPasswordBytes + 1)
        } else {
            password = try PasswordFile.readFirstLine(path: path, maxBytes: Vault.maxPasswordBytes + 1)
        }
        guard password.count <= Vault.maxPasswordBytes else {
            throw KeychainError.param("the master password is longer than \(Vault.maxPasswordBytes) bytes")
        }
        return password
    }
}

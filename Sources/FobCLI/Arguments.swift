import FobAccess
import FobClipboard
import FobStore
import FobViewModels
import FoundationEssentials

/// A mistake in the command line: exit status 2, one line on stderr and a hint.
public struct UsageError: Error, Equatable, Sendable {
    /// What is wrong, without the `fob:` prefix.
    public var message: String
    /// The command whose help the hint points to, or `nil` for `fob --help`.
    public var command: String?

    /// - Parameters:
    ///   - message: what is wrong.
    ///   - command: the command the hint should point to.
    public init(_ message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    /// The hint line printed after the message.
    public var hint: String {
        if let command { return "Run 'fob \(command) --help' for its usage." }
        return "Run 'fob --help' for usage."
    }
}

/// A failure that is neither a usage error nor a ``KeychainError``: its own
/// message and exit status (1 unless given).
public struct CLIFailure: Error, Equatable, Sendable {
    /// One line, without the `fob:` prefix; never a secret.
    public var message: String
    /// The exit status.
    public var status: Int32

    /// The exit status after Ctrl-C at a prompt: 130 (128 + SIGINT), as
    /// when SIGINT ends the process.
    public static let interruptedStatus: Int32 = 130

    /// - Parameters:
    ///   - message: one line naming the cause.
    ///   - status: the exit status; 1 = any other failure.
    public init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }
}

/// One option a command accepts: a flag (`--raw`) or an option with a value
/// (`--label T`, also written `--label=T`).
public struct OptionSpec: Sendable, Equatable {
    /// The long name with its dashes, such as `--label`.
    public var name: String
    /// The value's placeholder in help, such as `T`; `nil` for a flag.
    public var valueName: String?
    /// One line for the help text.
    public var help: String
    /// The values the option accepts, for shell completion (`--kdf`:
    /// `interactive`, `moderate`, `sensitive`); empty when any value goes.
    public var choices: [String] = []
    /// Whether the command cannot run without it (`fob resolve --keep`):
    /// shown without brackets in the usage line, and a missing one is a
    /// ``UsageError`` from ``ParsedArguments/parse(_:options:positionals:optionalCount:command:variadic:)``.
    public var isRequired = false
    /// Whether the command reads every value given, not only the last
    /// (`--field NAME=VALUE`, one field each): shown as `[--field NAME=VALUE]...`
    /// in the usage line. Parsing is the same either way.
    public var isRepeatable = false

    /// A flag such as `--raw`.
    public static func flag(_ name: String, help: String) -> OptionSpec {
        OptionSpec(name: name, valueName: nil, help: help)
    }

    /// An option that takes a value, such as `--label T`.
    /// - Parameters:
    ///   - choices: the accepted values, offered by shell completion.
    ///   - repeatable: whether every value given counts (``isRepeatable``).
    public static func value(
        _ name: String, _ valueName: String, choices: [String] = [], repeatable: Bool = false, help: String
    ) -> OptionSpec {
        OptionSpec(name: name, valueName: valueName, help: help, choices: choices, isRepeatable: repeatable)
    }

    /// An option the command cannot run without, such as `--keep local|remote`.
    /// - Parameter choices: the accepted values, offered by shell completion.
    public static func required(_ name: String, _ valueName: String, choices: [String] = [], help: String)
        -> OptionSpec
    {
        OptionSpec(name: name, valueName: valueName, help: help, choices: choices, isRequired: true)
    }

    /// `--label T` or `--raw`, as shown in usage lines.
    public var synopsis: String { valueName.map { "\(name) \($0)" } ?? name }

    /// How the usage line shows the option: `--keep local|remote` when
    /// required, else in brackets, `[--label T]`, and `[--field NAME=VALUE]...`
    /// when repeatable.
    public var usageSynopsis: String {
        (isRequired ? synopsis : "[\(synopsis)]") + (isRepeatable ? "..." : "")
    }
}

/// A command's arguments after parsing: positionals, option values and flags.
public struct ParsedArguments: Sendable, Equatable {
    /// The positional arguments, in order.
    public var positionals: [String] = []
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []

    public init() {}

    /// The value of an option such as `--label`; the last one given wins.
    public func value(_ name: String) -> String? { values[name]?.last }

    /// Every value given to an option that may repeat (`--env`), in order.
    public func allValues(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether a flag such as `--raw` was given.
    public func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Parses `arguments` against `options`.
    ///
    /// `--` ends the options: everything after it is positional (for a
    /// service that starts with a dash). A lone `-` is positional.
    /// - Parameters:
    ///   - arguments: the command's arguments (global options already removed).
    ///   - options: what the command accepts.
    ///   - positionals: the names of the positional arguments, for messages;
    ///     the allowed count is `positionals.count` minus `optionalCount` up to `positionals.count`.
    ///   - optionalCount: how many of the trailing positionals may be left out.
    ///   - command: the command's name, for messages.
    ///   - variadic: whether arguments past the last positional are kept
    ///     (`fob run -- COMMAND ARGS…`) instead of refused.
    /// - Throws: ``UsageError`` for an unknown option, a missing value, or a
    ///   wrong number of positionals.
    public static func parse(
        _ arguments: [String], options: [OptionSpec], positionals names: [String],
        optionalCount: Int = 0, command: String,
        variadic: Bool = false
    ) throws(UsageError) -> ParsedArguments {
        var result = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || argument == "-" || !argument.hasPrefix("-") {
                result.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            let name: String
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            } else {
                name = argument
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '\(name)' for '\(command)'", command: command)
            }
            if spec.valueName == nil {
                guard inlineValue == nil else {
                    throw UsageError("option '\(name)' takes no value", command: command)
                }
                result.flags.insert(name)
            } else if let inlineValue {
                result.values[name, default: []].append(inlineValue)
            } else {
                guard index < arguments.count else {
                    throw UsageError("option '\(name)' needs a value (\(spec.synopsis))", command: command)
                }
                result.values[name, default: []].append(arguments[index])
                index += 1
            }
        }
        if let missing = options.first(where: { $0.isRequired && result.values[$0.name] == nil }) {
            throw UsageError("'\(command)' needs \(missing.synopsis)", command: command)
        }
        let required = names.count - optionalCount
        if result.positionals.count < required {
            let missing = names[result.positionals.count..<required].joined(separator: " ")
            throw UsageError("'\(command)' needs \(missing)", command: command)
        }
        if result.positionals.count > names.count && !variadic {
            let extra = result.positionals[names.count]
            throw UsageError("unexpected argument '\(extra)' for '\(command)'", command: command)
        }
        return result
    }
}

/// The options every command accepts, before or after the command name,
/// each with an environment variable; an option given on the command line
/// wins over its variable.
public struct GlobalOptions: Sendable, Equatable {
    /// The vault, the agent's use and the password file, resolved as every
    /// front end resolves them (``AccessSettings``).
    public var access: AccessSettings
    /// The vault file (`--vault`, `FOB_VAULT`); default ``Vault/defaultURL(environment:)``.
    public var vaultURL: URL { access.vaultURL }
    /// Where the master password is read (`--password-file`, `FOB_PASSWORD_FILE`):
    /// the first line of this file, `-` for standard input; `nil` to prompt.
    public var passwordFile: String? { access.passwordFile }
    /// Idle seconds before the terminal UI locks (`--lock-after`, `FOB_LOCK_AFTER`); 0 = never.
    public var lockAfter: Int
    /// Seconds before a copied secret is cleared (`--clear-after`, `FOB_CLEAR_AFTER`); 0 = never.
    public var clearAfter: Int
    /// The clipboard to use (`--clipboard`, `FOB_CLIPBOARD`); FobViewModels' ``ClipboardMode``.
    public var clipboard: ClipboardMode
    /// Whether commands may use (and start) the agent: `false` with
    /// `--no-agent` or `FOB_AGENT=0`.
    public var useAgent: Bool { access.useAgent }

    /// The flag that turns the agent off (given as `--no-agent` → `"1"` in `given`).
    public static let noAgentFlag = "--no-agent"

    /// Default idle lock: 300 seconds.
    public static let defaultLockAfter = 300
    /// Default clipboard clearing: 45 seconds.
    public static let defaultClearAfter = 45

    /// The global options with their variables, for parsing and help.
    public static let specs: [(option: OptionSpec, variable: String)] = [
        (
            .value(
                "--vault", "PATH",
                help: "the vault file (default $XDG_DATA_HOME/fob/vault.db, else ~/.local/share/fob/vault.db)"),
            "FOB_VAULT"
        ),
        (
            .value(
                "--password-file", "PATH",
                help: "read the master password from the first line of PATH ('-' = standard input)"),
            "FOB_PASSWORD_FILE"
        ),
        (
            .value("--lock-after", "SECONDS", help: "lock the terminal UI after SECONDS idle (default 300; 0 = never)"),
            "FOB_LOCK_AFTER"
        ),
        (
            .value("--clear-after", "SECONDS", help: "clear a copied secret after SECONDS (default 45; 0 = never)"),
            "FOB_CLEAR_AFTER"
        ),
        (
            .value(
                "--clipboard", "MODE", choices: ClipboardMode.allCases.map(\.rawValue),
                help: "auto, wl-copy, xclip, xsel, tmux, osc52 or none (default auto)"), "FOB_CLIPBOARD"
        ),
    ]

    /// Resolves the options from command-line values and the environment.
    /// - Parameters:
    ///   - given: option name (`--vault`) → value, from the command line.
    ///   - environment: the process environment; empty variables are ignored.
    /// - Throws: ``UsageError`` for a number or clipboard mode that is not valid.
    public init(given: [String: String], environment: [String: String]) throws(UsageError) {
        func lookup(_ option: String, _ variable: String) -> (value: String, source: String)? {
            if let value = given[option] { return (value, option) }
            if let value = environment[variable], !value.isEmpty { return (value, variable) }
            return nil
        }
        func seconds(_ option: String, _ variable: String, default fallback: Int) throws(UsageError) -> Int {
            guard let (text, source) = lookup(option, variable) else { return fallback }
            guard let value = Int(text), value >= 0, value <= 31_536_000 else {
                throw UsageError("\(source) wants a whole number of seconds from 0 to 31536000, not '\(text)'")
            }
            return value
        }
        if given["--vault"]?.isEmpty == true {
            throw UsageError("--vault wants a file path, not an empty one")
        }
        access = AccessSettings(
            environment: environment, vaultPath: given["--vault"], passwordFile: given["--password-file"],
            agentOff: given[GlobalOptions.noAgentFlag] != nil)
        lockAfter = try seconds("--lock-after", "FOB_LOCK_AFTER", default: GlobalOptions.defaultLockAfter)
        clearAfter = try seconds("--clear-after", "FOB_CLEAR_AFTER", default: GlobalOptions.defaultClearAfter)
        if let (text, source) = lookup("--clipboard", "FOB_CLIPBOARD") {
            guard let mode = ClipboardMode(rawValue: text) else {
                let modes = ClipboardMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw UsageError("\(source) wants one of \(modes), not '\(text)'")
            }
            clipboard = mode
        } else {
            clipboard = .auto
        }
    }
}

/// The command line split into global options, the command name and the
/// command's own arguments.
struct CommandLineSplit: Equatable {
    var globals: [String: String] = [:]
    var command: String?
    var rest: [String] = []
    var help = false
    var version = false

    /// Takes the global options out wherever they appear before `--`; the
    /// first other argument that does not start with a dash is the command.
    static func split(_ arguments: [String]) throws(UsageError) -> CommandLineSplit {
        var split = CommandLineSplit()
        let globalNames = Set(GlobalOptions.specs.map(\.option.name))
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded {
                split.rest.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                split.rest.append(argument)
                continue
            }
            if argument == "--help" || argument == "-h" {
                split.help = true
                continue
            }
            if argument == "--version" {
                split.version = true
                continue
            }
            if argument == GlobalOptions.noAgentFlag {
                split.globals[argument] = "1"
                continue
            }
            var name = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            if globalNames.contains(name) {
                if let inlineValue {
                    split.globals[name] = inlineValue
                } else {
                    guard index < arguments.count else {
                        throw UsageError("option '\(name)' needs a value", command: split.command)
                    }
                    split.globals[name] = arguments[index]
                    index += 1
                }
                continue
            }
            if split.command == nil && !argument.hasPrefix("-") {
                split.command = argument
                continue
            }
            split.rest.append(argument)
        }
        return split
    }
}

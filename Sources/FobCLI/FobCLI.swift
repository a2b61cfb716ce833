import FobAgent
import FobStore
import FobSystem
@preconcurrency import Glibc

/// The `fob` command line: global options, the command registry
/// (``commands``), help, and the mapping of errors to exit statuses.
public enum FobCLI {
    /// `fob --version`.
    public static let version = "0.2.0"

    /// Runs `fob` with the process's arguments, environment, streams and
    /// terminal, and exits with its status (2 when an argument is not UTF-8).
    /// Forbids core dumps first (``ProcessHardening``; the agent, `fob
    /// agent`, also forbids inspection once it knows it is the agent).
    public static func main() -> Never {
        ProcessHardening.forbidCoreDumps()
        // `fob --version` alone answers before the command-line context is
        // built: its environment dictionary makes the Swift runtime search
        // every protocol conformance (String: Hashable), 0.45 million
        // instructions of 3.15 million. Any program name answers so too
        // (`git-credential-fob --version` runs `fob git-credential --version`).
        if CommandLine.argc == 2, let argument = CommandLine.unsafeArgv[1], strcmp(argument, "--version") == 0 {
            FileDescriptorSink(fd: STDOUT_FILENO).write("fob \(version)\n")
            exit(0)
        }
        do {
            exit(run(try .live()))
        } catch {
            FileDescriptorSink(fd: STDERR_FILENO).write("fob: \(error.message)\n\(error.hint)\n")
            exit(2)
        }
    }

    /// Runs one `fob` command line against `context` and returns the exit
    /// status, writing results to its standard output and errors (one line,
    /// `fob: …`) to its standard error. Never exits the process, so tests
    /// call it in process.
    /// - Parameter context: the arguments and process state.
    /// - Returns: 0 on success; 2 for a usage error; else the status of the
    ///   error (``KeychainError/exitStatus``, ``CLIFailure/status``).
    public static func run(_ context: CLIContext) -> Int32 {
        do {
            return try dispatch(context)
        } catch let error as UsageError {
            context.standardError.write("fob: \(error.message)\n\(error.hint)\n")
            return 2
        } catch let error as KeychainError {
            context.standardError.write("fob: \(error.description)\n")
            return error.exitStatus
        } catch let error as CLIFailure {
            context.standardError.write("fob: \(error.message)\n")
            return error.status
        } catch let error as PromptError {
            let keychainError: KeychainError
            switch error {
            case .noTerminal: keychainError = .interactionNotAllowed("no terminal to ask on")
            case .interrupted:
                // Ctrl-C at a prompt ends fob as SIGINT does (128 + 2).
                context.standardError.write("fob: interrupted\n")
                return CLIFailure.interruptedStatus
            case .tooLong(let limit): keychainError = .param("the text typed is longer than \(limit) bytes")
            }
            context.standardError.write("fob: \(keychainError.description)\n")
            return keychainError.exitStatus
        } catch {
            context.standardError.write("fob: \(error)\n")
            return 1
        }
    }

    private static func dispatch(_ context: CLIContext) throws -> Int32 {
        let split = try CommandLineSplit.split(context.arguments)
        if split.version {
            context.standardOutput.write("fob \(version)\n")
            return 0
        }
        guard let name = split.command else {
            if split.help {
                context.standardOutput.write(HelpFormatter.fit(helpText))
                return 0
            }
            if let first = split.rest.first(where: { $0 != "--" }) ?? split.rest.first {
                throw UsageError(first.hasPrefix("-") ? "unknown option '\(first)'" : "unexpected argument '\(first)'")
            }
            let globals = try GlobalOptions(given: split.globals, environment: context.environment)
            let invocation = Invocation(command: "", arguments: ParsedArguments(), globals: globals, context: context)
            return try interactiveCommand.run(invocation)
        }
        // `fob help` and `fob help COMMAND`, as git and most command-line tools answer them.
        if name == "help", split.rest.count <= 1 {
            guard let topic = split.rest.first else {
                context.standardOutput.write(HelpFormatter.fit(helpText))
                return 0
            }
            guard let command = command(named: topic) else { throw UsageError("unknown command '\(topic)'") }
            context.standardOutput.write(HelpFormatter.fit(command.helpText))
            return 0
        }
        guard let command = command(named: name) else {
            let hint = commonNames[name].map { "; Fob's is '\($0)'" } ?? ""
            throw UsageError("unknown command '\(name)'\(hint)")
        }
        if split.help {
            context.standardOutput.write(HelpFormatter.fit(command.helpText))
            return 0
        }
        let arguments = try ParsedArguments.parse(
            split.rest, options: command.options, positionals: command.positionals,
            optionalCount: command.optionalPositionals, command: name,
            variadic: command.variadic)
        let globals = try GlobalOptions(given: split.globals, environment: context.environment)
        let invocation = Invocation(command: name, arguments: arguments, globals: globals, context: context)
        do {
            // The first line is the password even when the agent serves the
            // vault and it is never asked: the rest is the command's input.
            if globals.passwordFile == "-" { try invocation.takePasswordFromStandardInput() }
            return try command.run(invocation)
        } catch let error as KeychainError {
            // A read the agent held for consent names its rule, not the master password no one could type.
            if case .consentMissing = error { throw error }
            throw invocation.passwordFailure ?? error
        }
    }

    /// Words other tools use for a Fob command (pass's `show` and `insert`,
    /// the common `delete`, `remove` and `list`): an unknown command that
    /// is one of them is answered with Fob's word.
    static let commonNames = [
        "delete": "rm", "remove": "rm", "del": "rm", "list": "ls", "show": "get", "insert": "add",
    ]

    /// The registered command with this name.
    public static func command(named name: String) -> (any FobCommand.Type)? {
        (commands + internalCommands).first { $0.name == name }
    }

    /// The text of `fob --help`: usage, every command with its summary
    /// (under `Commands:`, one per line), the global options and their variables.
    public static var helpText: String {
        var text = """
            fob \(version): a keychain for the Linux terminal

            Usage:
              fob [global options]                        start the terminal UI
              fob [global options] COMMAND [ARGUMENTS]    run one command

            Commands:

            """
        text += HelpFormatter.table(commands.map { ($0.name, $0.summary) })
        text += "\nGlobal options (before or after the command):\n"
        text += HelpFormatter.table(
            GlobalOptions.specs.map { ($0.option.synopsis, "\($0.option.help) [\($0.variable)]") }
                + [
                    ("--no-agent", "neither use nor start the agent [FOB_AGENT=0]"),
                    ("-h, --help", "show help (fob COMMAND --help for a command)"),
                    ("--version", "show the version"),
                ])
        text += """

            Secrets are read from standard input (one trailing newline dropped
            unless --raw), or asked with a masked prompt on a terminal; never
            from the command line.

            Exit status: 0 success, 1 other failure, 2 usage error, 36 interaction
            not allowed (locked with no master password, or a consent question
            no one could answer, without a terminal), 44 item not found, 45
            duplicate item, 50 no vault, 51 wrong master password or access denied,
            93 vault damaged or not a Fob vault. See fob(1) (in a source tree:
            man Assets/fob.1); `fob help COMMAND` is `fob COMMAND --help`.

            """
        return text
    }
}

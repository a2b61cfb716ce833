import FobAgent
import FobStore

/// `fob completion bash|zsh|fish`: prints a completion script generated
/// from the command table (``FobCLI/commands``), so it names exactly the
/// commands, options and option values `--help` shows.
enum CompletionCommand: FobCommand {
    static let name = "completion"
    static let summary = "print a shell completion script (bash, zsh or fish)"
    static let positionals = ["bash|zsh|fish"]
    static let discussion = """
        bash: source <(fob completion bash), or install it as
        ~/.local/share/bash-completion/completions/fob. zsh: put it in a
        directory of $fpath as _fob. fish: ~/.config/fish/completions/fob.fish.
        Service and account names are offered only when an unlocked source can
        give them without asking for a password; never secrets.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let model = CompletionModel.current
        let script: String
        switch invocation.arguments.positionals[0] {
        case "bash": script = CompletionScripts.bash(model)
        case "zsh": script = CompletionScripts.zsh(model)
        case "fish": script = CompletionScripts.fish(model)
        case let other: throw UsageError("no completion for '\(other)': bash, zsh or fish", command: name)
        }
        return invocation.succeed(printing: script)
    }
}

/// `fob __complete services` / `fob __complete accounts SERVICE`: the names
/// completion scripts offer, each followed by a NUL byte, from a source that never prompts
/// (see ``CompletionNames/nonPromptingSource(_:)``); nothing otherwise.
/// Never a secret; always exit 0.
enum CompleteNamesCommand: FobCommand {
    static let name = "__complete"
    static let summary = "names for shell completion (for the completion scripts)"
    static let positionals = ["services|accounts", "SERVICE"]
    static let optionalPositionals = 1

    static func run(_ invocation: Invocation) throws -> Int32 {
        let positionals = invocation.arguments.positionals
        guard let source = CompletionNames.nonPromptingSource(invocation) else { return 0 }
        let names: [String]
        switch positionals[0] {
        case "services": names = (try? source.services()) ?? []
        case "accounts" where positionals.count == 2: names = (try? source.accounts(service: positionals[1])) ?? []
        default: names = []
        }
        // NUL-terminated: a name may hold a newline or anything else but NUL.
        let usable = names.filter { !$0.isEmpty && !$0.utf8.contains(0) }
        return invocation.succeed(printing: Set(usable).sorted().map { $0 + "\u{0}" }.joined())
    }
}

/// Names (never secrets) of the items in a vault, for completion.
public protocol CompletionNameSource {
    /// Every service name.
    func services() throws -> [String]
    /// The account names of one service.
    func accounts(service: String) throws -> [String]
}

/// Where completion gets names.
public enum CompletionNames {
    /// The one non-prompting source of names: the agent, when it holds the
    /// vault unlocked (`fob unlock`). Never asks for a password, never reads
    /// `--password-file` (a key derivation per Tab would stall the shell),
    /// never starts an agent; with `--no-agent` there is none.
    /// - Returns: the source, or `nil` when no agent holds the vault unlocked.
    public static func nonPromptingSource(_ invocation: Invocation) -> (any CompletionNameSource)? {
        guard let client = invocation.agentClient, AgentClient.isAnswering(client.endpoint),
            case .status(let status)? = try? client.send(.status), status.state != .locked
        else { return nil }
        return AgentNameSource(client: client)
    }
}

/// The names of the items the agent can read (never their secrets).
struct AgentNameSource: CompletionNameSource {
    let client: AgentClient

    private func items() throws -> [Item] {
        guard case .items(let items) = try client.send(.list(service: nil), withSecrets: false) else { return [] }
        return items
    }

    func services() throws -> [String] { try items().map(\.service) }

    func accounts(service: String) throws -> [String] {
        try items().filter { $0.service == service }.map(\.account)
    }
}

/// How a request reached the vault: what rules match, prompts show, and the
/// access log records.
///
/// For Fob's own command line and helpers the agent reads it from the peer's
/// `argv` (``ofFobPeer(arguments:)``: the peer is Fob's own executable, so
/// its arguments are what it runs), never from the request. ``name`` is what
/// `fob log` prints; ``description`` is what a prompt says.
public enum AccessChannel: Sendable, Hashable, CustomStringConvertible {
    /// A command of Fob's command line: `fob get`, `copy`, `run`, `totp`,
    /// `export`, `sync`, … (the subcommand's name).
    case command(String)
    /// git, through `git-credential-fob` or `fob git-credential`.
    case git
    /// docker, through `docker-credential-fob` or `fob docker-credential`.
    case docker
    /// The Secret Service provider, for a D-Bus client.
    case secretService
    /// A program that speaks to the agent itself (a `SecItem` program).
    case program
    /// The terminal UI, driven by the person at its keyboard.
    case terminalUI
    /// The SSH agent, signing for an SSH client.
    case ssh
    /// An agent client whose channel is not known.
    case agent

    /// `fob sync`, whose reads are sealed into the sync tree.
    public static let sync = AccessChannel.command("sync")

    /// The name `fob log` prints and filters on: the command's own name
    /// (`get`, `sync`), `git`, `docker`, `secret-service`, `secitem`,
    /// `terminal-ui`, `ssh`, `agent`.
    public var name: String {
        switch self {
        case .command(let name): return name
        case .git: return "git"
        case .docker: return "docker"
        case .secretService: return "secret-service"
        case .program: return "secitem"
        case .terminalUI: return "terminal-ui"
        case .ssh: return "ssh"
        case .agent: return "agent"
        }
    }

    public var description: String {
        switch self {
        case .command(let name): return "fob \(name)"
        case .git: return "git"
        case .docker: return "docker"
        case .secretService: return "Secret Service"
        case .program: return "SecItem"
        case .terminalUI: return "the terminal UI"
        case .ssh: return "the SSH agent"
        case .agent: return "the agent"
        }
    }

    /// The channel of a peer that is Fob's own program, from its `argv`
    /// (global options such as `--vault PATH` skipped).
    /// - Parameter arguments: the peer's `argv`.
    public static func ofFobPeer(arguments: [String]) -> AccessChannel {
        let name = arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? ""
        if name.hasPrefix("git-credential-") { return .git }
        if name.hasPrefix("docker-credential-") { return .docker }
        if name == "fob-secret-service" { return .secretService }
        var rest = arguments.dropFirst()
        while let next = rest.first, next.hasPrefix("-") {
            rest = rest.dropFirst(AccessChannel.optionsWithValue.contains(next) ? 2 : 1)
        }
        switch rest.first {
        case nil, "ui"?: return .terminalUI
        case "git-credential"?: return .git
        case "docker-credential"?: return .docker
        case "secret-service"?: return .secretService
        case "ssh-agent"?: return .ssh
        case let command?: return .command(command)
        }
    }

    /// Global options of `fob` that take a value.
    static let optionsWithValue: Set<String> = [
        "--vault", "--password-file", "--clipboard", "--lock-after", "--clear-after",
    ]

    /// The code a sealed log entry holds (never changed): 1 `get`, 2 `copy`,
    /// 3 `run`, 4 git, 5 docker, 6 Secret Service, 7 SecItem, 8 terminal UI,
    /// 9 SSH, 10 agent, 11 any other command (its name follows the entry).
    var code: UInt8 {
        switch self {
        case .command("get"): return 1
        case .command("copy"): return 2
        case .command("run"): return 3
        case .command: return 11
        case .git: return 4
        case .docker: return 5
        case .secretService: return 6
        case .program: return 7
        case .terminalUI: return 8
        case .ssh: return 9
        case .agent: return 10
        }
    }

    /// The channel of `code`; for 11, the command named `command`.
    /// - Returns: `nil` for an unknown code.
    init?(code: UInt8, command: String = "") {
        let known: [AccessChannel] = [
            .command("get"), .command("copy"), .command("run"), .git, .docker, .secretService, .program,
            .terminalUI, .ssh, .agent,
        ]
        switch code {
        case 1...10: self = known[Int(code) - 1]
        case 11: self = .command(command)
        default: return nil
        }
    }
}

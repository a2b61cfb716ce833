import FobAgent
import FobStore
import FoundationEssentials

/// Which vault the front ends use and whether through the agent: resolved
/// once, here, from the command line's options and the environment, for the
/// CLI, the terminal UI and FobSecurity alike.
public struct AccessSettings: Sendable, Equatable {
    /// The vault file: the given path, else `FOB_VAULT`, else ``FobStore/Vault/defaultURL(environment:)``.
    public var vaultURL: URL
    /// Whether the agent may be used (and, by the CLI, started): `false` with
    /// `--no-agent` or `FOB_AGENT=0`.
    public var useAgent: Bool
    /// The password file (`--password-file`, `FOB_PASSWORD_FILE`; `-` = standard input), or `nil`.
    public var passwordFile: String?
    /// The variables that place the agent's socket and the kept write
    /// counters (``endpointVariables``), as the environment had them.
    public private(set) var environment: [String: String]

    /// What ``environment`` keeps: the socket's directory
    /// (`XDG_RUNTIME_DIR`, `TMPDIR`, `XDG_STATE_HOME`, `HOME`) and path
    /// (`FOB_AGENT_SOCKET`; `XDG_DATA_HOME` and `HOME` place the default
    /// vault, whose socket has a fixed name); `XDG_STATE_HOME` and `HOME`
    /// also place ``FobAgent/VaultWatermarks``.
    public static let endpointVariables = [
        "XDG_RUNTIME_DIR", "TMPDIR", "XDG_STATE_HOME", "HOME", "FOB_AGENT_SOCKET", "XDG_DATA_HOME",
    ]

    /// The socket of the vault's agent, named after the vault's canonical
    /// path as it is now (a vault created since these settings were made is
    /// named by its resolved path).
    public var agentEndpoint: AgentEndpoint {
        AgentEndpoint(vaultURL: vaultURL, environment: environment)
    }

    /// The environment variable naming the vault.
    public static let vaultVariable = "FOB_VAULT"
    /// The environment variable that turns the agent off when `0`.
    public static let agentVariable = "FOB_AGENT"
    /// The environment variable naming the password file.
    public static let passwordFileVariable = "FOB_PASSWORD_FILE"

    /// Resolves the settings; an empty variable counts as unset.
    /// - Parameters:
    ///   - environment: the process environment (`FOB_VAULT`, `FOB_AGENT`,
    ///     `FOB_PASSWORD_FILE`, `XDG_DATA_HOME`, and ``endpointVariables``).
    ///   - vaultPath: a path given on the command line (wins over `FOB_VAULT`).
    ///   - passwordFile: a password file given on the command line (wins over `FOB_PASSWORD_FILE`).
    ///   - agentOff: `--no-agent` was given.
    public init(
        environment: [String: String], vaultPath: String? = nil, passwordFile: String? = nil, agentOff: Bool = false
    ) {
        func variable(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let path = vaultPath ?? variable(AccessSettings.vaultVariable) {
            vaultURL = URL(fileURLWithPath: path)
        } else {
            vaultURL = Vault.defaultURL(environment: environment)
        }
        self.passwordFile = passwordFile ?? variable(AccessSettings.passwordFileVariable)
        useAgent = !agentOff && environment[AccessSettings.agentVariable] != "0"
        self.environment = environment.filter { AccessSettings.endpointVariables.contains($0.key) }
    }

    /// The agent's store, or `nil` when the agent is turned off.
    public func agentStore() -> AgentStore? {
        useAgent ? AgentStore(client: AgentClient(endpoint: agentEndpoint)) : nil
    }
}

/// Where ``ItemAccess`` gets the master password when it must unlock the
/// vault here.
public enum PasswordSource {
    /// Asks (the CLI's masked prompt on the terminal, or its `--password-file`);
    /// what the closure throws is passed on.
    case asking(() throws -> SecretBytes)
    /// The first line of this file (``FobStore/PasswordFile``); `-` is refused.
    case file(String)
    /// None: the vault is not unlocked here, and a locked one is
    /// `.interactionNotAllowed` with this reason.
    case none(String)

    /// The password.
    /// - Throws: `.interactionNotAllowed` for `.none`, `-`, or a file that
    ///   cannot be read; `.param` for a line that is too long; what `.asking` throws.
    func password() throws -> SecretBytes {
        switch self {
        case .asking(let ask): return try ask()
        case .none(let reason): throw KeychainError.interactionNotAllowed(reason)
        case .file(let path):
            guard path != "-" else {
                throw KeychainError.interactionNotAllowed(
                    "\(AccessSettings.passwordFileVariable)=- (standard input) is not read here")
            }
            do {
                return try PasswordFile.readFirstLine(path: path)
            } catch .io(let reason) {
                throw KeychainError.interactionNotAllowed(reason)
            }
        }
    }
}

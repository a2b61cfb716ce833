import FobAgent
import FobStore
import Foundation

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
    /// `XDG_RUNTIME_DIR`, where the agents' sockets are.
    private var runtimeDirectory: String?

    /// The socket of the vault's agent (under `XDG_RUNTIME_DIR`), named
    /// after the vault's canonical path as it is now (a vault created since
    /// these settings were made is named by its resolved path).
    public var agentEndpoint: AgentEndpoint {
        AgentEndpoint(vaultURL: vaultURL, environment: runtimeDirectory.map { ["XDG_RUNTIME_DIR": $0] } ?? [:])
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
    ///     `FOB_PASSWORD_FILE`, `XDG_DATA_HOME`, `XDG_RUNTIME_DIR`, `HOME`).
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
        runtimeDirectory = environment["XDG_RUNTIME_DIR"]
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

import FobAgent
import FobStore
import Foundation
@preconcurrency import Glibc

/// Chooses the vault behind the `SecItem…` functions.
///
/// By default each call goes to the agent of the vault named by `FOB_VAULT`
/// (else ``FobStore/Vault/defaultURL(environment:)``) when the agent holds it
/// unlocked (`fob unlock`): no password file is needed, and a lock of the
/// agent (`fob lock`, a timeout) answers `errSecInteractionNotAllowed`, as
/// a locked iPhone does. Without `FOB_PASSWORD_FILE`, a stopped or locked
/// agent is `errSecInteractionNotAllowed` too. With it (and no agent holding
/// the vault unlocked, or `FOB_AGENT=0`), the first call opens the vault and
/// unlocks it with the first line of that file. A program can instead hand
/// over a vault it opened and unlocked itself with ``configure(vault:)``.
///
/// Every `SecItem…` call runs under one process-wide lock, so calls from
/// several threads at once are serialised; the vault itself never leaves that lock.
public enum FobKeychain {
    /// Makes every later `SecItem…` call use `vault`.
    ///
    /// A locked vault is accepted; calls then answer `errSecInteractionNotAllowed`
    /// until it is unlocked.
    /// - Parameter vault: an open vault, normally unlocked.
    /// - Important: after this call the vault belongs to FobSecurity: do not use it
    ///   from other threads while `SecItem…` calls may run.
    public static func configure(vault: Vault) {
        state.update { $0 = .open(vault) }
    }

    /// Makes the next `SecItem…` call open and unlock the vault named by these
    /// variables (`FOB_VAULT`, `FOB_PASSWORD_FILE`, `XDG_DATA_HOME`, `HOME`)
    /// instead of the process environment's, then keep it open.
    /// - Parameter environment: the variables to read.
    public static func configure(environment: [String: String]) {
        state.update { $0 = .pending(environment) }
    }

    /// Forgets the configured or opened vault; the next call opens the one the
    /// process environment names. A vault given to ``configure(vault:)`` is not locked.
    public static func reset() {
        state.update { $0 = .pending(nil) }
    }

    // MARK: - Internals

    enum Source {
        /// Open on the next call from these variables (`nil`: the process environment).
        case pending([String: String]?)
        case open(Vault)
        /// Every call goes to the agent.
        case agent(AgentItemStore)
    }

    /// The vault source behind a lock; the `Vault` is not `Sendable`, so it
    /// is only touched while the lock is held.
    final class LockedState: @unchecked Sendable {
        private let lock = NSLock()
        private var source: Source = .pending(nil)

        func withLock<R>(_ body: (inout Source) throws(SecItemFailure) -> R) throws(SecItemFailure) -> R {
            lock.lock()
            defer { lock.unlock() }
            return try body(&source)
        }

        func update(_ body: (inout Source) -> Void) {
            lock.lock()
            defer { lock.unlock() }
            body(&source)
        }
    }

    static let state = LockedState()

    /// Runs `body` with the vault, under the lock, opening it first if needed.
    static func withVault<R>(_ body: (any ItemBackend) throws(SecItemFailure) -> R) throws(SecItemFailure) -> R {
        try state.withLock { (source: inout Source) throws(SecItemFailure) -> R in
            switch source {
            case .open(let vault):
                return try body(vault)
            case .agent(let store):
                return try body(store)
            case .pending(let given):
                let environment = given ?? ProcessInfo.processInfo.environment
                if let store = agentStore(environment: environment) {
                    source = .agent(store)
                    return try body(store)
                }
                let vault = try openVault(environment: environment)
                source = .open(vault)
                return try body(vault)
            }
        }
    }

    /// The agent's store when the agent may be used and either holds the
    /// vault unlocked or there is no password file to fall back on.
    static func agentStore(environment: [String: String]) -> AgentItemStore? {
        guard environment["FOB_AGENT"] != "0" else { return nil }
        let store = AgentItemStore(
            client: AgentClient(endpoint: AgentEndpoint(vaultURL: vaultURL(environment), environment: environment)))
        let hasPasswordFile = !(environment["FOB_PASSWORD_FILE"] ?? "").isEmpty
        return !hasPasswordFile || store.isUnlocked ? store : nil
    }

    static func vaultURL(_ environment: [String: String]) -> URL {
        if let path = environment["FOB_VAULT"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return Vault.defaultURL(environment: environment)
    }

    /// Opens and unlocks the vault the environment names.
    static func openVault(environment: [String: String]) throws(SecItemFailure) -> Vault {
        let url = vaultURL(environment)
        guard let passwordPath = environment["FOB_PASSWORD_FILE"], !passwordPath.isEmpty else {
            throw SecItemFailure(
                errSecInteractionNotAllowed,
                "FOB_PASSWORD_FILE is not set, and a library cannot ask for the master password")
        }
        guard passwordPath != "-" else {
            throw SecItemFailure(
                errSecInteractionNotAllowed, "FOB_PASSWORD_FILE=- (standard input) is not read by the library")
        }
        let password = try readFirstLine(of: passwordPath)
        do {
            let vault = try Vault(url: url)
            try vault.unlock(password: password)
            // An old copy put back is refused here too (errSecDecode).
            try VaultWatermarks(environment: environment).check(vault)
            return vault
        } catch {
            throw SecItemFailure(error)
        }
    }

    /// The first line of the password file (``PasswordFile``).
    /// - Throws: `errSecInteractionNotAllowed` when it cannot be read (the
    ///   library cannot ask instead); `errSecParam` when the line is too long.
    static func readFirstLine(of path: String) throws(SecItemFailure) -> SecretBytes {
        do {
            return try PasswordFile.readFirstLine(path: path)
        } catch .io(let reason) {
            throw SecItemFailure(errSecInteractionNotAllowed, reason)
        } catch {
            throw SecItemFailure(error)
        }
    }
}

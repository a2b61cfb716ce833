import FobAccess
import FobStore
import Foundation

/// Chooses the vault behind the `SecItem…` functions: the access layer's
/// routing (``FobAccess/ItemAccess``), as the CLI uses it.
///
/// By default each call goes to the agent of the vault named by `FOB_VAULT`
/// (else ``FobStore/Vault/defaultURL(environment:)``) when the agent holds it
/// unlocked (`fob unlock`): no password file is needed, and a lock of the
/// agent (`fob lock`, a timeout) answers `errSecInteractionNotAllowed`, as
/// a locked iPhone does. Without `FOB_PASSWORD_FILE`, a stopped or locked
/// agent is `errSecInteractionNotAllowed` too. With it (and no agent holding
/// the vault unlocked, or `FOB_AGENT=0`), the vault is opened here and
/// unlocked with the first line of that file. A program can instead hand
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
        state.update { $0 = .store(VaultStore(vault: vault)) }
    }

    /// Makes the next `SecItem…` call open and unlock the vault named by these
    /// variables (`FOB_VAULT`, `FOB_PASSWORD_FILE`, `FOB_AGENT`, `XDG_DATA_HOME`, `HOME`)
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
        /// The store every call uses.
        case store(any RequestStore)
    }

    /// The vault source behind a lock; the store is not `Sendable`, so it
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

    /// Runs `body` with the store, under the lock, making it first if needed.
    static func withVault<R>(_ body: (any RequestStore) throws(SecItemFailure) -> R) throws(SecItemFailure) -> R {
        try state.withLock { (source: inout Source) throws(SecItemFailure) -> R in
            switch source {
            case .store(let store):
                return try body(store)
            case .pending(let given):
                let store = access(environment: given ?? ProcessInfo.processInfo.environment)
                source = .store(store)
                return try body(store)
            }
        }
    }

    /// The access layer's store for `environment`: the agent when it holds
    /// the vault unlocked, else the vault here with `FOB_PASSWORD_FILE`
    /// (a library never asks for the master password).
    static func access(environment: [String: String]) -> ItemAccess {
        let settings = AccessSettings(environment: environment)
        let password: PasswordSource =
            settings.passwordFile.map { .file($0) }
            ?? .none("FOB_PASSWORD_FILE is not set, and a library cannot ask for the master password")
        return ItemAccess(settings: settings, password: password)
    }
}

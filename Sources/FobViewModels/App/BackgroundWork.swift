import Dispatch
import FobAccess
import FobSessions
import FobStore
import FobSystem
import FoundationEssentials

/// Slow work kept off the UI thread (a refresh at an OAuth provider can take
/// up to its 30 s timeout), and the two ways it meets the UI thread again:
///
/// - ``BackgroundJob`` runs the work on a background queue and keeps its
///   result until the UI thread takes it, at its next ``AppModel/tick()``.
/// - ``UIThreadStore`` lets that work use the store, which stays on the UI
///   thread: each call waits in a ``UIThreadMailbox`` until the UI thread
///   runs it (at its next tick, every 200 ms or sooner), so the UI never
///   waits for the work, only the work for the UI.

/// Calls handed from background work to the UI thread.
///
/// A background thread calls ``perform(_:)`` and waits; the UI thread runs
/// whatever waits at each ``drain()``. Never call ``perform(_:)`` on the UI
/// thread: it would wait for itself.
final class UIThreadMailbox: @unchecked Sendable {
    private let lock = Lock()
    private var waiting: [() -> Void] = []

    /// From a background thread: runs `work` on the UI thread at its next
    /// ``drain()`` and returns what it returned.
    func perform<T>(_ work: @escaping () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        var result: T?
        lock.withLock {
            waiting.append {
                result = work()
                done.signal()
            }
        }
        done.wait()
        return result!
    }

    /// On the UI thread: runs every call waiting, in the order they came.
    func drain() {
        let calls = lock.withLock {
            defer { waiting = [] }
            return waiting
        }
        for call in calls { call() }
    }
}

/// Work running on a background queue, its result kept for the UI thread.
final class BackgroundJob<Value: Sendable>: @unchecked Sendable {
    private let lock = Lock()
    private var result: Value?

    /// Starts `work` at once on `queue`.
    init(queue: DispatchQueue = .global(qos: .userInitiated), _ work: @escaping @Sendable () -> Value) {
        queue.async {
            let value = work()
            self.lock.withLock { self.result = value }
        }
    }

    /// The result once the work has finished, or `nil` while it runs.
    var finished: Value? { lock.withLock { result } }
}

/// A ``KeychainStore`` for background work over the UI thread's store:
/// every call runs on the UI thread through a ``UIThreadMailbox``, except
/// ``withExclusiveLock(_:)``, which takes the vault's lock file on the
/// calling thread (it never touches the store), so a refresh holds the lock
/// across processes while it waits for the provider and the UI goes on.
final class UIThreadStore: KeychainStore, @unchecked Sendable {
    private let store: any KeychainStore
    private let mailbox: UIThreadMailbox
    let exclusiveLockVaultURL: URL?

    /// Built on the UI thread, over its `store`.
    init(_ store: any KeychainStore, mailbox: UIThreadMailbox) {
        self.store = store
        self.mailbox = mailbox
        exclusiveLockVaultURL = store.exclusiveLockVaultURL
    }

    private func onUIThread<T>(_ call: @escaping () throws(KeychainError) -> T) throws(KeychainError) -> T {
        try mailbox.perform { () -> Result<T, KeychainError> in
            do throws(KeychainError) { return .success(try call()) } catch { return .failure(error) }
        }.get()
    }

    var vaultExists: Bool { mailbox.perform { self.store.vaultExists } }
    var isLocked: Bool { mailbox.perform { self.store.isLocked } }

    func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        try onUIThread { () throws(KeychainError) in try self.store.create(password: password, kdf: kdf) }
    }

    func unlock(password: SecretBytes) throws(KeychainError) {
        try onUIThread { () throws(KeychainError) in try self.store.unlock(password: password) }
    }

    func lock() { mailbox.perform { self.store.lock() } }

    func allItems() throws(KeychainError) -> [Item] {
        try onUIThread { () throws(KeychainError) in try self.store.allItems() }
    }

    func add(_ item: Item) throws(KeychainError) {
        try onUIThread { () throws(KeychainError) in try self.store.add(item) }
    }

    func item(_ key: ItemKey) throws(KeychainError) -> Item {
        try onUIThread { () throws(KeychainError) in try self.store.item(key) }
    }

    func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item] {
        try onUIThread { () throws(KeychainError) in try self.store.items(matching: query, withSecrets: withSecrets) }
    }

    func save(service: String, account: String, secret: SecretBytes, attributes: ItemChanges) throws(KeychainError)
        -> Vault.SaveOutcome
    {
        try onUIThread { () throws(KeychainError) in
            try self.store.save(service: service, account: account, secret: secret, attributes: attributes)
        }
    }

    func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        try onUIThread { () throws(KeychainError) in try self.store.update(matching: query, with: changes) }
    }

    func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        guard let url = exclusiveLockVaultURL else { return try body() }
        return try Vault.withExclusiveLock(vaultURL: url, body)
    }

    @discardableResult
    func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        try onUIThread { () throws(KeychainError) in try self.store.delete(matching: query) }
    }

    func restore(_ changes: [ImportChange]) throws(KeychainError) {
        try onUIThread { () throws(KeychainError) in try self.store.restore(changes) }
    }

    func dataVersion() throws(KeychainError) -> Int64 {
        try onUIThread { () throws(KeychainError) in try self.store.dataVersion() }
    }

    func didWipeSessions() { mailbox.perform { self.store.didWipeSessions() } }

    func lockSession() -> String? { mailbox.perform { self.store.lockSession() } }

    var agentState: SessionAgentState { mailbox.perform { self.store.agentState } }

    func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError) -> [Item] {
        try withoutActuallyEscaping(predicate) { (escaping) throws(KeychainError) -> [Item] in
            try onUIThread { () throws(KeychainError) in
                try self.store.deleteItems(busyTimeoutMilliseconds: busyTimeoutMilliseconds, where: escaping)
            }
        }
    }
}

import FobAgent
import FobStore
import FoundationEssentials

/// The state of the process that holds the vault unlocked for the
/// session (Fob's agent), as the terminal UI's store last saw it.
public enum SessionAgentState: Sendable, Equatable {
    /// No agent takes part (`--no-agent`, or a store without one).
    case none
    /// The agent holds the vault unlocked; it locks by itself at `locksAt`
    /// (the earlier of its idle and maximum-time locks), `nil` when never.
    case unlocked(locksAt: Date?)
    /// The agent answers and is locked.
    case locked
    /// The agent took part but no longer answers: it stopped without a
    /// lock (killed, crashed), which is not a lock made elsewhere.
    case stopped
}

/// The item store every front end uses (the CLI, the terminal UI,
/// FobSecurity): add, get, query, update, delete, save, list and watch,
/// with the lock state around them. ``VaultStore`` is the vault opened in
/// this process, ``AgentStore`` the agent's, and ``ItemAccess`` the one
/// routing policy between them; FobTestSupport's `InMemoryStore` is a fake
/// for tests.
///
/// Instances are used from one thread at a time (the UI's, or a command's).
public protocol KeychainStore: AnyObject {
    /// Whether a vault exists to unlock (otherwise the create screen shows).
    var vaultExists: Bool { get }
    /// Whether the store holds no keys.
    var isLocked: Bool { get }
    /// Creates the vault, unlocked.
    /// - Throws: `.param` for an empty or too long password; `.io` if it exists or cannot be written.
    func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError)
    /// Unlocks with the master password.
    /// - Throws: `.authFailed` for a wrong password; `.noSuchKeychain`, `.decode`, `.io`.
    func unlock(password: SecretBytes) throws(KeychainError)
    /// Drops every key.
    func lock()
    /// Every item (any class and access group) as a listing shows it: no
    /// secret, no one-time seed, no custom field value (``ItemDetail/listing``).
    /// - Throws: `.interactionNotAllowed` when locked; `.decode`.
    func allItems() throws(KeychainError) -> [Item]
    /// Adds `item`.
    /// - Throws: `.duplicateItem` when it exists; `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    func add(_ item: Item) throws(KeychainError)
    /// Calls `onChange` (on a thread of its own) for each change of the
    /// store's items made by anyone, and when the store locks.
    /// - Returns: the watch (cancel it when done), or `nil` when this store
    ///   cannot tell of changes: then poll ``dataVersion()``.
    func watch(_ onChange: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)?
    /// Calls `onEvent` (on a thread of its own) for each event of the agent
    /// of this store's vault, whether or not the store is unlocked: a
    /// locked terminal UI hears the agent's requests to unlock
    /// (``AgentEvent/Kind/question``, ``AgentEvent/Kind/settled``).
    /// - Returns: the watch (cancel it when done), or `nil` when no agent runs for the vault.
    func watchAgent(_ onEvent: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)?
    /// Answers the agent's consent question `question` (an
    /// ``AgentEvent/Kind/question`` event that ``watch(_:)`` handed on).
    /// - Throws: `.itemNotFound` when it is no longer open; `.param` when
    ///   this store asks no questions or the peer is not Fob's terminal UI; `.io`.
    func answer(question: UInt64, _ answer: AccessAnswer) throws(KeychainError)
    /// The item with this key, with its secret.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.decode`.
    func item(_ key: ItemKey) throws(KeychainError) -> Item
    /// Items matching `query`; `.itemNotFound` when none.
    /// - Parameter withSecrets: whether to decrypt secrets.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.decode`.
    func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item]
    /// Adds or updates the generic password with this service and account
    /// (empty access group); `attributes` are set on either path.
    /// - Returns: whether it was added or replaced.
    /// - Throws: `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    func save(service: String, account: String, secret: SecretBytes, attributes: ItemChanges) throws(KeychainError)
        -> Vault.SaveOutcome
    /// Changes every item matching `query`, in one transaction.
    /// - Returns: how many were changed.
    /// - Throws: `.itemNotFound` when none; `.duplicateItem`, `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int
    /// Runs `body` holding the store's exclusive lock across processes
    /// (a refresh that must reach the provider only once).
    /// - Throws: what `body` throws; `.io` when the lock cannot be taken.
    func withExclusiveLock<R>(_ body: () throws -> R) throws -> R
    /// The vault file whose lock ``withExclusiveLock(_:)`` takes
    /// (`Vault.withExclusiveLock(vaultURL:_:)`), so that work on another
    /// thread can hold the same lock without using the store; `nil` for a
    /// store without a lock across processes (default).
    var exclusiveLockVaultURL: URL? { get }
    /// Deletes every item matching `query`.
    @discardableResult
    /// - Returns: how many were deleted.
    /// - Throws: `.itemNotFound` when none; `.interactionNotAllowed`, `.io`.
    func delete(matching query: ItemQuery) throws(KeychainError) -> Int
    /// Puts items back exactly as given (creation and modification dates,
    /// persistent ID, secret, every attribute), all in one transaction: the
    /// terminal UI's undo of a delete (`.add`) or of a replaced secret
    /// (`.replace`); see `Vault.applyImport(_:progress:)`.
    /// - Throws: `.duplicateItem` when an added key exists; `.itemNotFound`
    ///   when an item to replace is gone; `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    func restore(_ changes: [ImportChange]) throws(KeychainError)
    /// A number that changes when another process commits a change (SQLite `PRAGMA data_version`).
    /// - Throws: `.io`, `.decode`.
    func dataVersion() throws(KeychainError) -> Int64

    /// Called after a logout wipe deleted every session item it found
    /// (default: nothing; the terminal UI's store locks the agent).
    func didWipeSessions()

    /// Locks the vault for every process of the session, as `fob lock`
    /// does: the terminal UI's Ctrl-L and idle lock (default: nothing beyond
    /// ``lock()``, which the caller does; the terminal UI's store tells the agent to lock).
    /// - Returns: `nil` when every process's keys are dropped (or no agent
    ///   runs), else why the agent did not lock (such as an agent of another
    ///   version), for the caller to say rather than "Locked".
    @discardableResult
    func lockSession() -> String?

    /// The session's agent as last seen (default ``SessionAgentState/none``).
    var agentState: SessionAgentState { get }

    /// Deletes every item for which `predicate` holds, all in one
    /// transaction, waiting at most `busyTimeoutMilliseconds` for another
    /// process's write lock; see `Vault.deleteItems(busyTimeoutMilliseconds:where:)`.
    /// - Returns: the deleted items, without secrets.
    /// - Throws: `.io` (``KeychainError/isBusy`` when the vault stayed busy), `.interactionNotAllowed`, `.decode`.
    func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError) -> [Item]

    /// The vault's access log entries that pass `filter`, oldest first,
    /// verified: through the agent's ``AgentRequest/accessLog(_:)`` while it
    /// holds the vault, else read here (default: `.param`, no log).
    /// - Throws: `.interactionNotAllowed` unless fully unlocked; `.decode`
    ///   when the log's key does not open; `.param` for a store without a log.
    func accessLog(_ filter: AccessLogFilter) throws(KeychainError) -> AccessLogAnswer

    /// The vault's access default (``Vault/accessDefault()``): what an item
    /// with no mode of its own follows (default: `.any`, a store without rules).
    /// - Throws: `.decode` when the stored default was changed without the vault key; `.io`.
    func accessDefault() throws(KeychainError) -> AccessRule.Mode
}

/// The access log as a store answers it: the entries that passed the
/// filter, oldest first, and what is wrong with the log (empty: it verifies).
public struct AccessLogAnswer: Sendable {
    /// The entries, oldest first.
    public var records: [AccessLogRecord]
    /// Each problem found, as `fob verify` words it.
    public var problems: [String]

    /// - Parameters: as the properties.
    public init(records: [AccessLogRecord], problems: [String]) {
        self.records = records
        self.problems = problems
    }

    /// The log of `vault`, read here (it must be fully unlocked).
    /// - Parameters:
    ///   - vault: fully unlocked.
    ///   - headDirectory: where the log's head state is kept (``AccessLogHead``), or `nil`.
    ///   - filter: the entries to keep.
    /// - Throws: `.interactionNotAllowed` unless fully unlocked; `.decode` when the log key does not open.
    public static func read(from vault: Vault, headDirectory: String?, filter: AccessLogFilter) throws(KeychainError)
        -> AccessLogAnswer
    {
        guard vault.lockLevel == .unlocked else { throw .interactionNotAllowed("the vault is locked") }
        let location = AccessLogLocation(vaultURL: vault.url)
        guard let key = try vault.accessLogKey(create: false) else {
            return AccessLogAnswer(
                records: [], problems: location.exists ? [AccessLogProblem.keyMissing.description] : [])
        }
        let keys = AccessLogKeys(logKey: key)
        let head = headDirectory.flatMap { AccessLogHead.read(AccessLogHead.path(directory: $0, keys: keys)) }
        let report = AccessLogReader.read(location, keys: keys, head: head)
        return AccessLogAnswer(
            records: report.records.filter { filter.matches($0.entry) }, problems: report.problems.map(\.description))
    }
}

/// A running ``KeychainStore/watch(_:)``.
public protocol StoreWatch: AnyObject, Sendable {
    /// Whether changes may still be reported (`false` once the agent stopped or locked the link).
    var isActive: Bool { get }
    /// Stops reporting changes.
    func cancel()
}

extension AgentSubscription: StoreWatch {}

/// A store whose item operations are agent requests (``AgentRequest``): the
/// vault here runs them with ``ItemOperations/perform(_:on:)``, the agent
/// runs the same function, so results and errors are the same either way.
public protocol RequestStore: KeychainStore {
    /// Runs one item request: `.get`, `.list`, `.add`, `.save`, `.update`,
    /// `.delete` or `.applyImport`.
    /// - Returns: the answer (never `.failure`: that is thrown).
    /// - Throws: the ``KeychainError`` of the operation.
    func perform(_ request: AgentRequest) throws(KeychainError) -> AgentResponse

    /// Hands each item matching `query` to `body`, with as much of each as
    /// `detail` says, in the order ``items(matching:limit:detail:)`` returns
    /// them; a store may decode them one at a time, so that thousands never
    /// live decoded at once (the agent's store does).
    /// - Throws: `.itemNotFound` when none matches (`body` is not called);
    ///   `.interactionNotAllowed`, `.decode`, `.io`.
    func forEachItem(matching query: ItemQuery, detail: ItemDetail, _ body: (Item) -> Void) throws(KeychainError)
}

extension RequestStore {
    public func add(_ item: Item) throws(KeychainError) { _ = try perform(.add(item)) }

    /// The items of ``items(matching:limit:detail:)``, one after another.
    public func forEachItem(matching query: ItemQuery, detail: ItemDetail, _ body: (Item) -> Void)
        throws(KeychainError)
    {
        for item in try items(matching: query, limit: .all, detail: detail) { body(item) }
    }

    /// The items matching `query` with as much of each as `detail` says.
    /// - Throws: `.itemNotFound` when none; `.interactionNotAllowed`, `.decode`.
    public func items(matching query: ItemQuery, limit: MatchLimit = .all, detail: ItemDetail) throws(KeychainError)
        -> [Item]
    {
        guard case .items(let found) = try perform(.get(query, limitOne: limit == .one, detail: detail)) else {
            throw .io("unexpected answer to get")
        }
        return found
    }

    /// The items matching `query`: every attribute, and the secret when `withSecrets`.
    /// - Throws: `.itemNotFound` when none; `.interactionNotAllowed`, `.decode`.
    public func items(matching query: ItemQuery, limit: MatchLimit, withSecrets: Bool) throws(KeychainError) -> [Item] {
        try items(matching: query, limit: limit, detail: withSecrets ? .secret : .attributes)
    }

    public func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item] {
        try items(matching: query, limit: .all, withSecrets: withSecrets)
    }

    public func item(_ key: ItemKey) throws(KeychainError) -> Item {
        try item(key, detail: .secret)
    }

    /// The item with this primary key, with only as much as `detail` says:
    /// `.listing` reads no secret, so the access rules do not ask for it.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.decode`;
    ///   `.accessDenied` when a rule or a person refuses a read of secrets.
    public func item(_ key: ItemKey, detail: ItemDetail) throws(KeychainError) -> Item {
        try items(matching: key.query, limit: .one, detail: detail)[0]
    }

    /// ``item(_:detail:)``, or nil when no item has this key.
    /// - Throws: as ``item(_:detail:)``, except `.itemNotFound`.
    public func itemIfPresent(_ key: ItemKey, detail: ItemDetail) throws(KeychainError) -> Item? {
        do { return try item(key, detail: detail) } catch {
            if case .itemNotFound = error { return nil }
            throw error
        }
    }

    /// The generic password with this service and account (empty access group), with its secret.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.decode`.
    public func item(service: String, account: String) throws(KeychainError) -> Item {
        try item(ItemKey(service: service, account: account))
    }

    /// Every item, or those of one service (of any class), as a listing
    /// shows them, in ``ListingOrder``; empty when there are none.
    /// - Throws: `.interactionNotAllowed`, `.decode`.
    public func list(service: String? = nil) throws(KeychainError) -> [Item] {
        guard case .items(let found) = try perform(.list(service: service)) else {
            throw .io("unexpected answer to list")
        }
        return found
    }

    public func allItems() throws(KeychainError) -> [Item] { try list() }

    /// The items with these persistent IDs (``Item/persistentID``), in the
    /// order asked, with as much of each as `detail` says; an ID no item has
    /// is left out (``AgentRequest/getItems(ids:detail:)``). Through the
    /// agent only the records of the items asked are decrypted.
    /// - Throws: `.interactionNotAllowed` while locked; `.param` past
    ///   ``AgentProtocol/maxIDsPerRequest`` IDs; `.decode`, `.io`.
    public func items(ids: [UUID], detail: ItemDetail) throws(KeychainError) -> [Item] {
        guard case .items(let found) = try perform(.getItems(ids: ids, detail: detail)) else {
            throw .io("unexpected answer to get")
        }
        return found
    }

    /// Runs a write (`.add`, `.save`, `.update`, `.delete`, `.applyImport`)
    /// and returns what it changed: how many items (for `.save`, 1 = added,
    /// 0 = updated) and, for each item changed, its new revision and
    /// summary (``AgentEvent``, no secret), so that the writer can patch its
    /// own state without reading the items back.
    /// - Throws: the write's ``KeychainError``; `.io` for an answer that is not a write's.
    public func write(_ request: AgentRequest) throws(KeychainError) -> (count: Int, changes: [AgentEvent]) {
        guard case .written(let count, let changes) = try perform(request) else {
            throw .io("unexpected answer to a write")
        }
        return (count, changes)
    }

    public func save(service: String, account: String, secret: SecretBytes, attributes: ItemChanges)
        throws(KeychainError) -> Vault.SaveOutcome
    {
        let added = try write(.save(service: service, account: account, secret: secret, changes: attributes)).count
        return added == 1 ? .added : .updated
    }

    @discardableResult
    public func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        try write(.update(query, changes)).count
    }

    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        try write(.delete(query)).count
    }
}

/// The vault opened in this process (opened on first use).
public final class VaultStore: RequestStore {
    /// The vault file.
    public let url: URL
    /// The open vault, once created or unlocked.
    public private(set) var vault: Vault?
    private let now: @Sendable () -> Date

    /// A store for the vault at `url`; nothing is opened yet.
    /// - Parameter now: the clock for item dates.
    public init(url: URL, now: @escaping @Sendable () -> Date = Date.init) {
        self.url = url
        self.now = now
    }

    /// Wraps an already open vault.
    public init(vault: Vault) {
        self.url = vault.url
        self.vault = vault
        self.now = Date.init
    }

    public var vaultExists: Bool { vault != nil || Vault.exists(at: url) }
    public var isLocked: Bool { vault?.isLocked ?? true }

    public func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        vault = try Vault.create(at: url, password: password, kdf: kdf, now: now)
    }

    public func unlock(password: SecretBytes) throws(KeychainError) {
        try opened().unlock(password: password)
    }

    public func lock() { vault?.lock() }

    public func perform(_ request: AgentRequest) throws(KeychainError) -> AgentResponse {
        try ItemOperations.perform(request, on: try opened())
    }

    /// Applies an import plan in one transaction, reporting `progress`
    /// (changes prepared so far); see ``Vault/applyImport(_:progress:)``.
    public func applyImport(_ changes: [ImportChange], progress: @escaping (Int) -> Void) throws(KeychainError) {
        try opened().applyImport(changes, progress: progress)
    }

    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try opened().withExclusiveLock(body)
    }

    public var exclusiveLockVaultURL: URL? { url }

    public func restore(_ changes: [ImportChange]) throws(KeychainError) {
        try opened().applyImport(changes)
    }

    public func dataVersion() throws(KeychainError) -> Int64 {
        guard let vault else { return 0 }
        return try vault.dataVersion()
    }

    public func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError)
        -> [Item]
    {
        try opened().deleteItems(busyTimeoutMilliseconds: busyTimeoutMilliseconds, where: predicate)
    }

    /// The log of the vault opened here (no head state: what was cut off
    /// the end unnoticed is left to `fob verify`).
    public func accessLog(_ filter: AccessLogFilter) throws(KeychainError) -> AccessLogAnswer {
        try AccessLogAnswer.read(from: try opened(), headDirectory: nil, filter: filter)
    }

    /// Verified while unlocked; while locked, the stored mode as the file
    /// says (``Vault/storedAccessDefault()``), which is only shown, never enforced.
    public func accessDefault() throws(KeychainError) -> AccessRule.Mode {
        let vault = try opened()
        return vault.isLocked ? try vault.storedAccessDefault() : try vault.accessDefault()
    }

    /// Opens the vault file, without unlocking it.
    /// - Throws: `.noSuchKeychain`, `.decode`, `.io`.
    @discardableResult
    public func opened() throws(KeychainError) -> Vault {
        if let vault { return vault }
        let opened = try Vault(url: url, now: now)
        vault = opened
        return opened
    }
}

extension KeychainStore {
    /// No notifications: poll ``dataVersion()``.
    public func watch(_ onChange: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)? { nil }

    /// No agent.
    public func watchAgent(_ onEvent: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)? { nil }

    /// No agent, so no question to answer.
    public func answer(question: UInt64, _ answer: AccessAnswer) throws(KeychainError) {
        throw .param("no agent asks this store's questions")
    }

    /// No lock file: ``withExclusiveLock(_:)`` locks nothing outside the process.
    public var exclusiveLockVaultURL: URL? { nil }

    /// Called after a logout wipe deleted every session item it found; a
    /// store linked to the agent locks the agent there. Does nothing by default.
    public func didWipeSessions() {}

    /// No agent: nothing beyond ``lock()``.
    @discardableResult
    public func lockSession() -> String? { nil }

    /// No agent.
    public var agentState: SessionAgentState { .none }

    /// No access log.
    public func accessLog(_ filter: AccessLogFilter) throws(KeychainError) -> AccessLogAnswer {
        throw .param("this store keeps no access log")
    }

    /// No access rules: every program reads, as before rules.
    public func accessDefault() throws(KeychainError) -> AccessRule.Mode { .any }

    /// Adds or updates the generic password with this service and account,
    /// changing no other attribute; see ``save(service:account:secret:attributes:)``.
    /// - Throws: `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    public func save(service: String, account: String, secret: SecretBytes) throws(KeychainError) -> Vault.SaveOutcome {
        try save(service: service, account: account, secret: secret, attributes: ItemChanges())
    }
}

import FobAccess
import FobAgent
import FobSessions
import FobStore
import Foundation

/// A store in memory for tests: a password, items, a data version you can
/// bump to simulate another process, and injectable failures.
public final class InMemoryStore: KeychainStore {
    /// The master password (`nil`: no vault yet).
    public private(set) var password: SecretBytes?
    /// The KDF parameters given to ``create(password:kdf:)``.
    public private(set) var createdKDF: KDFParameters?
    /// The stored items, with secrets.
    public private(set) var storedItems: [ItemKey: Item] = [:]
    /// Whether the fake is locked (it starts locked).
    public private(set) var isLocked = true
    /// The value ``dataVersion()`` returns.
    public var version: Int64 = 1
    /// Deletes of these keys fail with `.io`.
    public var failingDeletes: Set<ItemKey> = []
    /// When set, every operation but lock throws this.
    public var failure: KeychainError?
    /// How many times each operation ran, by name ("unlock", "allItems", …).
    public private(set) var calls: [String: Int] = [:]
    /// The clock for item dates.
    public var now: () -> Date
    /// What ``agentState`` answers (a test sets `.stopped` to play a killed agent).
    public var agentState: SessionAgentState = .none

    /// The handler the last ``watchAgent(_:)`` was given, and how many times it was called.
    private var agentHandler: (@Sendable (AgentEvent) -> Void)?
    /// How many times ``watchAgent(_:)`` was called.
    public private(set) var agentWatches = 0

    /// Listens as a store with an agent does: ``agentSends(_:)`` hands the handler an event.
    public func watchAgent(_ onEvent: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)? {
        agentWatches += 1
        agentHandler = onEvent
        let watch = OpenWatch()
        lastAgentWatch = watch
        return watch
    }

    private var lastAgentWatch: OpenWatch?
    /// Whether the last ``watchAgent(_:)`` still listens (not cancelled).
    public var agentWatchIsActive: Bool { lastAgentWatch?.isActive ?? false }

    /// Hands `event` to the last ``watchAgent(_:)`` handler, as the agent's feed would.
    public func agentSends(_ event: AgentEvent) { agentHandler?(event) }

    /// A watch that stays active until cancelled.
    private final class OpenWatch: StoreWatch, @unchecked Sendable {
        private(set) var isActive = true
        func cancel() { isActive = false }
    }

    /// An empty store; with `password`, a vault exists (locked).
    public init(password: String? = nil, now: @escaping () -> Date = Date.init) {
        self.password = password.map { SecretBytes(utf8: $0) }
        self.now = now
    }

    public var vaultExists: Bool { password != nil }

    /// Runs at the start of every write (save, update, delete), before the
    /// store reads what it writes over: a test puts another process's write there.
    public var beforeWrite: (() -> Void)?

    /// Puts an item in place as another process would (bumps ``version``),
    /// one revision past the item it replaces (1 for a new one).
    public func externalPut(_ item: Item) {
        var item = item
        item.revision = (storedItems[ItemKey(item)]?.revision ?? 0) + 1
        storedItems[ItemKey(item)] = item
        version += 1
    }

    /// Renames an item as another process would (`fob rename`; bumps
    /// ``version``): the item keeps its persistent id and moves one revision on.
    public func externalRename(_ key: ItemKey, to new: ItemKey) {
        guard var item = storedItems.removeValue(forKey: key) else { return }
        item.service = new.service
        item.account = new.account
        item.revision += 1
        item.modified = now()
        storedItems[ItemKey(item)] = item
        version += 1
    }

    /// Removes an item as another process would (bumps ``version``).
    public func externalRemove(_ key: ItemKey) {
        storedItems[key] = nil
        version += 1
    }

    private func record(_ name: String) throws(KeychainError) {
        calls[name, default: 0] += 1
        if let failure { throw failure }
    }

    private func requireUnlocked() throws(KeychainError) {
        if isLocked { throw .interactionNotAllowed("the vault is locked") }
    }

    public func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        try record("create")
        guard self.password == nil else { throw .io("a file already exists") }
        guard password.count > 0 else { throw .param("the master password is empty") }
        self.password = password
        createdKDF = kdf
        isLocked = false
    }

    public func unlock(password: SecretBytes) throws(KeychainError) {
        try record("unlock")
        guard let stored = self.password else { throw .noSuchKeychain("memory") }
        guard stored == password else { throw .authFailed }
        isLocked = false
    }

    public func lock() {
        calls["lock", default: 0] += 1
        isLocked = true
    }

    /// The access log ``accessLog(_:)`` answers, oldest first (filtered as the agent filters).
    public var accessLogRecords: [AccessLogRecord] = []
    /// The log's problems ``accessLog(_:)`` answers.
    public var accessLogProblems: [String] = []
    /// What ``accessDefault()`` answers (a new vault's, ``Vault/newVaultAccessDefault``, unless set).
    public var accessDefaultMode = Vault.newVaultAccessDefault

    /// Counted in ``calls`` as "accessLog"; `.interactionNotAllowed` while locked.
    public func accessLog(_ filter: AccessLogFilter) throws(KeychainError) -> AccessLogAnswer {
        try record("accessLog")
        try requireUnlocked()
        return AccessLogAnswer(
            records: accessLogRecords.filter { filter.matches($0.entry) }, problems: accessLogProblems)
    }

    /// ``accessDefaultMode``.
    public func accessDefault() throws(KeychainError) -> AccessRule.Mode { accessDefaultMode }

    /// Why the agent does not lock (as one of another version answers), or
    /// `nil` for an agent that locks: ``lockSession()`` returns it.
    public var agentLockRefusal: String?

    /// Counted in ``calls`` as "lockSession": the lock of every process of the session.
    /// - Returns: ``agentLockRefusal``.
    @discardableResult
    public func lockSession() -> String? {
        calls["lockSession", default: 0] += 1
        return agentLockRefusal
    }

    /// Locks as another process would (`fob lock`, an agent's timeout or stop).
    public func externalLock() {
        isLocked = true
    }

    public func allItems() throws(KeychainError) -> [Item] {
        try record("allItems")
        try requireUnlocked()
        return storedItems.values.map { item in
            var copy = item
            copy.secret = nil
            return copy
        }.sorted { ($0.service, $0.account) < ($1.service, $1.account) }
    }

    public func add(_ item: Item) throws(KeychainError) {
        try record("add")
        try requireUnlocked()
        let key = ItemKey(item)
        guard storedItems[key] == nil else {
            throw .duplicateItem("service \"\(key.service)\", account \"\(key.account)\"")
        }
        storedItems[key] = item
    }

    public func item(_ key: ItemKey) throws(KeychainError) -> Item {
        try record("item")
        try requireUnlocked()
        guard let item = storedItems[key] else {
            throw .itemNotFound("service \"\(key.service)\", account \"\(key.account)\"")
        }
        return item
    }

    public func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item] {
        try record("items")
        try requireUnlocked()
        let found = storedItems.values.filter { query.matches($0) }.map { item -> Item in
            var copy = item
            if !withSecrets { copy.secret = nil }
            return copy
        }.sorted { ($0.service, $0.account) < ($1.service, $1.account) }
        guard !found.isEmpty else { throw .itemNotFound("service \"\(query.service ?? "")\"") }
        return found
    }

    public func save(service: String, account: String, secret: SecretBytes, attributes: ItemChanges)
        throws(KeychainError) -> Vault.SaveOutcome
    {
        try record("save")
        try requireUnlocked()
        beforeWrite?()
        let key = ItemKey(service: service, account: account)
        let stamp = now()
        var changes = attributes
        changes.secret = secret
        if var existing = storedItems[key] {
            try Self.check(existing, expected: changes.expectedRevision)
            changes.apply(to: &existing, now: stamp)
            existing.revision += 1
            storedItems[key] = existing
            return .updated
        }
        if let expected = changes.expectedRevision, expected != 0 {
            throw .itemNotFound(Item(service: service, account: account, secret: nil).displayName)
        }
        var item = Item(service: service, account: account, created: stamp, modified: stamp, secret: secret)
        changes.apply(to: &item, now: stamp)
        item.revision = 1
        storedItems[key] = item
        return .added
    }

    public func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        try record("update")
        try requireUnlocked()
        beforeWrite?()
        let found = try items(matching: query, withSecrets: true)
        for item in found { try Self.check(item, expected: changes.expectedRevision) }
        // As the vault: a rename onto another stored item is refused, nothing changes.
        for var item in found {
            let old = ItemKey(item)
            changes.apply(to: &item, now: now())
            if ItemKey(item) != old, storedItems[ItemKey(item)] != nil { throw .duplicateItem(item.displayName) }
        }
        for var item in found {
            storedItems[ItemKey(item)] = nil
            changes.apply(to: &item, now: now())
            item.revision += 1
            storedItems[ItemKey(item)] = item
        }
        return found.count
    }

    /// As the vault: `.revisionMismatch` unless `expected` is `nil` or the item's revision.
    private static func check(_ item: Item, expected: UInt64?) throws(KeychainError) {
        guard let expected, expected != item.revision else { return }
        throw .revisionMismatch(item.displayName, expected: expected, current: item.revision)
    }

    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try body()
    }

    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        try record("delete")
        try requireUnlocked()
        beforeWrite?()
        let found = try items(matching: query, withSecrets: false)
        for item in found { try Self.check(item, expected: query.expectedRevision) }
        for item in found where failingDeletes.contains(ItemKey(item)) {
            throw .io("cannot delete \(item.displayName)")
        }
        for item in found { storedItems[ItemKey(item)] = nil }
        return found.count
    }

    /// All or nothing, dates and persistent IDs as given.
    public func restore(_ changes: [ImportChange]) throws(KeychainError) {
        try record("restore")
        try requireUnlocked()
        var next = storedItems
        for change in changes {
            switch change {
            case .add(var item):
                guard next[ItemKey(item)] == nil else { throw .duplicateItem(item.displayName) }
                // As the vault: revision 1, or the one the item carries.
                if item.revision == 0 { item.revision = 1 }
                next[ItemKey(item)] = item
            case .replace(let existing, var item):
                guard let stored = next[ItemKey(existing)] else { throw .itemNotFound(existing.displayName) }
                // As the vault: the replacement takes the next revision of the one it replaces.
                item.revision = stored.revision + 1
                next[ItemKey(existing)] = nil
                next[ItemKey(item)] = item
            case .delete(let existing):
                guard next[ItemKey(existing)] != nil else { throw .itemNotFound(existing.displayName) }
                next[ItemKey(existing)] = nil
            }
        }
        storedItems = next
    }

    public func dataVersion() throws(KeychainError) -> Int64 {
        try record("dataVersion")
        return version
    }

    /// All or nothing, like the vault's one transaction: an item in
    /// `failingDeletes` fails the call before anything is deleted.
    public func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError)
        -> [Item]
    {
        try record("deleteItems")
        try requireUnlocked()
        let found = (try? items(matching: ItemQuery(itemClass: nil), withSecrets: false))?.filter(predicate) ?? []
        for item in found where failingDeletes.contains(ItemKey(item)) {
            throw .io("cannot delete \(item.displayName)")
        }
        for item in found { storedItems[ItemKey(item)] = nil }
        return found
    }
}

import FobAccess
import FobAgent
import FobStore
import FoundationEssentials

/// The item store the Secret Service provider works on: the few calls it
/// needs, so that the store behind them (today the agent) is one type to change.
/// Every call answers `.interactionNotAllowed` while the vault is locked.
public protocol SecretStore: AnyObject, Sendable {
    /// Whether the vault is unlocked (items can be read and written).
    var isUnlocked: Bool { get }
    /// Every generic password, without secrets.
    /// - Throws: `.interactionNotAllowed` while locked, `.io`.
    func list() throws(KeychainError) -> [Item]
    /// Every generic password with its secret (one request, for `GetSecrets` of many items).
    /// - Throws: as ``list()``.
    func listWithSecrets() throws(KeychainError) -> [Item]
    /// Hands every generic password to `body`, one at a time as they are
    /// decoded, so that thousands never live decoded at once: without
    /// secrets (as ``list()``), or with them, where only the persistent ID
    /// and the secret are needed (at least those of ``listWithSecrets()``).
    /// - Throws: as ``list()``.
    func forEachItem(withSecrets: Bool, _ body: (Item) -> Void) throws(KeychainError)
    /// The generic password with this persistent ID, with its secret when asked.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func get(persistentID: UUID, withSecret: Bool) throws(KeychainError) -> Item
    /// The item that `query` names by primary key and persistent ID
    /// (``ItemQuery/identifying(_:)`` of an item listed before: an
    /// indexed lookup, unlike ``get(persistentID:withSecret:)``, which scans),
    /// with its secret when asked.
    /// - Throws: `.itemNotFound` when it is gone or was renamed, `.interactionNotAllowed`, `.io`.
    func get(exact query: ItemQuery, withSecret: Bool) throws(KeychainError) -> Item
    /// Whether an item has this primary key (generic password, access group "").
    func exists(service: String, account: String) throws(KeychainError) -> Bool
    /// Adds an item (its persistent ID is the one given).
    /// - Throws: `.duplicateItem`, `.param`, `.interactionNotAllowed`, `.io`.
    func add(_ item: Item) throws(KeychainError)
    /// Changes the item read at revision `item.revision`.
    /// - Throws: `.revisionMismatch` when it changed since, `.itemNotFound`, `.interactionNotAllowed`.
    func update(_ item: Item, with changes: ItemChanges) throws(KeychainError)
    /// Deletes the item read at revision `item.revision`.
    /// - Throws: as ``update(_:with:)``.
    func delete(_ item: Item) throws(KeychainError)
    /// Locks the vault for every process.
    func lock() throws(KeychainError)
    /// Unlocks the vault with its master password (for every process),
    /// keeping the idle and maximum times the user last set.
    /// - Throws: `.authFailed` for a wrong password, `.interactionNotAllowed` when no agent runs, `.io`.
    func unlock(password: SecretBytes) throws(KeychainError)
    /// Calls `onEvent` (on another thread) at each of the agent's events:
    /// a lock (also by a timeout) or a write by any process.
    /// - Returns: the subscription, or `nil` when the store sends no events.
    func watch(_ onEvent: @escaping @Sendable () -> Void) -> (any StoreWatch)?
    /// Makes the following requests for the D-Bus client with this process
    /// id (`nil`: for the provider itself), so that the agent asks about,
    /// and its rules match, the client rather than the provider.
    func makeRequests(forClient pid: Int32?)
}

extension SecretStore {
    /// The items of ``list()`` or ``listWithSecrets()``, one after another.
    public func forEachItem(withSecrets: Bool, _ body: (Item) -> Void) throws(KeychainError) {
        for item in try withSecrets ? listWithSecrets() : list() { body(item) }
    }

    /// A store with no requester to name: nothing to do.
    public func makeRequests(forClient pid: Int32?) {}

    /// No events: the provider asks the store's state instead.
    public func watch(_ onEvent: @escaping @Sendable () -> Void) -> (any StoreWatch)? { nil }
}

/// ``SecretStore`` over the vault's agent, the only holder of its keys,
/// through the access layer's ``FobAccess/AgentStore``.
public final class AgentSecretStore: SecretStore, @unchecked Sendable {
    private let store: AgentStore

    /// - Parameter client: the agent of the vault.
    public init(client: AgentClient) { store = AgentStore(client: client) }

    /// The store of the agent of the vault at `vaultPath`.
    /// - Parameter environment: where the agent's socket is found (`XDG_RUNTIME_DIR`, `FOB_AGENT_SOCKET`, …).
    public convenience init(vaultPath: String, environment: [String: String]) {
        self.init(
            client: AgentClient(
                endpoint: AgentEndpoint(vaultURL: URL(fileURLWithPath: vaultPath), environment: environment)))
    }

    public var isUnlocked: Bool { store.isUnlocked }

    public func makeRequests(forClient pid: Int32?) { store.clientPID = pid }

    public func list() throws(KeychainError) -> [Item] {
        do {
            // Every attribute: a client's attributes are custom field values.
            return try store.items(matching: ItemQuery(itemClass: .genericPassword), detail: .attributes)
        } catch .itemNotFound {
            return []
        }
    }

    public func listWithSecrets() throws(KeychainError) -> [Item] {
        do {
            return try store.items(matching: ItemQuery(itemClass: .genericPassword), withSecrets: true)
        } catch .itemNotFound {
            return []
        }
    }

    public func forEachItem(withSecrets: Bool, _ body: (Item) -> Void) throws(KeychainError) {
        do {
            // Every attribute (a client's attributes are custom field
            // values), or the secrets alone: the listing has the rest.
            try store.forEachItem(
                matching: ItemQuery(itemClass: .genericPassword), detail: withSecrets ? .secretOnly : .attributes, body)
        } catch .itemNotFound {
            return
        }
    }

    public func get(persistentID: UUID, withSecret: Bool) throws(KeychainError) -> Item {
        var query = ItemQuery(itemClass: .genericPassword)
        query.persistentID = persistentID
        guard let item = try store.items(matching: query, limit: .one, withSecrets: withSecret).first else {
            throw .itemNotFound("no item \(persistentID)")
        }
        return item
    }

    public func get(exact query: ItemQuery, withSecret: Bool) throws(KeychainError) -> Item {
        guard let found = try store.items(matching: query, limit: .one, withSecrets: withSecret).first else {
            throw .itemNotFound("no item \(query.persistentID.map { "\($0)" } ?? "")")
        }
        return found
    }

    public func exists(service: String, account: String) throws(KeychainError) -> Bool {
        do {
            return try !store.items(matching: .key(service: service, account: account), limit: .one, detail: .listing)
                .isEmpty
        } catch .itemNotFound {
            return false
        }
    }

    public func add(_ item: Item) throws(KeychainError) { try store.add(item) }

    public func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) {
        var changes = changes
        changes.expectedRevision = item.revision
        try store.update(matching: .identifying(item), with: changes)
    }

    public func delete(_ item: Item) throws(KeychainError) {
        var query = ItemQuery.identifying(item)
        query.expectedRevision = item.revision
        try store.delete(matching: query)
    }

    /// Unlocks with the timeouts of the agent's last unlock (`fob unlock --idle --max`), else the defaults.
    public func unlock(password: SecretBytes) throws(KeychainError) {
        try answer(
            .unlock(password: password, idleSeconds: AgentCore.keepTimeouts, maxSeconds: AgentCore.keepTimeouts))
    }

    public func watch(_ onEvent: @escaping @Sendable () -> Void) -> (any StoreWatch)? {
        store.watch { _ in onEvent() }
    }

    public func lock() throws(KeychainError) {
        do {
            try answer(.lock)
        } catch .interactionNotAllowed where !AgentClient.isAnswering(store.client.endpoint) {
            // No agent: nothing holds the vault unlocked.
        }
    }

    /// Sends a request whose answer is only success or failure.
    private func answer(_ request: AgentRequest) throws(KeychainError) {
        do {
            let answer = try store.client.send(request)
            if case .failure(let error) = answer { throw error }
        } catch let error as AgentClientError {
            throw error.keychainError
        } catch let error as KeychainError {
            throw error
        } catch {
            throw .io("\(error)")
        }
    }
}

extension ItemQuery {
    /// ``exact(for:)`` narrowed to `item`'s ``Item/persistentID`` too: that
    /// one item while its primary key is unchanged, by an indexed lookup.
    static func identifying(_ item: Item) -> ItemQuery {
        var query = exact(for: item)
        query.persistentID = item.persistentID
        return query
    }
}

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
    /// Hands every generic password, without its secret but with every
    /// attribute (a client's attributes are custom field values), to
    /// `body`, one at a time as they are decoded, so that thousands never
    /// live decoded at once.
    /// - Throws: `.interactionNotAllowed` while locked, `.io`.
    func forEachItem(_ body: (Item) -> Void) throws(KeychainError)
    /// The items with these persistent IDs, with as much of each as
    /// `detail` says, in the order asked; an ID no item has is left out.
    /// Only the items asked are decrypted (``AgentRequest/getItems(ids:detail:)``).
    /// - Parameter ids: at most ``AgentProtocol/maxIDsPerRequest``.
    /// - Throws: `.interactionNotAllowed`, `.param`, `.io`.
    func items(ids: [UUID], detail: ItemDetail) throws(KeychainError) -> [Item]
    /// Whether an item has this primary key (generic password, access group "").
    func exists(service: String, account: String) throws(KeychainError) -> Bool
    /// Adds an item (its persistent ID is the one given).
    /// - Returns: what the write changed: the added item's revision and summary.
    /// - Throws: `.duplicateItem`, `.param`, `.interactionNotAllowed`, `.io`.
    func add(_ item: Item) throws(KeychainError) -> [AgentEvent]
    /// Changes the item read at revision `item.revision`.
    /// - Returns: what the write changed (each item's new revision and summary).
    /// - Throws: `.revisionMismatch` when it changed since, `.itemNotFound`, `.interactionNotAllowed`.
    func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) -> [AgentEvent]
    /// Deletes the item read at revision `item.revision`.
    /// - Returns: what the write changed (the deleted item as it was).
    /// - Throws: as ``update(_:with:)``.
    func delete(_ item: Item) throws(KeychainError) -> [AgentEvent]
    /// Locks the vault for every process.
    func lock() throws(KeychainError)
    /// Unlocks the vault with its master password (for every process),
    /// keeping the idle and maximum times the user last set.
    /// - Throws: `.authFailed` for a wrong password, `.interactionNotAllowed` when no agent runs, `.io`.
    func unlock(password: SecretBytes) throws(KeychainError)
    /// Subscribes to the agent's change feed: `onEvent` is called (on
    /// another thread) for each change of an item by any process and each
    /// lock and unlock, in the agent's order; `onEnd` once when the
    /// subscription ends.
    /// - Returns: the subscription, or `nil` when none can be made (no
    ///   agent answers, or the store sends no events).
    func watch(onEvent: @escaping @Sendable (AgentEvent) -> Void, onEnd: @escaping @Sendable () -> Void)
        -> (any StoreWatch)?
    /// Makes the following requests for the D-Bus client with this process
    /// id (`nil`: for the provider itself), so that the agent asks about,
    /// and its rules match, the client rather than the provider.
    func makeRequests(forClient pid: Int32?)
}

extension SecretStore {
    /// A store with no requester to name: nothing to do.
    public func makeRequests(forClient pid: Int32?) {}

    /// No events: the provider asks the store's state instead.
    public func watch(onEvent: @escaping @Sendable (AgentEvent) -> Void, onEnd: @escaping @Sendable () -> Void)
        -> (any StoreWatch)?
    { nil }
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

    public func forEachItem(_ body: (Item) -> Void) throws(KeychainError) {
        do {
            // A client's attributes are custom field values: those, and no
            // other value, which would need the client's consent.
            try store.forEachItem(matching: ItemQuery(itemClass: .genericPassword), detail: .searchAttributes, body)
        } catch .itemNotFound {
            return
        }
    }

    public func items(ids: [UUID], detail: ItemDetail) throws(KeychainError) -> [Item] {
        try store.items(ids: ids, detail: detail)
    }

    public func exists(service: String, account: String) throws(KeychainError) -> Bool {
        do {
            return try !store.items(matching: .key(service: service, account: account), limit: .one, detail: .listing)
                .isEmpty
        } catch .itemNotFound {
            return false
        }
    }

    public func add(_ item: Item) throws(KeychainError) -> [AgentEvent] { try store.write(.add(item)).changes }

    public func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) -> [AgentEvent] {
        var changes = changes
        changes.expectedRevision = item.revision
        return try store.write(.update(.identifying(item), changes)).changes
    }

    public func delete(_ item: Item) throws(KeychainError) -> [AgentEvent] {
        var query = ItemQuery.identifying(item)
        query.expectedRevision = item.revision
        return try store.write(.delete(query)).changes
    }

    /// Unlocks with the timeouts of the agent's last unlock (`fob unlock --idle --max`), else the defaults.
    public func unlock(password: SecretBytes) throws(KeychainError) {
        try answer(
            .unlock(password: password, idleSeconds: AgentCore.keepTimeouts, maxSeconds: AgentCore.keepTimeouts))
    }

    public func watch(onEvent: @escaping @Sendable (AgentEvent) -> Void, onEnd: @escaping @Sendable () -> Void)
        -> (any StoreWatch)?
    {
        try? store.client.subscribe(onEvent: onEvent, onEnd: onEnd)
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

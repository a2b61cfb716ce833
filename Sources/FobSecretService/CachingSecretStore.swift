import FobStore
import FoundationEssentials

/// A ``SecretStore`` that reuses the last listing (names and attributes,
/// never secrets) and the last locked state for ``lifetime`` seconds, so a
/// client reading the properties of a thousand items costs one listing, not
/// several requests per item. Every write through it, and ``refresh()``,
/// drops both; secrets are always read from the store behind it.
/// Used on the bus loop's thread only (hence `@unchecked Sendable`).
final class CachingSecretStore: SecretStore, @unchecked Sendable {
    /// How long a listing or state is reused: 0.5 s.
    static let lifetime: Double = 0.5

    private let store: any SecretStore
    private var listing: (items: [Item], byID: [UUID: Item], at: Double)?
    private var unlocked: (value: Bool, at: Double)?
    /// The primary key of every item seen, by persistent ID (kept across
    /// refreshes: only used to look items up, which checks it).
    private var keys: [UUID: Item] = [:]
    /// See ``takeOwnWrites()``.
    private var ownWrites: [UUID: UInt64?] = [:]

    init(_ store: any SecretStore) { self.store = store }

    /// When the cached listing was made (monotonic seconds), or `nil`.
    var listingTime: Double? { listing?.at }

    /// Forgets every name and attribute held: once the vault is seen locked,
    /// the provider keeps only the keyed hashes of the locked-search index.
    private func forgetNames() {
        listing = nil
        keys = [:]
    }

    /// Forgets the cached listing and state.
    func refresh() {
        listing = nil
        unlocked = nil
    }

    private func fresh(_ at: Double) -> Bool { Provider.now() - at < CachingSecretStore.lifetime }

    var isUnlocked: Bool {
        if let unlocked, fresh(unlocked.at) { return unlocked.value }
        let value = store.isUnlocked
        unlocked = (value, Provider.now())
        if !value { forgetNames() }
        return value
    }

    func list() throws(KeychainError) -> [Item] {
        if let listing, fresh(listing.at) { return listing.items }
        let items: [Item]
        do {
            items = try store.list()
        } catch {
            if case .interactionNotAllowed = error { forgetNames() }
            throw error
        }
        let byID = Dictionary(items.map { ($0.persistentID, $0) }, uniquingKeysWith: { first, _ in first })
        // Only the primary key is kept beyond the listing's half second.
        keys = byID.mapValues { item in
            var key = Item(
                itemClass: item.itemClass, service: item.service, account: item.account,
                accessGroup: item.accessGroup, persistentID: item.persistentID, secret: nil)
            key.synchronizable = item.synchronizable
            key.internetProtocol = item.internetProtocol
            key.authenticationType = item.authenticationType
            key.port = item.port
            key.path = item.path
            key.securityDomain = item.securityDomain
            return key
        }
        listing = (items, byID, Provider.now())
        unlocked = (true, Provider.now())
        return items
    }

    func listWithSecrets() throws(KeychainError) -> [Item] { try store.listWithSecrets() }

    func get(persistentID: UUID, withSecret: Bool) throws(KeychainError) -> Item {
        if !withSecret, let listing, fresh(listing.at) {
            guard let item = listing.byID[persistentID] else { throw .itemNotFound("no item \(persistentID)") }
            return item
        }
        // The key from any earlier listing makes it an indexed lookup; a
        // persistent ID alone scans every record.
        if let known = keys[persistentID] {
            do {
                return try get(exact: known, withSecret: withSecret)
            } catch .itemNotFound {
                keys[persistentID] = nil
            }
        }
        return try store.get(persistentID: persistentID, withSecret: withSecret)
    }

    func get(exact item: Item, withSecret: Bool) throws(KeychainError) -> Item {
        try store.get(exact: item, withSecret: withSecret)
    }

    func exists(service: String, account: String) throws(KeychainError) -> Bool {
        try store.exists(service: service, account: account)
    }

    func add(_ item: Item) throws(KeychainError) {
        defer { refresh() }
        try store.add(item)
        ownWrites[item.persistentID] = .some(1)
    }

    func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) {
        defer { refresh() }
        try store.update(item, with: changes)
        ownWrites[item.persistentID] = .some(item.revision + 1)
    }

    func delete(_ item: Item) throws(KeychainError) {
        defer { refresh() }
        try store.delete(item)
        ownWrites[item.persistentID] = .some(nil)
    }

    /// The revision each item written through this store has now (`nil`:
    /// deleted) since the last call, so changes made here are not reported
    /// again as another process's.
    func takeOwnWrites() -> [UUID: UInt64?] {
        defer { ownWrites = [:] }
        return ownWrites
    }

    func unlock(password: SecretBytes) throws(KeychainError) {
        defer { refresh() }
        try store.unlock(password: password)
    }

    func lock() throws(KeychainError) {
        defer { refresh() }
        try store.lock()
    }
}

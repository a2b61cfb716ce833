import FobStore
import FoundationEssentials
import Glibc

/// A ``SecretStore`` that reuses the last listing (names and attributes,
/// never secrets) while the vault file is unchanged and the vault still
/// unlocked, so a client reading the properties of a thousand items costs
/// one listing, not several requests per item. The locked state is asked
/// again after ``lifetime`` seconds; the vault file and its WAL are looked
/// at (`stat`, no request) before each reuse, so a write by any process
/// makes the next read list again. Every write through it, and
/// ``refresh()``, drops both.
///
/// Secrets are read from the store behind it, except that those of the
/// last ``listWithSecrets()`` (a `GetSecrets` of many items) answer
/// single-item reads while the vault file is unchanged and the agent says
/// unlocked: clients such as `secret-tool search` follow one `GetSecrets`
/// with a `GetSecret` per item, which would otherwise cost a decrypting
/// request each. They stay in wiped-on-free memory and go at the first
/// write or lock, ``secretLifetime`` seconds after the last read of one of
/// them, and at the latest ``secretMaximum`` seconds after they were fetched.
/// Used on the bus loop's thread only (hence `@unchecked Sendable`).
final class CachingSecretStore: SecretStore, @unchecked Sendable {
    /// How long the locked state is reused: 0.5 s.
    static let lifetime: Double = 0.5

    private let store: any SecretStore
    /// The vault file (whose WAL is `PATH-wal`), or `nil` to reuse a listing for ``lifetime`` only.
    private let vaultPath: String?
    private var listing: (items: [Item], byID: [UUID: Item], at: Double, stamp: [Int64])?
    private var generation = 0
    /// How long the secrets of one ``listWithSecrets()`` are kept after the last read of one: 2 s.
    static let secretLifetime: Double = 2
    /// How long they are kept at most: 30 s.
    static let secretMaximum: Double = 30
    private var secrets: (byID: [UUID: Item], fetched: Double, used: Double, stamp: [Int64])?
    private var unlocked: (value: Bool, at: Double)?
    /// The query for the primary key of every item seen, by persistent ID
    /// (kept across refreshes: only used to look items up, which checks it).
    private var keys: [UUID: ItemQuery] = [:]
    /// See ``takeOwnWrites()``.
    private var ownWrites: [UUID: UInt64?] = [:]

    /// - Parameters:
    ///   - store: the store behind the cache.
    ///   - vaultPath: the vault file whose changes end a listing's reuse.
    init(_ store: any SecretStore, vaultPath: String? = nil) {
        self.store = store
        self.vaultPath = vaultPath
    }

    /// A number that changes with every listing fetched from the store
    /// behind (not when one is reused), or `nil` while none is held.
    var listingGeneration: Int? { listing == nil ? nil : generation }

    /// The modification time (ns) plus size of the vault file and of its
    /// WAL, `0` for a missing one: any write by any process changes it.
    static func stamp(of vaultPath: String) -> [Int64] {
        [vaultPath, vaultPath + "-wal"].map { path -> Int64 in
            var st = stat()
            guard stat(path, &st) == 0 else { return 0 }
            return Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec) &+ Int64(st.st_size)
        }
    }

    private var stamp: [Int64] { vaultPath.map(CachingSecretStore.stamp(of:)) ?? [] }

    /// The cached listing, when it may still be used: within ``lifetime``,
    /// or later while the vault file is unchanged and the vault unlocked.
    private func reusable() -> (items: [Item], byID: [UUID: Item])? {
        guard let listing else { return nil }
        if fresh(listing.at) { return (listing.items, listing.byID) }
        guard vaultPath != nil, listing.stamp == stamp, isUnlocked, self.listing != nil else { return nil }
        return (listing.items, listing.byID)
    }

    /// Forgets every name and attribute held: once the vault is seen locked,
    /// the provider keeps only the keyed hashes of the locked-search index.
    private func forgetNames() {
        listing = nil
        keys = [:]
        secrets = nil
    }

    /// Forgets the cached listing, secrets and state.
    func refresh() {
        listing = nil
        unlocked = nil
        secrets = nil
    }

    /// Whether secrets of a ``listWithSecrets()`` are held (the bus loop then
    /// wakes within ``secretLifetime`` to drop them).
    var holdsSecrets: Bool { secrets != nil }

    /// Drops the secrets of the last ``listWithSecrets()`` once past ``secretLifetime``.
    func dropExpiredSecrets() {
        guard let secrets else { return }
        let now = Provider.now()
        if now - secrets.used >= CachingSecretStore.secretLifetime
            || now - secrets.fetched >= CachingSecretStore.secretMaximum
        {
            self.secrets = nil
        }
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
        if let reused = reusable() { return reused.items }
        let stampBefore = stamp
        let items: [Item]
        do {
            items = try store.list()
        } catch {
            if case .interactionNotAllowed = error { forgetNames() }
            throw error
        }
        let byID = Dictionary(items.map { ($0.persistentID, $0) }, uniquingKeysWith: { first, _ in first })
        // Only the primary key is kept beyond the listing's half second.
        keys = byID.mapValues(ItemQuery.identifying)
        listing = (items, byID, Provider.now(), stampBefore)
        generation += 1
        unlocked = (true, Provider.now())
        return items
    }

    func listWithSecrets() throws(KeychainError) -> [Item] {
        secrets = nil
        let stampBefore = stamp
        let items = try store.listWithSecrets()
        if vaultPath != nil {
            let byID = Dictionary(items.map { ($0.persistentID, $0) }, uniquingKeysWith: { first, _ in first })
            secrets = (byID, Provider.now(), Provider.now(), stampBefore)
        }
        return items
    }

    func get(persistentID: UUID, withSecret: Bool) throws(KeychainError) -> Item {
        if !withSecret {
            // One listing answers every item's properties (a lookup by
            // persistent ID alone scans every record anyway).
            if reusable() == nil { _ = try list() }
            guard let item = listing?.byID[persistentID] else { throw .itemNotFound("no item \(persistentID)") }
            return item
        }
        dropExpiredSecrets()
        // The agent's state is asked each time (a small request): no secret
        // is handed out from here after `fob lock` or a timeout.
        if let secrets, let item = secrets.byID[persistentID], secrets.stamp == stamp {
            guard store.isUnlocked else {
                forgetNames()
                throw .interactionNotAllowed("the vault is locked")
            }
            self.secrets?.used = Provider.now()
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

    func get(exact query: ItemQuery, withSecret: Bool) throws(KeychainError) -> Item {
        try store.get(exact: query, withSecret: withSecret)
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

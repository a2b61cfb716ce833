import CSecretService
import FobAccess
import FobStore
import FobSystem
import FoundationEssentials
import Glibc
import Synchronization

/// The items the provider answers from: a compact catalog of the last
/// listing (an ``ItemCatalog``: per item its key, label, attributes, dates —
/// never secrets), reused while the vault file is unchanged and the vault
/// still unlocked, so a client reading the properties of a thousand items
/// costs one listing, not several requests per item. The locked state is
/// asked again after ``lifetime`` seconds; the vault file and its WAL are
/// looked at (`stat`, no request) before each reuse, at most once per D-Bus
/// message (``beginMessage()``), so a write by any process makes the next
/// read list again. Every write through it, and ``refresh()``, drops both.
///
/// Secrets are fetched when asked, never kept with the catalog, except
/// that those of the last ``secrets()`` (a `GetSecrets` of many items)
/// answer single-item reads while the vault file is unchanged and the
/// vault unlocked: clients such as `secret-tool search` follow one
/// `GetSecrets` with a `GetSecret` per item, which would otherwise cost a
/// decrypting request each. Whether the vault is still unlocked is known
/// from the agent's events (``SecretStore/watch(_:)``: a lock, or any
/// write, ends their use at once) or, without them, by asking the agent
/// before each read. They stay in wiped-on-free memory (the secrets alone,
/// by persistent ID) and go at the first write or lock, ``secretLifetime``
/// seconds after the last read of one of them, and at the latest
/// ``secretMaximum`` seconds after they were fetched.
/// Used on the bus loop's thread only (hence `@unchecked Sendable`).
final class CachingSecretStore: @unchecked Sendable {
    /// How long the locked state is reused: 0.5 s.
    static let lifetime: Double = 0.5

    private let store: any SecretStore
    /// The vault file (whose WAL is `PATH-wal`), or `nil` to reuse a listing for ``lifetime`` only.
    private let vaultPath: String?
    private var catalog: (items: ItemCatalog, at: Double, stamp: [Int64])?
    private var generation = 0
    /// How long the secrets of one ``secrets()`` are kept after the last read of one: 2 s.
    static let secretLifetime: Double = 2
    /// How long they are kept at most: 30 s.
    static let secretMaximum: Double = 30
    private var held: (byID: [UUID: SecretBytes], fetched: Double, used: Double, stamp: [Int64], events: Int?)?
    /// The D-Bus client whose ``secrets()`` are ``held``: another client's
    /// read goes to the agent, which decides for that client.
    private var heldFor: Int32?
    /// The process id of the D-Bus client of the message being answered
    /// (`nil`: unknown); the store behind makes its requests for it.
    var client: Int32? {
        didSet { if client != oldValue { store.makeRequests(forClient: client) } }
    }
    private var unlocked: (value: Bool, at: Double)?
    /// See ``takeOwnWrites()``.
    private var ownWrites: [UUID: UInt64?] = [:]
    /// The vault file's stamp as of the current D-Bus message (see ``beginMessage()``).
    private var messageStamp: [Int64]?
    private var perMessage = false
    /// The agent's events, counted by the thread that reads them.
    private let events = EventCounter()
    private var watch: (any StoreWatch)?

    /// - Parameters:
    ///   - store: the store behind the cache.
    ///   - vaultPath: the vault file whose changes end a listing's reuse.
    init(_ store: any SecretStore, vaultPath: String? = nil) {
        self.store = store
        self.vaultPath = vaultPath
    }

    /// A number that changes with every listing fetched from the store
    /// behind (not when one is reused), or `nil` while none is held.
    var listingGeneration: Int? { catalog == nil ? nil : generation }

    /// The modification time (ns) plus size of the vault file and of its
    /// WAL, `0` for a missing one: any write by any process changes it.
    static func stamp(of vaultPath: String) -> [Int64] {
        [vaultPath, vaultPath + "-wal"].map { path -> Int64 in
            var st = stat()
            guard stat(path, &st) == 0 else { return 0 }
            return Int64(st.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(st.st_mtim.tv_nsec) &+ Int64(st.st_size)
        }
    }

    /// Starts a D-Bus message: the vault file is looked at once for all the
    /// reads it makes (a `GetAll` reads five properties), not once per read.
    func beginMessage() {
        perMessage = true
        messageStamp = nil
    }

    private var stamp: [Int64] {
        guard let vaultPath else { return [] }
        if perMessage, let messageStamp { return messageStamp }
        let now = CachingSecretStore.stamp(of: vaultPath)
        if perMessage { messageStamp = now }
        return now
    }

    /// The catalog, when it may still be used: while the vault file is
    /// unchanged and the vault unlocked (without a vault file: within ``lifetime``).
    private func reusable() -> ItemCatalog? {
        guard let catalog else { return nil }
        guard vaultPath != nil else { return fresh(catalog.at) ? catalog.items : nil }
        guard catalog.stamp == stamp, isUnlocked, self.catalog != nil else { return nil }
        return catalog.items
    }

    /// Whether the catalog held reflects the vault file as it is now (the
    /// last change to it was a write made here, or none since the listing).
    var isCurrent: Bool {
        guard let catalog, let vaultPath else { return false }
        return catalog.stamp == CachingSecretStore.stamp(of: vaultPath)
    }

    /// Forgets every name and attribute held: once the vault is seen locked,
    /// the provider keeps only the keyed hashes of the locked-search index.
    private func forgetNames() {
        catalog = nil
        held = nil
    }

    /// Forgets the catalog, secrets and state.
    func refresh() {
        catalog = nil
        unlocked = nil
        held = nil
        messageStamp = nil
    }

    /// Whether names (a catalog) or secrets are held: the bus loop then
    /// wakes every second to forget them once the vault is locked.
    var holdsNames: Bool { catalog != nil || held != nil }

    /// Forgets the names and secrets held once the vault is seen locked (by
    /// any process or a timeout; the agent is asked at most every ``lifetime``).
    func forgetIfLocked() {
        if holdsNames { _ = isUnlocked }
    }

    /// Whether secrets of a ``secrets()`` are held (the bus loop then
    /// wakes within ``secretLifetime`` to drop them).
    var holdsSecrets: Bool { held != nil }

    /// Drops the secrets of the last ``secrets()`` once past ``secretLifetime``.
    func dropExpiredSecrets() {
        guard let held else { return }
        let now = Provider.now()
        if now - held.used >= CachingSecretStore.secretLifetime
            || now - held.fetched >= CachingSecretStore.secretMaximum
        {
            self.held = nil
        }
    }

    private func fresh(_ at: Double) -> Bool { Provider.now() - at < CachingSecretStore.lifetime }

    /// Whether the vault is unlocked (asked again after ``lifetime``).
    var isUnlocked: Bool {
        if let unlocked, fresh(unlocked.at) { return unlocked.value }
        let value = store.isUnlocked
        unlocked = (value, Provider.now())
        if !value { forgetNames() }
        return value
    }

    /// Every item's summary, from the catalog or one listing.
    /// - Throws: `.interactionNotAllowed` while locked, `.io`.
    func summaries() throws(KeychainError) -> ItemCatalog {
        if let reused = reusable() { return reused }
        return try fetchCatalog()
    }

    private func fetchCatalog() throws(KeychainError) -> ItemCatalog {
        let stampBefore = vaultPath.map(CachingSecretStore.stamp(of:)) ?? []
        // The last catalog goes first: the two never live at once.
        let sizeBefore = catalog?.items.count ?? 0
        catalog = nil
        var items = ItemCatalog(capacity: sizeBefore)
        do {
            // Each whole item lives only while it is summarised.
            try store.forEachItem(withSecrets: false) { items.append($0) }
        } catch {
            if case .interactionNotAllowed = error { forgetNames() }
            throw error
        }
        items.shrink()
        catalog = (items, Provider.now(), stampBefore)
        // The agent's answer is freed: give its pages back.
        _ = fob_ss_trim_heap()
        generation += 1
        unlocked = (true, Provider.now())
        return items
    }

    /// The summary of the item with this persistent ID.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func summary(_ persistentID: UUID) throws(KeychainError) -> ItemSummary {
        let (catalog, index) = try find(persistentID)
        return catalog[index]
    }

    /// The content type of the item with this persistent ID (`nil` for
    /// `text/plain`), without rebuilding its whole summary.
    /// - Throws: as ``summary(_:)``.
    func contentType(_ persistentID: UUID) throws(KeychainError) -> String? {
        let (catalog, index) = try find(persistentID)
        return catalog.contentType(index)
    }

    /// The catalog (reused or listed now) and the place in it of the item with this persistent ID.
    private func find(_ persistentID: UUID) throws(KeychainError) -> (ItemCatalog, Int) {
        // Locked (as last asked): no listing request for each property a client reads.
        if let unlocked, !unlocked.value, fresh(unlocked.at) { throw .interactionNotAllowed("the vault is locked") }
        var current = reusable()
        if current == nil { current = try fetchCatalog() }
        guard let current, let index = current.index(of: persistentID) else {
            throw .itemNotFound("no item \(persistentID)")
        }
        return (current, index)
    }

    /// The whole item, read again from the store (for a write, which needs its other fields).
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func item(_ persistentID: UUID, withSecret: Bool) throws(KeychainError) -> Item {
        let key = try summary(persistentID).key
        do {
            return try store.get(exact: ItemQuery.identifying(key), withSecret: withSecret)
        } catch .itemNotFound {
            // Renamed by another process since the listing.
            return try store.get(persistentID: persistentID, withSecret: withSecret)
        }
    }

    /// Every item's secret, in one request; they then answer ``secret(_:)``
    /// for a while (see the type's description).
    /// - Throws: `.interactionNotAllowed`, `.io`.
    func secrets() throws(KeychainError) -> [UUID: SecretBytes] {
        held = nil
        let stampBefore = vaultPath.map(CachingSecretStore.stamp(of:)) ?? []
        let watched = watchEvents()
        var byID: [UUID: SecretBytes] = [:]
        try store.forEachItem(withSecrets: true) { item in
            if byID[item.persistentID] == nil { byID[item.persistentID] = item.secret ?? SecretBytes([]) }
        }
        if vaultPath != nil {
            held = (byID, Provider.now(), Provider.now(), stampBefore, watched)
            heldFor = client
        }
        // The agent just answered with secrets: it is unlocked, as after a listing.
        unlocked = (true, Provider.now())
        return byID
    }

    /// The secrets of the listed items among `ids` (IDs of no item are left
    /// out and cost nothing): read one by one, each a lookup that decrypts
    /// one record, unless they are more than 8 and at least half the vault,
    /// when one request for every secret (``secrets()``) is cheaper.
    /// A `GetSecrets` of 10 of 10,000 items decrypts 10 secrets; one that
    /// names only unknown paths decrypts none.
    /// - Throws: `.interactionNotAllowed`, `.io`.
    func secrets(of ids: [UUID]) throws(KeychainError) -> [UUID: SecretBytes] {
        let catalog = try summaries()
        var seen = Set<UUID>()
        let known = ids.filter { catalog.index(of: $0) != nil && seen.insert($0).inserted }
        guard !known.isEmpty else { return [:] }
        if known.count > 8, known.count * 2 >= catalog.count {
            let all = try secrets()
            // The agent's answer (every item whole) is freed by now: give its pages back.
            _ = fob_ss_trim_heap()
            return all.filter { seen.contains($0.key) }
        }
        var found: [UUID: SecretBytes] = [:]
        for id in known {
            do { found[id] = try secret(id) } catch .itemNotFound { continue }
        }
        return found
    }

    /// The agent's event count, subscribing first when not subscribed; `nil` without events.
    private func watchEvents() -> Int? {
        if watch?.isActive != true {
            let counter = events
            watch = store.watch { counter.count() }
        }
        return watch?.isActive == true ? events.value : nil
    }

    /// The secret of one item.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func secret(_ persistentID: UUID) throws(KeychainError) -> SecretBytes {
        dropExpiredSecrets()
        if let held, let secret = held.byID[persistentID], held.stamp == stamp, heldFor == client {
            // Nothing is handed out from here after `fob lock` or a timeout:
            // the agent's event says so at once, or the agent is asked.
            let watched = held.events != nil && watch?.isActive == true && events.value == held.events
            guard watched || store.isUnlocked else {
                forgetNames()
                throw .interactionNotAllowed("the vault is locked")
            }
            self.held?.used = Provider.now()
            return secret
        }
        return try item(persistentID, withSecret: true).secret ?? SecretBytes([])
    }

    func exists(service: String, account: String) throws(KeychainError) -> Bool {
        try store.exists(service: service, account: account)
    }

    /// Adds `item`; the catalog, when nothing else changed the vault since
    /// it was listed, gains the item's summary instead of being listed again
    /// (a thousand creates in a row then cost one listing, not a thousand).
    func add(_ item: Item) throws(KeychainError) {
        let before = vaultPath.map(CachingSecretStore.stamp(of:))
        let patchable = catalog != nil && before != nil && catalog?.stamp == before
        do {
            try store.add(item)
        } catch {
            refresh()
            throw error
        }
        ownWrites[item.persistentID] = .some(1)
        guard patchable, let vaultPath, var current = catalog else { return refresh() }
        catalog = nil
        var added = item
        added.revision = 1
        current.items.append(added)
        current.stamp = CachingSecretStore.stamp(of: vaultPath)
        catalog = current
        generation += 1
        held = nil
        messageStamp = nil
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

/// A count of the agent's events, bumped by the thread that reads them and
/// read by the bus loop.
final class EventCounter: Sendable {
    private let counter = Atomic<Int>(0)
    /// Counts one event.
    func count() { counter.add(1, ordering: .sequentiallyConsistent) }
    /// The events counted so far.
    var value: Int { counter.load(ordering: .sequentiallyConsistent) }
}

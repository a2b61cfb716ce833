import CSecretService
import FobAccess
import FobAgent
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// The vault's items as the provider answers them: a compact catalog (an
/// ``ItemCatalog``: per item its key, label, attributes, dates — never
/// secrets) listed once and then kept current by the agent's change feed
/// (``AgentEvent``): each event patches the catalog, and the items it names
/// are read again, by persistent ID and only they, the next time the
/// catalog is used. A client reading the properties of a thousand items
/// costs one listing, and `fob add` elsewhere costs one lookup of the added item.
///
/// Without the feed (no agent answers, or a store that sends no events) a
/// listing answers one D-Bus message only.
///
/// The secrets a `GetSecrets` fetched (by persistent ID, only those asked)
/// answer the reads that follow for the same client, in wiped-on-free
/// memory, until an event names their item, the vault locks,
/// ``secretLifetime`` seconds after the last read of one, and at the latest
/// ``secretMaximum`` seconds after they were fetched.
///
/// Used on the bus loop's thread only, but for the feed, which hands its
/// events over through an ``EventInbox``.
final class ItemCache {
    /// How long a lock state asked of the agent is reused without the feed: 0.5 s.
    static let lifetime: Double = 0.5
    /// How long the secrets of one `GetSecrets` are kept after the last read of one: 2 s.
    static let secretLifetime: Double = 2
    /// How long they are kept at most: 30 s.
    static let secretMaximum: Double = 30

    private let store: any SecretStore
    /// The catalog, or `nil` while none is held (never listed, locked, or the feed ended).
    private var catalog: ItemCatalog?
    /// Whether ``catalog`` was listed without the feed, to be forgotten at the next message.
    private var catalogUnwatched = false
    /// Items the feed named as added or changed since the catalog was
    /// listed: read again before the catalog is used next.
    private var stale: Set<UUID> = []
    /// Counts each change of the catalog (a listing or a patch).
    private(set) var generation = 0
    /// Changes applied as a message began, not yet signalled.
    private var pendingChanges: [Change] = []
    /// Called with the catalog and its generation just before the catalog
    /// is dropped (the vault locked, or a catalog listed without the feed
    /// expired), so what is built from it can be brought up to date first.
    var willDropCatalog: ((ItemCatalog, Int) -> Void)?
    /// The agent's change feed, while subscribed.
    private var feed: (any StoreWatch)?
    /// When a subscription was last tried (monotonic seconds).
    private var feedTriedAt = -Double.infinity
    /// Where the feed's thread leaves events for the bus loop.
    let inbox = EventInbox()
    /// The lock state: kept current by the feed while subscribed, else
    /// asked again after ``lifetime``.
    private var unlocked: (value: Bool, at: Double)?
    /// The secrets of the last `GetSecrets`, for the client that asked (see the type's description).
    private var held: (byID: [UUID: SecretBytes], fetched: Double, used: Double, client: Int32?)?
    /// The revision each item written here has now (the revision it had,
    /// for a deletion): its event from the feed is no news.
    private var ownWrites: [UUID: UInt64] = [:]
    /// The process id of the D-Bus client of the message being answered
    /// (`nil`: unknown); the store behind makes its requests for it.
    var client: Int32? {
        didSet { if client != oldValue { store.makeRequests(forClient: client) } }
    }

    /// - Parameter store: the store behind the cache (the agent's).
    init(_ store: any SecretStore) { self.store = store }

    /// Whether the agent's change feed is heard now.
    var hearsFeed: Bool { feed?.isActive == true }

    /// Subscribes to the agent's change feed when not subscribed (tried
    /// again at most every ``lifetime``); whatever was held before is
    /// forgotten, since changes made meanwhile were not heard.
    func listen() {
        guard !hearsFeed, Provider.now() - feedTriedAt >= ItemCache.lifetime else { return }
        feedTriedAt = Provider.now()
        feed?.cancel()
        let inbox = self.inbox
        feed = store.watch(onEvent: { inbox.put(.event($0)) }, onEnd: { inbox.put(.ended) })
        guard hearsFeed else { return }
        forget()
        unlocked = nil
    }

    /// Starts a D-Bus message: a catalog listed without the feed is not
    /// used again.
    ///
    /// What the feed brought is applied before the message is answered:
    /// the agent sends a write's event before its answer to the writer, so
    /// a write another process finished before this client asked is seen
    /// (its signal waits for the next idle moment, ``takeChanges()``).
    func beginMessage() {
        if catalogUnwatched && !hearsFeed { dropCatalog() }
        pendingChanges += absorbFeed()
    }

    /// The catalog as held now, without a listing (`nil` while none is held).
    var heldCatalog: ItemCatalog? { catalog }

    private func dropCatalog() {
        if let catalog { willDropCatalog?(catalog, generation) }
        catalog = nil
    }

    /// Forgets the catalog and the secrets held.
    private func forget() {
        dropCatalog()
        stale = []
        held = nil
    }

    /// Forgets the catalog, the secrets and the lock state (after an unlock
    /// or lock made here, or while a prompt waits).
    func refresh() {
        forget()
        unlocked = nil
    }

    /// Whether names (a catalog) or secrets are held: without the feed the
    /// bus loop then wakes every second to forget them once the vault is locked.
    var holdsNames: Bool { catalog != nil || held != nil }

    /// Forgets the names and secrets held once the vault is seen locked.
    func forgetIfLocked() {
        if holdsNames { _ = isUnlocked }
    }

    /// Whether secrets of a `GetSecrets` are held (the bus loop then wakes
    /// within ``secretLifetime`` to drop them).
    var holdsSecrets: Bool { held != nil }

    /// Drops the held secrets once past ``secretLifetime`` or ``secretMaximum``.
    func dropExpiredSecrets() {
        guard let held else { return }
        let now = Provider.now()
        if now - held.used >= ItemCache.secretLifetime || now - held.fetched >= ItemCache.secretMaximum {
            self.held = nil
        }
    }

    /// Whether the vault is unlocked: as the feed last said, else asked of
    /// the agent (again after ``lifetime``).
    var isUnlocked: Bool {
        if let unlocked, hearsFeed || Provider.now() - unlocked.at < ItemCache.lifetime { return unlocked.value }
        let value = store.isUnlocked
        unlocked = (value, Provider.now())
        if !value { forget() }
        return value
    }

    // MARK: The change feed

    /// One change the provider signals on the bus.
    enum Change: Equatable {
        /// An item was added, changed (renamed too) or deleted: the
        /// collection's signal (`ItemCreated`, `ItemChanged`, `ItemDeleted`) and the item.
        case item(signal: String, UUID)
        /// The vault locked or unlocked (`Locked` changed).
        case lockState
    }

    /// Applies the events the feed delivered since the last call and
    /// returns what clients are to hear of; an event of a write made here
    /// is applied already and left out.
    func takeChanges() -> [Change] {
        defer { pendingChanges = [] }
        return pendingChanges + absorbFeed()
    }

    /// Applies what the feed delivered since it was last looked at.
    private func absorbFeed() -> [Change] {
        var changes: [Change] = []
        for delivery in inbox.take() {
            guard case .event(let event) = delivery else {
                // The agent stopped (or the connection failed): nothing is known any more.
                feed = nil
                forget()
                unlocked = nil
                continue
            }
            if let change = apply(event) { changes.append(change) }
        }
        return changes
    }

    /// Patches the catalog, the held secrets and the lock state from one event.
    private func apply(_ event: AgentEvent) -> Change? {
        switch event.kind {
        case .locked, .unlocked:
            let value = event.kind == .unlocked
            if !value { forget() }
            defer { unlocked = (value, Provider.now()) }
            return unlocked?.value == value ? nil : .lockState
        case .added, .changed, .renamed, .deleted:
            // The provider shows generic passwords only.
            guard let id = event.id, event.key?.itemClass == .genericPassword else { return nil }
            held?.byID[id] = nil
            if let revision = event.revision, ownWrites[id] == revision {
                ownWrites[id] = nil
                return nil
            }
            if event.kind == .deleted {
                remove([id])
            } else if catalog != nil {
                stale.insert(id)
            }
            let signal = event.kind == .added ? "ItemCreated" : event.kind == .deleted ? "ItemDeleted" : "ItemChanged"
            return .item(signal: signal, id)
        case .question, .settled:
            return nil // consent questions go to Fob's own terminal UI only
        }
    }

    /// Notes the changes a write made here answered: the catalog is patched
    /// (a deleted item leaves it, a changed one is read again when next
    /// used), and their events from the feed are not news.
    private func wrote(_ changes: [AgentEvent]) {
        for change in changes {
            guard let id = change.id else { continue }
            if let revision = change.revision { ownWrites[id] = revision }
            held?.byID[id] = nil
            if change.kind == .deleted {
                remove([id])
            } else if catalog != nil {
                stale.insert(id)
            }
        }
        // Bounded: a feed that ended never echoes them.
        if ownWrites.count > 4096 { ownWrites = [:] }
    }

    /// The catalog without the items with these persistent IDs, with `added` after the rest.
    private func remove(_ ids: Set<UUID>, adding added: [Item] = []) {
        guard let old = catalog else { return }
        catalog = nil
        var patched = ItemCatalog(capacity: old.count + added.count)
        for i in 0..<old.count where !ids.contains(old.identity(i).id) { patched.append(old[i]) }
        for item in added { patched.append(item) }
        catalog = patched
        generation += 1
    }

    // MARK: Reading

    /// Every item's summary: the catalog, patched, or one listing.
    /// - Throws: `.interactionNotAllowed` while locked, `.io`.
    func summaries() throws(KeychainError) -> ItemCatalog {
        listen()
        if catalog != nil, !stale.isEmpty { try readStale() }
        if let catalog { return catalog }
        return try list()
    }

    /// Reads the items the feed named again, by persistent ID (an item no
    /// longer there leaves the catalog).
    private func readStale() throws(KeychainError) {
        let ids = Array(stale)
        var found: [Item] = []
        for start in stride(from: 0, to: ids.count, by: AgentProtocol.maxIDsPerRequest) {
            let chunk = Array(ids[start..<min(ids.count, start + AgentProtocol.maxIDsPerRequest)])
            do {
                found += try store.items(ids: chunk, detail: .searchAttributes)
            } catch {
                if case .interactionNotAllowed = error { forget() }
                throw error
            }
        }
        stale = []
        remove(Set(ids), adding: found.filter { $0.itemClass == .genericPassword })
    }

    private func list() throws(KeychainError) -> ItemCatalog {
        var items = ItemCatalog()
        do {
            // Each whole item lives only while it is summarised.
            try store.forEachItem { items.append($0) }
        } catch {
            if case .interactionNotAllowed = error { forget() }
            throw error
        }
        items.shrink()
        catalog = items
        catalogUnwatched = !hearsFeed
        stale = []
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

    private func find(_ persistentID: UUID) throws(KeychainError) -> (ItemCatalog, Int) {
        // Locked (as last known): no listing request for each property a client reads.
        if catalog == nil, let unlocked, !unlocked.value, hearsFeed || Provider.now() - unlocked.at < ItemCache.lifetime
        {
            throw .interactionNotAllowed("the vault is locked")
        }
        let current = try summaries()
        guard let index = current.index(of: persistentID) else { throw .itemNotFound("no item \(persistentID)") }
        return (current, index)
    }

    /// The whole item but its secret, read by persistent ID (for a write,
    /// which needs its other fields).
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func item(_ persistentID: UUID) throws(KeychainError) -> Item {
        guard let item = try store.items(ids: [persistentID], detail: .attributes).first else {
            throw .itemNotFound("no item \(persistentID)")
        }
        return item
    }

    /// The secrets of the listed items among `ids`, in one request that
    /// decrypts those items only (IDs of no item are left out and cost
    /// nothing): a `GetSecrets` of 10 of 10,000 items decrypts 10 secrets;
    /// one that names only unknown paths decrypts none. They then answer
    /// ``secret(_:)`` for a while (see the type's description).
    /// - Throws: `.interactionNotAllowed`, `.io`.
    func secrets(of ids: [UUID]) throws(KeychainError) -> [UUID: SecretBytes] {
        let catalog = try summaries()
        var seen = Set<UUID>()
        let known = ids.filter { catalog.index(of: $0) != nil && seen.insert($0).inserted }
        guard !known.isEmpty else { return [:] }
        var found: [UUID: SecretBytes] = [:]
        for start in stride(from: 0, to: known.count, by: AgentProtocol.maxIDsPerRequest) {
            let chunk = Array(known[start..<min(known.count, start + AgentProtocol.maxIDsPerRequest)])
            do {
                for item in try store.items(ids: chunk, detail: .secretOnly) {
                    found[item.persistentID] = item.secret ?? SecretBytes([])
                }
            } catch {
                if case .interactionNotAllowed = error { forget() }
                throw error
            }
        }
        held = (found, Provider.now(), Provider.now(), client)
        // The agent just answered with secrets: it is unlocked.
        unlocked = (true, Provider.now())
        return found
    }

    /// The secret of one item.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func secret(_ persistentID: UUID) throws(KeychainError) -> SecretBytes {
        dropExpiredSecrets()
        if let held, let secret = held.byID[persistentID], held.client == client {
            // Nothing is handed out from here after `fob lock` or a timeout:
            // the feed's event dropped them already, or the agent is asked.
            guard hearsFeed || store.isUnlocked else {
                forget()
                throw .interactionNotAllowed("the vault is locked")
            }
            self.held?.used = Provider.now()
            return secret
        }
        guard let item = try store.items(ids: [persistentID], detail: .secretOnly).first else {
            throw .itemNotFound("no item \(persistentID)")
        }
        return item.secret ?? SecretBytes([])
    }

    // MARK: Writing

    /// Whether an item has this primary key (generic password, access group "").
    func exists(service: String, account: String) throws(KeychainError) -> Bool {
        try store.exists(service: service, account: account)
    }

    /// Adds `item`; the catalog gains its summary (no listing again: a
    /// thousand creates in a row cost one listing, not a thousand).
    func add(_ item: Item) throws(KeychainError) {
        let changes = try store.add(item)
        for change in changes {
            if let id = change.id, let revision = change.revision { ownWrites[id] = revision }
        }
        guard var patched = catalog else { return }
        var added = item
        added.revision = changes.first(where: { $0.id == item.persistentID })?.revision ?? 1
        added.secret = nil
        guard patched.index(of: item.persistentID) == nil else { return remove([item.persistentID], adding: [added]) }
        // A new item is appended in place: no copy of the catalog per create.
        catalog = nil
        patched.append(added)
        catalog = patched
        generation += 1
    }

    /// Changes the item read at revision `item.revision`.
    /// - Throws: `.revisionMismatch`, `.itemNotFound`, `.interactionNotAllowed`, `.io`.
    func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) {
        wrote(try store.update(item, with: changes))
    }

    /// Deletes the item read at revision `item.revision`.
    /// - Throws: as ``update(_:with:)``.
    func delete(_ item: Item) throws(KeychainError) {
        wrote(try store.delete(item))
    }

    /// Unlocks the vault (for every process).
    func unlock(password: SecretBytes) throws(KeychainError) {
        defer { refresh() }
        try store.unlock(password: password)
    }

    /// Locks the vault (for every process).
    func lock() throws(KeychainError) {
        defer { refresh() }
        try store.lock()
    }
}

/// The agent's events, left by the feed's thread for the bus loop, which
/// a byte on a pipe wakes (``wakeFD``).
final class EventInbox: Sendable {
    /// What the feed delivers.
    enum Delivery: Sendable {
        /// One event, in the agent's order.
        case event(AgentEvent)
        /// The subscription ended.
        case ended
    }

    private let queue = Mutex<[Delivery]>([])
    private let pipeFDs: (read: Int32, write: Int32)

    init() {
        pipeFDs = CloseOnExec.pipe(nonBlocking: true) ?? (-1, -1)
    }

    deinit {
        if pipeFDs.read >= 0 { close(pipeFDs.read) }
        if pipeFDs.write >= 0 { close(pipeFDs.write) }
    }

    /// The descriptor that turns readable when deliveries wait (`-1` without a pipe).
    var wakeFD: Int32 { pipeFDs.read }

    /// Leaves one delivery and wakes the bus loop (from the feed's thread).
    func put(_ delivery: Delivery) {
        queue.withLock { $0.append(delivery) }
        var byte: UInt8 = 1
        _ = write(pipeFDs.write, &byte, 1)
    }

    /// Every delivery so far, oldest first (from the bus loop).
    func take() -> [Delivery] {
        var sink = [UInt8](repeating: 0, count: 256)
        while pipeFDs.read >= 0, read(pipeFDs.read, &sink, sink.count) > 0 {}
        return queue.withLock { queue in
            defer { queue = [] }
            return queue
        }
    }
}

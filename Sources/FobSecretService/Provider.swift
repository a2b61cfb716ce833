import CSystemd
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The Secret Service objects on the bus and what they answer: one
/// collection, the vault, at ``collectionPath`` (aliases `default` and
/// `login`), its items below it, and the sessions of connected clients.
/// Runs on the thread of the bus loop only.
final class Provider {
    static let root = "/org/freedesktop/secrets"
    static let collectionPath = root + "/collection/login"
    static let aliasPaths = [root + "/aliases/default", root + "/aliases/login"]
    static let sessionPrefix = root + "/session/"
    static let itemPrefix = collectionPath + "/"
    static let noPrompt = "/"

    let bus: OpaquePointer
    /// The vault's items, kept current by the agent's change feed (see ``ItemCache``).
    let store: ItemCache
    let vaultPath: String

    /// The open sessions of the connected clients.
    let sessions = SessionTable()
    /// What answers searches and shows items while the vault is locked.
    private var lockedSearch: LockedSearch
    /// The vault's state as last signalled (`nil`: not yet).
    private var lastUnlocked: Bool?
    /// When the lock state was last looked at without the feed (monotonic seconds).
    private var lockStateCheckedAt: Double = 0
    /// The vault collection's label: `Login` until a client sets another,
    /// which lasts while the provider runs.
    var collectionLabel = "Login"
    /// The items of the in-memory `session` collection, by path.
    var memoryItems: [String: MemoryItem] = [:]
    /// When the provider started (seconds since 1970): the session collection's dates.
    let startTime = UInt64(max(0, Date().timeIntervalSince1970))
    /// The store without its cache, which pinentry's thread may use to unlock.
    let unlocker: any SecretStore
    /// The pinentry asking the master password for every started prompt (one at a time).
    var pinentry: PinentryUnlock?
    /// The prompts handed out by Unlock, by path.
    var prompts: [String: PendingPrompt] = [:]
    /// Where the search for a free account suffix of each key starts.
    private var suffixes = AccountSuffixes()

    init(bus: OpaquePointer, store: any SecretStore, vaultPath: String) {
        self.bus = bus
        self.store = ItemCache(store)
        self.unlocker = store
        self.vaultPath = vaultPath
        lockedSearch = LockedSearch(vaultPath: vaultPath, environment: ProcessInfo.processInfo.environment)
        self.store.willDropCatalog = { [weak self] catalog, generation in
            self?.lockedSearch.update(from: catalog, generation: generation)
        }
        self.store.listen()
    }

    /// Whether `path` names the vault's collection (its own path or an alias path).
    static func isCollection(_ path: String) -> Bool { path == collectionPath || aliasPaths.contains(path) }

    /// The item path of `item`.
    static func path(of item: Item) -> String { path(of: item.persistentID) }

    /// The item path of the item with this persistent ID.
    static func path(of id: UUID) -> String { itemPrefix + ItemMapping.pathElement(of: id) }

    /// The persistent ID of an item path, or `nil` when `path` names no item.
    static func itemID(_ path: String) -> UUID? {
        guard path.hasPrefix(itemPrefix) else { return nil }
        return ItemMapping.persistentID(pathElement: String(path.dropFirst(itemPrefix.count)))
    }

    // MARK: Sessions

    /// Opens a session for `owner`.
    /// - Throws: `LimitsExceeded` when `owner` holds ``SessionTable/perConnection`` sessions.
    func openSession(owner: String, cipher: SessionCipher) throws(ProviderError) -> String {
        let path = try sessions.open(owner: owner, cipher: cipher)
        // Changes made by other processes are signalled from the agent's feed.
        store.listen()
        return path
    }

    /// The cipher of `path` when `sender` opened it.
    func cipher(session path: String, sender: String) throws(ProviderError) -> SessionCipher {
        try sessions.cipher(path, sender: sender)
    }

    /// Ends every session of a connection that left the bus (their keys are freed and wiped).
    func connectionLeft(_ name: String) {
        sessions.drop(name)
        dropPrompts(of: name)
    }

    // MARK: Items

    /// Every item's summary, or `IsLocked`; refreshes the locked-search index.
    func allItems() throws(ProviderError) -> ItemCatalog {
        let items: ItemCatalog
        do { items = try store.summaries() } catch { throw .from(error) }
        lockedSearch.update(from: items, generation: store.generation, throttled: true)
        return items
    }

    /// Brings the locked-search index up to the held catalog and saves it
    /// and the locked items' details when they changed, each at most once
    /// a second (from the bus loop when idle).
    /// - Parameter now: save whatever the time since the last save (when the provider stops).
    func saveIndex(now: Bool = false) {
        if let catalog = store.heldCatalog {
            lockedSearch.update(from: catalog, generation: store.generation, throttled: !now)
        }
        lockedSearch.save(now: now)
    }

    /// What the locked item at `path` shows (label, attributes, dates).
    /// - Throws: `IsLocked` when none is known (the vault was never seen unlocked with it).
    func lockedItem(at path: String) throws(ProviderError) -> LockedDetails.Shown {
        guard let id = Provider.itemID(path), let shown = lockedSearch.shown(id) else { throw .isLocked }
        return shown
    }

    /// Signals what the agent's change feed reported since last called:
    /// `ItemCreated`, `ItemChanged` and `ItemDeleted` for what other
    /// processes (`fob`, the terminal UI) wrote (writes made here were
    /// signalled already), and `Locked` when the vault locked or unlocked.
    func signalChanges() {
        for change in store.takeChanges() {
            switch change {
            case .item(let signal, let id): emit(signal, Provider.path(of: id))
            case .lockState:
                if lastUnlocked != store.isUnlocked { emitLockedChanged() }
            }
        }
    }

    /// The summary of the item at `path`.
    /// - Throws: `NoSuchObject` for a path that names no item, `IsLocked`.
    func item(at path: String) throws(ProviderError) -> ItemSummary {
        guard let id = Provider.itemID(path) else { throw .noSuchObject(path) }
        do { return try store.summary(id) } catch { throw .from(error, path: path) }
    }

    /// The whole item at `path`, read again (for a write).
    /// - Throws: as ``item(at:)``.
    func fullItem(at path: String) throws(ProviderError) -> Item {
        guard let id = Provider.itemID(path) else { throw .noSuchObject(path) }
        do { return try store.item(id) } catch { throw .from(error, path: path) }
    }

    /// The paths of the items matching `query`: all unlocked while the vault
    /// is, else the matches of the index built when it last was, all locked.
    /// - Throws: `IsLocked` when the vault is locked and was never seen unlocked.
    func search(_ query: [String: String]) throws(ProviderError) -> (unlocked: [String], locked: [String]) {
        do {
            let items = try allItems()
            let pairs = query.map { (key: Array($0.key.utf8), value: Array($0.value.utf8)) }
            return (
                (0..<items.count).filter { items.matches($0, pairs) }.map { Provider.path(of: items.identity($0).id) },
                []
            )
        } catch let error where error == .isLocked && lockedSearch.isIndexed {
            return ([], lockedSearch.matches(query).map(Provider.path(of:)).sorted())
        }
    }

    /// The paths of every item: listed while unlocked, else those of the index.
    func itemPaths() throws(ProviderError) -> [String] {
        let found = try search([:])
        return found.unlocked + found.locked
    }

    /// A secret sealed for the session at `session`, as the spec's `(oayays)`.
    /// - Parameter iv: 16 fresh random bytes for a DH session, else one is drawn here.
    func write(
        secret: SecretBytes, contentType: String?, session: String, cipher: SessionCipher, to writer: BusWriter,
        iv: [UInt8]? = nil
    ) throws(BusFailure) {
        var sealed = iv.map { cipher.seal(secret, iv: $0) } ?? cipher.seal(secret)
        defer { sealed.value.wipe() }
        try writer.secret(
            session: session, parameters: sealed.parameters, value: sealed.value,
            contentType: contentType ?? "text/plain")
    }

    /// Opens a secret a client sent under `session`.
    func open(
        _ secret: (session: String, parameters: [UInt8], value: [UInt8], contentType: String), sender: String
    ) throws(ProviderError) -> SecretBytes {
        let cipher = try cipher(session: secret.session, sender: sender)
        do {
            return try cipher.open(parameters: secret.parameters, value: secret.value)
        } catch {
            throw .invalidArgs("the secret cannot be decrypted with the session's key (bad IV, length or padding)")
        }
    }

    /// Creates an item, or with `replace` updates the one whose attributes
    /// match (``ItemMapping/replaces(_:service:account:with:label:)``).
    /// One listing answers both which item that is and the first free
    /// account suffix (no request per candidate).
    /// - Returns: the item's path.
    func createItem(
        label: String, attributes: [String: String], secret: SecretBytes, contentType: String, replace: Bool
    ) throws(ProviderError) -> String {
        let items = try allItems()
        if replace, let found = replaced(in: items, attributes: attributes, label: label) {
            let existing = try fullItem(at: Provider.path(of: found.persistentID))
            var changes = ItemChanges(secret: secret)
            if existing.customFields.contains(where: { $0.name.hasPrefix(ItemMapping.fieldPrefix) }) {
                changes.label = .some(label)
                changes.customFields = ItemMapping.fields(
                    keeping: existing.customFields, attributes: attributes, contentType: contentType)
            }
            // An item of `fob add` keeps its name and fields: its attributes stay the ones it shows.
            do { try store.update(existing, with: changes) } catch { throw .from(error) }
            emit("ItemChanged", Provider.path(of: existing))
            return Provider.path(of: existing)
        }
        let key = ItemMapping.key(attributes: attributes, label: label)
        let store = self.store
        do {
            let account = try suffixes.freeAccount(
                service: key.service, account: key.account, in: items, generation: store.generation
            ) { (candidate) throws(KeychainError) -> Bool in
                // Free in the catalog; taken since it by another process?
                try store.exists(service: key.service, account: candidate)
            }
            let item = Item(
                service: key.service, account: account, label: label,
                customFields: ItemMapping.fields(keeping: [], attributes: attributes, contentType: contentType),
                secret: secret)
            try store.add(item)
            suffixes.created(service: key.service, account: key.account, generation: store.generation)
            emit("ItemCreated", Provider.path(of: item))
            return Provider.path(of: item)
        } catch {
            throw .from(error)
        }
    }

    /// The item a `CreateItem(replace: true)` with these attributes and label updates, if any.
    private func replaced(in items: ItemCatalog, attributes: [String: String], label: String) -> ItemSummary? {
        for i in 0..<items.count {
            let summary = items[i]
            guard summary.accessGroup.isEmpty else { continue }
            if ItemMapping.replaces(
                summary.attributeDictionary, service: summary.service, account: summary.account, with: attributes,
                label: label)
            {
                return summary
            }
        }
        return nil
    }

    // MARK: Signals

    /// Emits `member` (`ItemCreated`, `ItemDeleted`, `ItemChanged`) of the collection for `item`,
    /// from the collection's path and from each alias path, then the
    /// Service's `CollectionChanged` (no `PropertiesChanged` of `Items`:
    /// its value is a listing, which a thousand stores in a row would each pay).
    func emit(_ member: String, _ item: String) {
        for path in [Provider.collectionPath] + Provider.aliasPaths {
            signal(path, Interface.collection, member, item)
        }
        signal(Provider.root, Interface.service, "CollectionChanged", Provider.collectionPath)
    }

    /// Emits the signal `member` of `interface` from `path`, with one object path argument.
    func signal(_ path: String, _ interface: String, _ member: String, _ argument: String) {
        var signal: OpaquePointer? = nil
        guard sd_bus_message_new_signal(bus, &signal, path, interface, member) >= 0, let signal else { return }
        defer { sd_bus_message_unref(signal) }
        guard (try? BusWriter(message: signal).string(argument, "o")) != nil else { return }
        _ = sd_bus_send(bus, signal, nil)
    }

    /// How long the bus loop may sleep, in microseconds, when no message
    /// and no event of the agent's feed comes: a quarter second while a
    /// prompt waits for the vault, half a second while secrets of a
    /// `GetSecrets` are held (to drop them in time); without the feed, a
    /// second while clients hold sessions (to tell them when the vault's
    /// state changed) or names are held (to forget them at a lock); a
    /// second while the locked-search index waits to be saved; else until
    /// a message or an event comes.
    var wakeInterval: UInt64 {
        if !prompts.isEmpty { return 250_000 }
        if store.holdsSecrets { return 500_000 }
        if lockedSearch.isDirty || (store.heldCatalog != nil && lockedSearch.isBehind(generation: store.generation)) {
            return 1_000_000
        }
        if !store.hearsFeed && (!sessions.isEmpty || store.holdsNames) { return 1_000_000 }
        return UInt64.max
    }

    /// Without the agent's feed: subscribes again (an agent started since),
    /// and emits `PropertiesChanged` of `Locked` when the vault's state
    /// changed since last seen, while clients hold sessions. With the feed
    /// its events say so (``signalChanges()``).
    func watchLockState() {
        guard !store.hearsFeed, !sessions.isEmpty, Provider.now() - lockStateCheckedAt >= 1 else { return }
        lockStateCheckedAt = Provider.now()
        store.listen()
        let unlocked = store.isUnlocked
        defer { lastUnlocked = unlocked }
        if let lastUnlocked, lastUnlocked != unlocked { emitLockedChanged() }
    }

    /// Emits `PropertiesChanged` for the collection's `Locked` (and `Items`,
    /// which a locked collection lists from its index) after a lock or unlock.
    func emitLockedChanged() {
        var names: [UnsafeMutablePointer<CChar>?] = [strdup("Locked"), strdup("Items"), nil]
        defer { names.forEach { free($0) } }
        lastUnlocked = store.isUnlocked
        // Clients hold the collection by its own path or by an alias path (secretstorage uses aliases/default).
        for path in [Provider.collectionPath] + Provider.aliasPaths {
            _ = names.withUnsafeMutableBufferPointer {
                sd_bus_emit_properties_changed_strv(bus, path, Interface.collection, $0.baseAddress)
            }
        }
        signal(Provider.root, Interface.service, "CollectionChanged", Provider.collectionPath)
    }

    /// The creation and modification time of the vault file, in seconds since 1970.
    var vaultTimes: (created: UInt64, modified: UInt64) {
        var st = stat()
        guard stat(vaultPath, &st) == 0 else { return (0, 0) }
        return (UInt64(max(0, st.st_ctim.tv_sec)), UInt64(max(0, st.st_mtim.tv_sec)))
    }
}

/// The interface names of the Secret Service API.
enum Interface {
    static let service = "org.freedesktop.Secret.Service"
    static let collection = "org.freedesktop.Secret.Collection"
    static let item = "org.freedesktop.Secret.Item"
    static let session = "org.freedesktop.Secret.Session"
    static let prompt = "org.freedesktop.Secret.Prompt"
}

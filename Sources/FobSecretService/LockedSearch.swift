import FobStore
import FobSystem
import FoundationEssentials

/// What the provider keeps to answer searches and show items while the
/// vault is locked: the keyed hashes of every attribute pair of each item
/// (the locked-search index, ``LockedIndex``) and each item's label,
/// attributes and dates, sealed (``LockedDetails``). Built from the item
/// catalog each time the catalog changes, saved beside the vault at most
/// once a second, and loaded when the provider starts.
/// Used on the bus loop's thread only.
struct LockedSearch {
    /// The key of the index, in guarded memory: the one in the kernel's
    /// user keyring when there is one, else made here (and put there at the
    /// first save).
    private let indexKey: SecretBytes
    /// Where the index and its key are kept beyond this process (`nil` without `XDG_RUNTIME_DIR`).
    private let persistent: LockedIndex?
    /// The pair hashes of every item, packed as the index file's body
    /// (``LockedIndex/append(_:hashes:to:)``).
    private var index: [UInt8] = []
    /// Whether ``index`` was built (or loaded) at least once.
    private(set) var isIndexed = false
    /// What locked items show, sealed.
    private var details: LockedDetails
    /// Whether the index or the details changed since they were last saved.
    private(set) var isDirty = false
    /// When they were last saved (monotonic seconds).
    private var savedAt: Double = 0
    /// The pair hashes of each item at the revision they were made for.
    private var pairHashes: [UUID: (revision: UInt64, hashes: [[UInt8]])] = [:]
    /// The ``ItemCache/generation`` the index was built from.
    private var builtFrom: Int?
    /// When the index was last built (monotonic seconds).
    private var builtAt = -Double.infinity

    /// Loads the saved key, index and details of the vault at `vaultPath`, if any.
    /// - Parameter environment: where they are kept (`XDG_RUNTIME_DIR`).
    init(vaultPath: String, environment: [String: String]) {
        persistent = LockedIndex(vaultPath: vaultPath, environment: environment)
        if let saved = persistent?.loadKey() {
            indexKey = saved
            // A provider started while the vault is locked answers searches from the saved index.
            if let body = persistent?.loadBody(key: saved) {
                index = body
                isIndexed = true
            }
        } else {
            indexKey = SecretBytes.random(count: 32)
        }
        details = LockedDetails(indexKey: indexKey, file: persistent?.detailsFile)
        if isIndexed { details.load() }
    }

    /// Whether a catalog of `generation` would change what the index was built from.
    func isBehind(generation: Int) -> Bool { generation != builtFrom }

    /// Builds the index and the details again from `items` when the catalog
    /// changed since (`generation`); an item's pairs are hashed again only
    /// when it is new or its revision changed.
    /// - Parameter throttled: build at most once a second (a run of a
    ///   thousand creates builds a few times, not a thousand); the catalog
    ///   is handed over again before it is dropped, unthrottled.
    mutating func update(from items: ItemCatalog, generation: Int, throttled: Bool = false) {
        guard generation != builtFrom else { return }
        if throttled, isIndexed, Provider.now() - builtAt < 1 { return }
        builtFrom = generation
        builtAt = Provider.now()
        var body: [UInt8] = []
        body.reserveCapacity(items.count * (18 + 3 * 16))
        var hashes: [UUID: (revision: UInt64, hashes: [[UInt8]])] = [:]
        hashes.reserveCapacity(items.count)
        for i in 0..<items.count where items.index(of: items.identity(i).id) == i {
            let (id, revision) = items.identity(i)
            let kept = pairHashes[id].flatMap { $0.revision == revision ? $0 : nil }
            let entry = kept ?? (revision, items[i].attributes.map(pairHash))
            hashes[id] = entry
            LockedIndex.append(id, hashes: entry.hashes, to: &body)
        }
        pairHashes = hashes
        index = body
        isIndexed = true
        _ = details.update(from: items)
        isDirty = true
    }

    /// The items whose attributes include every pair of `query`, by the index.
    func matches(_ query: [String: String]) -> [UUID] {
        LockedIndex.matches(index, query.map(pairHash))
    }

    /// What the locked item with this persistent ID shows, or `nil` when
    /// the vault was never seen unlocked with it.
    func shown(_ id: UUID) -> LockedDetails.Shown? { details.shown(id) }

    /// Saves the index and the details when they changed, at most once a
    /// second (a thousand writes in a row save a few times, not a thousand).
    /// - Parameter now: save whatever the time since the last save (when the provider stops).
    mutating func save(now: Bool = false) {
        guard isDirty, now || Provider.now() - savedAt >= 1 else { return }
        isDirty = false
        savedAt = Provider.now()
        if let persistent, persistent.storeKey(indexKey) {
            persistent.save(body: index, key: indexKey)
            details.save()
        }
    }

    /// The keyed BLAKE2b (libsodium) of one attribute pair under ``indexKey``:
    /// 16 bytes that match a query's pair while the vault is locked, without
    /// keeping the names or values themselves (D-Bus strings hold no NUL, so
    /// `name NUL value` is unambiguous).
    func pairHash(_ pair: (key: String, value: String)) -> [UInt8] {
        Sodium.genericHash(Array(pair.key.utf8) + [0] + Array(pair.value.utf8), key: indexKey, length: 16)
    }
}

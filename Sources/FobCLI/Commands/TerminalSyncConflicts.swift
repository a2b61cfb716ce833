import FobAccess
import FobStore
import FobSync
import FobViewModels
import FoundationEssentials
import Synchronization

/// The terminal UI's view of sync (``SyncConflictSource``): the sync
/// engine reading the state and its index (no network; the local tree only
/// for a state written before the index); a vault that never synced here
/// reads as `nil` without opening anything. The overview is read off the
/// UI thread, its vault reads through the store the UI hands it, and again
/// only when the sync state item changed (every sync and resolve writes it).
/// A resolve runs off the UI thread too, its vault reads and its one write
/// transaction through the store the UI hands it.
/// Sync's messages are dropped: the screen is the UI's.
final class TerminalSyncConflicts: SyncConflictSource, @unchecked Sendable {
    private let tree: String
    private let environment: [String: String]
    /// The last overview and the state item's revision it was read at.
    private let cached = Mutex<(revision: UInt64, overview: SyncOverview)?>(nil)

    /// - Parameters:
    ///   - vaultPath: the vault file's path (which names its work tree).
    ///   - environment: the process environment (`XDG_DATA_HOME`, git's variables).
    init(vaultPath: String, environment: [String: String]) {
        self.environment = environment
        tree = SyncPaths.tree(vaultPath: vaultPath, environment: environment)
    }

    private func engine(_ store: SyncItemStore) throws -> SyncEngine {
        try SyncEngine(store: store, treeDirectory: tree, environment: environment, now: { Date() }, messages: { _ in })
    }

    func overview(listed: [Item], store: any KeychainStore) throws -> SyncOverview? {
        guard FileManager.default.fileExists(atPath: tree + "/.git") else { return nil }
        let reader = KeychainSyncStore(store: store, writes: false)
        guard let state = try reader.syncStateItems(accounts: [SyncState.key.account]).first else { return nil }
        if let cached = cached.withLock({ $0 }), cached.revision == state.revision { return cached.overview }
        let reading = try engine(reader)
        guard let read = try reading.conflictOverview(listed: listed) else { return nil }
        var overview = SyncOverview(
            lastSync: read.lastSync == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(read.lastSync)),
            merged: Int(read.merged), conflicts: Int(read.conflicts), versions: read.versions)
        // Who wrote each version, for V's question: the conflicting items' files only are opened.
        if !read.versions.isEmpty {
            for conflict in try reading.conflicts() {
                guard let other = conflict.others.last else { continue }
                overview.sources[ItemKey(conflict.current)] = ConflictSources(
                    local: .init(device: conflict.label(conflict.device), written: conflict.current.modified),
                    other: .init(device: conflict.label(other.device), written: other.item.modified))
            }
        }
        cached.withLock { $0 = (state.revision, overview) }
        return overview
    }

    func resolve(_ key: ItemKey, keepRemote: Bool, store: any KeychainStore) throws {
        let engine = try engine(KeychainSyncStore(store: store, writes: true))
        try store.withExclusiveLock {
            try engine.resolve(service: key.service, account: key.account, keepRemote: keepRemote)
        }
    }
}

/// Sync's view of the vault over a ``KeychainStore`` (the UI's, its calls
/// run on the UI thread): the state's items by key, every item with its
/// secret, and (for a resolve only) one write transaction.
private final class KeychainSyncStore: SyncItemStore {
    let store: any KeychainStore
    /// Whether ``syncApply(_:)`` writes (a resolve) or refuses (the overview reads only).
    let writes: Bool

    init(store: any KeychainStore, writes: Bool) {
        self.store = store
        self.writes = writes
    }

    func syncItems() throws(KeychainError) -> [Item] {
        var all: [Item]
        do { all = try store.items(matching: ItemQuery(itemClass: nil), withSecrets: true) } catch .itemNotFound {
            all = []
        }
        return all + (try syncStateItems(accounts: [SyncState.key.account]))
    }

    func syncApply(_ changes: [ImportChange]) throws(KeychainError) {
        guard writes else { throw .io("the terminal UI reads sync's overview only") }
        guard !changes.isEmpty else { return }
        // `restore` is the store's one transaction of changes given whole.
        try store.restore(changes)
    }

    func syncStateItems(accounts: [String]) throws(KeychainError) -> [Item] {
        var found: [Item] = []
        for account in accounts {
            do {
                found += try store.items(
                    matching: .key(
                        service: SyncState.key.service, account: account, accessGroup: SyncState.key.accessGroup),
                    withSecrets: true)
            } catch .itemNotFound {}
        }
        return found
    }
}

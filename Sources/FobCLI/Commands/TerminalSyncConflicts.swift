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
/// Sync's messages are dropped: the screen is the UI's.
final class TerminalSyncConflicts: SyncConflictSource, @unchecked Sendable {
    /// The UI's store: only ``resolve(_:keepRemote:)`` uses it, on the UI thread.
    private let store: ItemAccess
    private let tree: String
    private let environment: [String: String]
    /// The last overview and the state item's revision it was read at.
    private let cached = Mutex<(revision: UInt64, overview: SyncOverview)?>(nil)

    /// - Parameters:
    ///   - store: the UI's store.
    ///   - vaultPath: the vault file's path (which names its work tree).
    ///   - environment: the process environment (`XDG_DATA_HOME`, git's variables).
    init(store: ItemAccess, vaultPath: String, environment: [String: String]) {
        self.store = store
        self.environment = environment
        tree = SyncPaths.tree(vaultPath: vaultPath, environment: environment)
    }

    private func engine(_ store: SyncItemStore) throws -> SyncEngine {
        try SyncEngine(store: store, treeDirectory: tree, environment: environment, now: { Date() }, messages: { _ in })
    }

    func overview(listed: [Item], store: any KeychainStore) throws -> SyncOverview? {
        guard FileManager.default.fileExists(atPath: tree + "/.git") else { return nil }
        let reader = KeychainSyncReader(store: store)
        guard let state = try reader.syncStateItems(accounts: [SyncState.key.account]).first else { return nil }
        if let cached = cached.withLock({ $0 }), cached.revision == state.revision { return cached.overview }
        guard let read = try engine(reader).conflictOverview(listed: listed) else { return nil }
        let overview = SyncOverview(
            lastSync: read.lastSync == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(read.lastSync)),
            merged: Int(read.merged), conflicts: Int(read.conflicts), versions: read.versions)
        cached.withLock { $0 = (state.revision, overview) }
        return overview
    }

    func resolve(_ key: ItemKey, keepRemote: Bool) throws {
        let engine = try engine(store)
        try store.withExclusiveLock {
            try engine.resolve(service: key.service, account: key.account, keepRemote: keepRemote)
        }
    }
}

/// Sync's reads of the vault over a ``KeychainStore`` (the UI's, its calls
/// run on the UI thread): the state's items by key, and every item with
/// its secret for a state written before the index. Writes nothing.
private final class KeychainSyncReader: SyncItemStore {
    let store: any KeychainStore

    init(store: any KeychainStore) { self.store = store }

    func syncItems() throws(KeychainError) -> [Item] {
        var all: [Item]
        do { all = try store.items(matching: ItemQuery(itemClass: nil), withSecrets: true) } catch .itemNotFound {
            all = []
        }
        return all + (try syncStateItems(accounts: [SyncState.key.account]))
    }

    func syncApply(_ changes: [ImportChange]) throws(KeychainError) {
        throw .io("the terminal UI reads sync's overview only")
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

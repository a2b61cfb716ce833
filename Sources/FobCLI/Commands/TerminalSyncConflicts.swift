import FobAccess
import FobStore
import FobSync
import FobViewModels
import FoundationEssentials

/// The terminal UI's view of sync (``SyncConflictSource``): the sync
/// engine over the UI's own store, reading the state and the local work
/// tree only (no network); a vault that never synced here reads as `nil`
/// without opening anything. The overview is read again only when the
/// sync state item changed (every sync and resolve writes it): reading it
/// decrypts the tree, which the list's reloads must not pay for each time.
/// Sync's messages are dropped: the screen is the UI's.
final class TerminalSyncConflicts: SyncConflictSource {
    private let store: ItemAccess
    private let tree: String
    private let environment: [String: String]
    /// The last overview and the state item's revision it was read at.
    private var cached: (revision: UInt64, overview: SyncOverview)?

    /// - Parameters:
    ///   - store: the UI's store.
    ///   - vaultPath: the vault file's path (which names its work tree).
    ///   - environment: the process environment (`XDG_DATA_HOME`, git's variables).
    init(store: ItemAccess, vaultPath: String, environment: [String: String]) {
        self.store = store
        self.environment = environment
        tree = SyncPaths.tree(vaultPath: vaultPath, environment: environment)
    }

    private func engine() throws -> SyncEngine {
        try SyncEngine(store: store, treeDirectory: tree, environment: environment, now: { Date() }, messages: { _ in })
    }

    func overview() throws -> SyncOverview? {
        guard FileManager.default.fileExists(atPath: tree + "/.git") else { return nil }
        let key = SyncState.key
        let state: Item
        do {
            state = try store.items(
                matching: .key(service: key.service, account: key.account, accessGroup: key.accessGroup), limit: .one,
                detail: .listing)[0]
        } catch .itemNotFound {
            return nil
        }
        if let cached, cached.revision == state.revision { return cached.overview }
        let engine = try engine()
        let status = try engine.status()
        var versions: [ItemKey: Int] = [:]
        for conflict in try engine.conflicts() { versions[ItemKey(conflict.current)] = conflict.others.count + 1 }
        let overview = SyncOverview(
            lastSync: status.lastSync == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(status.lastSync)),
            merged: Int(status.lastMerged), conflicts: Int(status.lastConflicts), versions: versions)
        cached = (state.revision, overview)
        return overview
    }

    func resolve(_ key: ItemKey, keepRemote: Bool) throws {
        let engine = try engine()
        try store.withExclusiveLock {
            try engine.resolve(service: key.service, account: key.account, keepRemote: keepRemote)
        }
    }
}

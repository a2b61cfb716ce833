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

    private func engine(_ store: any KeychainStore, writes: Bool) throws -> SyncEngine {
        try SyncEngine(
            vault: SyncVault(store, writes: writes), treeDirectory: tree, environment: environment, now: { Date() },
            messages: { _ in })
    }

    func overview(listed: [Item], store: any KeychainStore) throws -> SyncOverview? {
        guard FileManager.default.fileExists(atPath: tree + "/.git") else { return nil }
        let reading = try engine(store, writes: false)
        guard let revision = try reading.stateRevision() else { return nil }
        if let cached = cached.withLock({ $0 }), cached.revision == revision { return cached.overview }
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
                    other: .init(device: conflict.label(other.device), written: other.item.modified),
                    differences: conflict.differingParts(of: other).map(\.name))
            }
        }
        cached.withLock { $0 = (revision, overview) }
        return overview
    }

    func secrets(of key: ItemKey, store: any KeychainStore) throws -> ConflictSecrets {
        let reading = try engine(store, writes: false)
        guard let conflict = try reading.conflicts().first(where: { ItemKey($0.current) == key }),
            let other = conflict.others.last
        else { throw KeychainError.itemNotFound(key.shortName) }
        return ConflictSecrets(local: conflict.current.secret, other: other.item.secret)
    }

    func resolve(_ key: ItemKey, keepRemote: Bool, store: any KeychainStore) throws {
        let engine = try engine(store, writes: true)
        try store.withExclusiveLock {
            try engine.resolve(service: key.service, account: key.account, keepRemote: keepRemote)
        }
    }
}

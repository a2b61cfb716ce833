import FobAccess
import FobStore
import FoundationEssentials

/// What the terminal UI shows of sync: what the last sync did and which
/// items have conflicting versions kept (as `fob sync status` and
/// `fob conflicts` say).
public struct SyncOverview: Sendable, Equatable {
    /// When the last sync ended, or `nil` when this vault never synced here.
    public var lastSync: Date?
    /// How many items the last sync merged.
    public var merged: Int
    /// How many conflicts the last sync left.
    public var conflicts: Int
    /// The items with conflicting versions: how many versions each has
    /// (the vault's and the ones kept beside it, so at least 2).
    public var versions: [ItemKey: Int]

    /// An overview.
    public init(lastSync: Date?, merged: Int, conflicts: Int, versions: [ItemKey: Int]) {
        self.lastSync = lastSync
        self.merged = merged
        self.conflicts = conflicts
        self.versions = versions
    }

    /// The status line's summary: `Last sync 14:02: merged 3, conflicts 1`
    /// (local time), or `nil` before the first sync.
    public var summary: String? {
        guard let lastSync else { return nil }
        return "Last sync \(DateText.local(lastSync, "%H:%M")): merged \(merged), conflicts \(conflicts)"
    }
}

/// Where the terminal UI reads sync's conflicts and settles them; the CLI
/// gives one over the sync engine (FobSync), tests a fake.
public protocol SyncConflictSource: AnyObject, Sendable {
    /// The overview, or `nil` when the vault does not sync. Called off the
    /// UI thread, so a keystroke never waits for it.
    /// - Parameters:
    ///   - listed: the vault's items as the list read them (no secrets):
    ///     they name the items with conflicts.
    ///   - store: the UI's store, for what the overview reads of the vault
    ///     (each call runs on the UI thread, at its next tick).
    /// - Throws: what reading the sync state or the local tree throws.
    func overview(listed: [Item], store: any KeychainStore) throws -> SyncOverview?
    /// Keeps the vault's version of `key` (`keepRemote` false) or the other
    /// one's conflicting parts, dropping the rest, as `fob resolve SERVICE
    /// ACCOUNT --keep local|remote`. Called off the UI thread, so a
    /// keystroke never waits for its vault write and its local commit.
    /// - Parameters:
    ///   - store: the UI's store, for the resolve's reads and its one write
    ///     transaction (each call runs on the UI thread, at its next tick;
    ///     its exclusive lock is taken on the calling thread).
    /// - Throws: `KeychainError.itemNotFound` when the item has no conflict; sync's errors.
    func resolve(_ key: ItemKey, keepRemote: Bool, store: any KeychainStore) throws
}

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
    /// Who wrote the two versions F6 chooses between, and when, by item
    /// (an item missing here is asked about without them).
    public var sources: [ItemKey: ConflictSources]

    /// An overview.
    public init(
        lastSync: Date?, merged: Int, conflicts: Int, versions: [ItemKey: Int],
        sources: [ItemKey: ConflictSources] = [:]
    ) {
        self.lastSync = lastSync
        self.merged = merged
        self.conflicts = conflicts
        self.versions = versions
        self.sources = sources
    }

    /// The status line's summary: `Last sync 14:02: merged 3, conflicts 1`
    /// (local time), or `nil` before the first sync. The count is of the
    /// items marked `!` (``versions``), so the two never disagree: a
    /// conflict left by an earlier sync counts until it is resolved.
    public var summary: String? {
        guard let lastSync else { return nil }
        return "Last sync \(DateText.local(lastSync, "%H:%M")): merged \(merged), conflicts \(versions.count)"
    }
}

/// The two versions of an item with a conflict as F6 names them: this
/// vault's (`fob resolve --keep local`) and the other one (`--keep remote`).
public struct ConflictSources: Sendable, Equatable {
    /// One version: the device that wrote it, as `fob devices` shows it
    /// (`NAME (ID)`, or the id; `nil` when not known), and when it was written.
    public struct Version: Sendable, Equatable {
        /// The writing device as `fob devices` shows it (`NAME (ID)`, or
        /// the id), or `nil` when the version does not record it.
        public var device: String?
        /// When the version was written (its item's modification date).
        public var written: Date

        /// A version; see the properties.
        public init(device: String?, written: Date) {
            self.device = device
            self.written = written
        }

        /// `(desk, 14:02:31)` (local time, to the second: two versions
        /// written in one minute are told apart), or `(14:02:31)` without a
        /// device; a device with a name is named without its id.
        public var described: String { described(keepingID: false) }

        /// ``described``, naming the device with its id when `keepingID`
        /// (two devices of one name are told apart by it).
        public func described(keepingID: Bool) -> String {
            let name = device.map { (keepingID ? $0 : Self.withoutID($0)) + ", " } ?? ""
            return "(" + name + DateText.local(written, "%H:%M:%S") + ")"
        }

        /// `NAME` of `NAME (ID)` (ID in hexadecimal), else `device` as it is.
        static func withoutID(_ device: String) -> String {
            guard device.hasSuffix(")"), let open = device.lastIndex(of: "(") else { return device }
            let id = device[device.index(after: open)..<device.index(before: device.endIndex)]
            let name = device[..<open]
            guard !id.isEmpty, id.allSatisfy({ $0.isHexDigit }), name.count > 1, name.hasSuffix(" ") else {
                return device
            }
            return String(name.dropLast())
        }
    }

    /// How the dialog names the two versions: devices by name, or by name
    /// and id when both devices have one name (as two machines called `vm`).
    public var described: (local: String, other: String) {
        let sameName =
            local.device != other.device && local.device.map(Version.withoutID) == other.device.map(Version.withoutID)
        return (local.described(keepingID: sameName), other.described(keepingID: sameName))
    }

    /// The vault's version.
    public var local: Version
    /// The other one.
    public var other: Version
    /// The parts in which the two differ, as `fob conflicts --show` names
    /// them (`secret`, `notes`, `label`…), never their values; empty when
    /// not known.
    public var differences: [String]

    /// The two versions; see the properties.
    public init(local: Version, other: Version, differences: [String] = []) {
        self.local = local
        self.other = other
        self.differences = differences
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
    /// The secrets of the two versions of `key` the resolve dialog chooses
    /// between: this vault's and the other one (`nil` for a version without
    /// one). Read only when the dialog is asked to reveal them (Ctrl-R), on
    /// the UI thread, `store` being the UI's own.
    /// - Throws: `KeychainError.itemNotFound` when the item has no conflict; sync's errors.
    func secrets(of key: ItemKey, store: any KeychainStore) throws -> ConflictSecrets
}

/// The secrets of an item's two conflicting versions, as the resolve
/// dialog reveals them (Ctrl-R): this vault's and the other one.
public struct ConflictSecrets: Sendable {
    /// This vault's version's secret, or `nil` when it has none.
    public var local: SecretBytes?
    /// The other version's secret, or `nil` when it has none.
    public var other: SecretBytes?

    /// The two secrets; see the properties.
    public init(local: SecretBytes?, other: SecretBytes?) {
        self.local = local
        self.other = other
    }
}

import FobStore
import FoundationEssentials

/// One live revision file of an item, as this device verified it: its dot
/// (from its path) and git's id of its content (from `git ls-tree`).
struct IndexedFile: Hashable, Sendable {
    var dot: Dot
    var blob: String
}

/// What this device verified of one item in the tree of the synced commit:
/// its live revision files and how many versions it has (0 without a
/// conflict, else the item's and its siblings').
///
/// Kept in the vault beside the state (so under the whole-vault commitment
/// and written in the merge's transaction): a later sync opens only the
/// files whose path or content is not listed here, and the terminal UI
/// reads the conflicts without opening any file.
struct IndexEntry: Equatable, Sendable {
    /// Sorted by dot.
    var files: [IndexedFile]
    var versions: Int
    /// Some file is sealed under an older key epoch: opened again (and
    /// the item written again under the current key) at the next export.
    var stale = false
}

/// The state's table (item name → vault revision at the last merge and
/// ``IndexEntry``) split into items of the reserved access group, one per
/// prefix of the item names, each within a byte limit: the table grows
/// with the vault, an item's secret does not (``Item/maxSecretBytes``).
///
/// A shard is the note `fob.sync` / `fob-sync` / `index.PREFIX` whose
/// secret is: version 1, the prefix, the entry count, then per entry (by
/// name) the name, flags (1: a vault revision follows; 2: a file is under
/// an older key), the revision, the
/// version count and the files (device, counter, blob id).
enum SyncIndexShards {
    /// The most hex digits a prefix has: 16^4 shards of the limit each is
    /// far beyond any vault.
    static let maxDigits = 4

    /// The default limit of one shard's secret, in bytes: half of what an
    /// item may hold, so a shard that grows between two splits still fits.
    static let defaultLimit = Item.maxSecretBytes / 2

    /// The account of the shard for `prefix`.
    static func account(_ prefix: String) -> String { "index." + prefix }

    /// Encodes the entries of `names` (sorted) as the shard of `prefix`.
    static func encode(
        prefix: String, names: [String], revisions: [String: UInt64], index: [String: IndexEntry]
    ) -> SecretBytes {
        var w = ByteWriter()
        defer { w.wipe() }
        w.u8(1)
        w.string(prefix)
        w.u32(UInt32(names.count))
        for name in names {
            w.string(name)
            let revision = revisions[name]
            let entry = index[name] ?? IndexEntry(files: [], versions: 0)
            w.u8((revision == nil ? 0 : 1) | (entry.stale ? 2 : 0))
            w.u64(revision ?? 0)
            w.u32(UInt32(entry.versions))
            w.u32(UInt32(entry.files.count))
            for file in entry.files {
                w.string(file.dot.device)
                w.u64(file.dot.counter)
                w.string(file.blob)
            }
        }
        return SecretBytes(w.bytes)
    }

    /// Decodes the shard of `prefix`.
    /// - Throws: ``TreeFormatError`` for a damaged shard, one of another
    ///   prefix, or a name outside it.
    static func decode(_ secret: SecretBytes, prefix: String) throws(TreeFormatError) -> (
        revisions: [String: UInt64], index: [String: IndexEntry]
    ) {
        try reading(secret) { (raw) throws(TreeFormatError) in
            var r = ByteReader(raw)
            guard try r.u8() == 1 else { throw .malformed("an unknown index version") }
            guard try r.string(max: maxDigits) == prefix else { throw .malformed("an index shard of another prefix") }
            let count = try r.u32()
            // Each entry takes at least 53 bytes: a count beyond what is left is damage.
            guard Int(count) <= (raw.count - r.offset) / 53 else { throw .truncated }
            var revisions: [String: UInt64] = [:]
            var index: [String: IndexEntry] = [:]
            var previous = ""
            for _ in 0..<count {
                let name = try r.string(max: 32)
                guard name.utf8.count == 32, name.utf8.allSatisfy(TreePath.isHexDigit), name.hasPrefix(prefix),
                    name > previous
                else { throw .malformed("an item name in the index") }
                previous = name
                let flag = try r.u8()
                let revision = try r.u64()
                guard flag <= 3 else { throw .malformed("an index flag") }
                if flag & 1 != 0 { revisions[name] = revision }
                let versions = try r.u32()
                let fileCount = try r.u32()
                guard versions <= 65, fileCount <= 4096 else { throw .tooLarge }
                var files: [IndexedFile] = []
                for _ in 0..<fileCount {
                    let dot = Dot(device: try r.device(), counter: try r.u64())
                    let blob = try r.string(max: 64)
                    guard blob.utf8.count == 40 || blob.utf8.count == 64, blob.utf8.allSatisfy(TreePath.isHexDigit),
                        files.last.map({ $0.dot < dot }) ?? true
                    else { throw .malformed("a file in the index") }
                    files.append(IndexedFile(dot: dot, blob: blob))
                }
                let stale = flag & 2 != 0
                if !files.isEmpty || versions != 0 || stale {
                    index[name] = IndexEntry(files: files, versions: Int(versions), stale: stale)
                }
            }
            guard r.atEnd else { throw .malformed("bytes after the index shard") }
            return (revisions, index)
        }
    }

    /// Splits the table into shards by the first `digits` hex digits of
    /// the names, with the fewest digits from `minDigits` on that keep every
    /// shard within `limit` bytes (at ``maxDigits`` they are taken as they are).
    /// - Parameter clean: prefixes (of `minDigits` digits) whose stored
    ///   shards hold their entries already: kept, not encoded, when the digits stay.
    /// - Returns: the digits, each prefix's shard (prefixes without entries
    ///   have none) and the clean prefixes kept.
    static func split(
        revisions: [String: UInt64], index: [String: IndexEntry], minDigits: Int, limit: Int,
        clean: Set<String> = []
    ) -> (digits: Int, shards: [String: SecretBytes], kept: Set<String>) {
        let names = Set(revisions.keys).union(index.keys).sorted()
        // Sizes first (as ``encode`` lays them out), so only the chosen split is encoded.
        let sizes = names.map { name in
            (index[name]?.files ?? []).reduce(4 + name.utf8.count + 17) {
                $0 + 16 + $1.dot.device.utf8.count + $1.blob.utf8.count
            }
        }
        var digits = max(0, min(minDigits, maxDigits))
        while digits < maxDigits {
            var bytes: [Substring: Int] = [:]
            for (name, size) in zip(names, sizes) { bytes[name.prefix(digits), default: 9 + digits] += size }
            if bytes.values.allSatisfy({ $0 <= limit }) { break }
            digits += 1
        }
        var groups: [String: [String]] = [:]
        for name in names { groups[String(name.prefix(digits)), default: []].append(name) }
        var shards: [String: SecretBytes] = [:]
        var kept: Set<String> = []
        for (prefix, group) in groups {
            if digits == minDigits, clean.contains(prefix) {
                kept.insert(prefix)
            } else {
                shards[prefix] = encode(prefix: prefix, names: group, revisions: revisions, index: index)
            }
        }
        return (digits, shards, kept)
    }
}

extension SyncEngine {
    /// What the terminal UI shows of sync, read from the state and its
    /// index only: no tree file is opened and the vault's items are not
    /// read (a state written before the index reads the local tree instead).
    public struct ConflictOverview: Sendable, Equatable {
        /// When the last sync ended (seconds since 1970; 0 = never).
        public var lastSync: UInt64
        /// How many items the last sync changed in this vault.
        public var merged: UInt64
        /// How many items had conflicting versions after the last sync.
        public var conflicts: UInt64
        /// The items with conflicting versions: how many versions each has
        /// (the vault's and the ones kept beside it).
        public var versions: [ItemKey: Int]
    }

    /// The revision of the sync state item (every sync and resolve writes
    /// it), or `nil` when this vault does not sync: a reader's cache key.
    /// - Throws: `KeychainError`.
    public func stateRevision() throws -> UInt64? {
        try vault.stateItems(accounts: [SyncState.key.account]).first?.revision
    }

    /// The overview, or `nil` when this vault does not sync.
    /// - Parameter listed: the vault's items as listed (no secrets needed):
    ///   they name the items with conflicts.
    /// - Throws: `KeychainError` for a damaged state; as ``conflicts()``.
    public func conflictOverview(listed: [Item]) throws -> ConflictOverview? {
        guard let stateItem = try vault.stateItems(accounts: [SyncState.key.account]).first,
            let secret = stateItem.secret
        else { return nil }
        let state: SyncState
        do { state = try SyncState.decode(secret) } catch {
            throw KeychainError.decode("the sync state item: \(error)")
        }
        var overview = ConflictOverview(
            lastSync: state.lastSync, merged: state.lastMerged, conflicts: state.lastConflicts, versions: [:])
        guard state.shardDigits != nil else {
            for conflict in try conflicts() { overview.versions[ItemKey(conflict.current)] = conflict.others.count + 1 }
            return overview
        }
        let keys = SyncKeys(epochs: state.epochs)
        var loaded = SyncRun(state: state, stateItem: stateItem, items: [:], keys: keys, now: vault.now)
        try vault.loadIndex(&loaded)
        guard loaded.index.values.contains(where: { $0.versions > 0 }) else { return overview }
        for item in listed {
            if let versions = loaded.index[keys.name(of: item)]?.versions, versions > 0 {
                overview.versions[ItemKey(item)] = versions
            }
        }
        return overview
    }
}

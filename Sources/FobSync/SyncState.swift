import FobStore
import FoundationEssentials

/// What a device keeps of its sync: held in the vault as one item (so
/// under the whole-vault commitment, and written in the same transaction
/// as the merge it records).
public struct SyncState: Sendable {
    /// This device's id.
    public var device: String
    /// The key of the tree's first epoch (32 bytes): items are named by it.
    public var syncKey: SecretBytes
    /// The epochs after the first this device knows (`fob passwd
    /// --rotate-key`, `fob devices --revoke`), oldest first; the last is current.
    public var laterEpochs: [KeyEpoch]
    /// The remote, as given to `fob sync init` or `join`.
    public var remote: String
    /// The highest counter this device has reserved (written or about to be).
    public var counter: UInt64
    /// The highest head counter seen of every other device: a remote that
    /// goes back below it is refused.
    public var seen: [String: UInt64]
    /// The commit whose tree the vault reflects (`nil` before the first merge).
    public var syncedCommit: String?
    /// Item name → the vault revision it had at the last merge.
    public var revisions: [String: UInt64]
    /// Items `fob resolve` settled, written out at the next commit.
    public var resolved: Set<String>
    /// Names a merge dropped from two concurrent renames of one item whose
    /// values differ from the kept name's, by dropped name → kept name:
    /// the next export writes the dropped name's values beside the kept
    /// item as a conflicting version, with the dropped name's tombstone.
    /// An entry lasts until the merge of that tombstone.
    public var renamedAway: [String: String] = [:]
    /// When the last sync ended (seconds since 1970), and what it did.
    public var lastSync: UInt64
    /// Items the last sync changed here.
    public var lastMerged: UInt64
    /// Items with conflicts after the last sync.
    public var lastConflicts: UInt64
    /// Where ``revisions`` and what this device verified of the tree are
    /// kept: in shards of `shardDigits` hex digits of the item names, the
    /// prefixes in ``shardPrefixes`` (``SyncIndexShards``); `nil` for a
    /// state that keeps ``revisions`` in its own item (as written before
    /// the shards), which verifies the whole tree at its next sync.
    var shardDigits: Int?
    /// The prefixes that have a shard.
    var shardPrefixes: [String] = []
    /// This device's name (``DeviceName``), or `nil` for one set up
    /// without (before names were kept).
    public var name: String?
    /// The header costs chosen at `fob sync init` (its `--kdf` preset), or
    /// `nil` for a device that joined: a new header of this device takes
    /// them, never the costs of a header in the tree.
    public var headerKDF: KDFParameters?
    /// Every device this device knows to be revoked, with the last counter
    /// of its still taken. Only grows: a tree that lacks one of them, or
    /// names a later cut-off, was tampered with.
    public var revoked: [String: UInt64] = [:]
    /// Whether a sync found this vault to be a copy of another device's
    /// (``SyncError/copied(_:)``): only then does `fob sync join` take a
    /// new device id for a vault that syncs already.
    public var copyFound = false
    /// This device's signing key (``DeviceSigningKey``): every file it
    /// writes to the tree is signed with it. `nil` in a state written
    /// before signing keys (``SyncVault/load()`` makes one).
    public var signingKey: DeviceSigningKey?
    /// The version of the device roster of each other device
    /// (``DeviceRoster``, `devices/DEVICE.roster`) this device last took:
    /// a tree with an older one, or without one, was tampered with.
    public var rosterVersions: [String: UInt64] = [:]
    /// The public signing key of every device this device has seen sign
    /// its head, by device id: a key once taken is never changed nor
    /// dropped, so a file under a device's id verifies only with its key.
    public var signers: [String: [UInt8]] = [:]
    /// For each signer and this device, the last counter of its own it
    /// wrote before it had a signing key (from its signed head): its files
    /// up to it are taken unsigned, later ones only signed.
    public var unsignedUpTo: [String: UInt64] = [:]
    /// Who added each device this device trusts (its own entry, and each
    /// of ``signers``) to its trust, as its roster records them
    /// (``DeviceRoster/Origin``); a device missing here was taken in
    /// before origins were kept, and is listed as added by this device.
    public var origins: [String: DeviceRoster.Origin] = [:]

    /// A new device's state.
    public init(device: String, syncKey: SecretBytes, remote: String) {
        self.device = device
        self.syncKey = syncKey
        self.remote = remote
        laterEpochs = []
        counter = 0
        seen = [:]
        syncedCommit = nil
        revisions = [:]
        resolved = []
        lastSync = 0
        lastMerged = 0
        lastConflicts = 0
    }

    /// Every epoch known, oldest first: the first one's key is ``syncKey``.
    public var epochs: [KeyEpoch] { [KeyEpoch(number: 1, device: "", key: syncKey)] + laterEpochs }

    /// The current epoch: the last one.
    public var currentEpoch: KeyEpoch { epochs[epochs.count - 1] }

    /// Adds `epoch` when it is new, keeping the order (the greatest last).
    /// - Returns: whether it was new.
    @discardableResult
    public mutating func learn(_ epoch: KeyEpoch) -> Bool {
        guard epoch.number > 1, !laterEpochs.contains(where: { $0.number == epoch.number && $0.device == epoch.device })
        else { return false }
        laterEpochs.append(epoch)
        laterEpochs.sort { $1.isAfter($0) }
        return true
    }

    /// The item that holds the state: a note in the access group
    /// `fob.sync`, which the tree never carries.
    public static let key = ItemKey(accessGroup: "fob.sync", service: "fob-sync", account: "state")

    /// Whether `item` is the state's item.
    public static func isStateItem(_ item: Item) -> Bool { ItemKey(item) == key && item.itemClass == .genericPassword }

    /// The state as an item to store.
    public func item(now: Date) -> Item {
        Item(
            service: SyncState.key.service, account: SyncState.key.account, accessGroup: SyncState.key.accessGroup,
            label: "sync state (written by fob sync)", kind: .note, created: now, modified: now,
            secret: encoded())
    }

    func encoded() -> SecretBytes {
        var w = ByteWriter()
        defer { w.wipe() }
        w.u8(1)
        w.string(device)
        syncKey.withUnsafeBytes { w.raw($0) }
        w.string(remote)
        w.u64(counter)
        w.vector(VersionVector(seen))
        w.string(syncedCommit ?? "")
        w.u32(UInt32(revisions.count))
        for (name, revision) in revisions.sorted(by: { $0.key < $1.key }) {
            w.string(name)
            w.u64(revision)
        }
        w.u32(UInt32(resolved.count))
        for name in resolved.sorted() { w.string(name) }
        w.u64(lastSync)
        w.u64(lastMerged)
        w.u64(lastConflicts)
        // Optional sections follow, each once, tagged, in tag order: 1 the
        // later key epochs (a state of one epoch has none), 2 the index's
        // shard layout (a state that keeps its table itself has none), 3
        // this device's name.
        if !laterEpochs.isEmpty {
            w.u8(1)
            w.epochs(laterEpochs)
        }
        if let shardDigits {
            w.u8(2)
            w.u8(UInt8(shardDigits))
            w.u32(UInt32(shardPrefixes.count))
            for prefix in shardPrefixes { w.string(prefix) }
        }
        if let name {
            w.u8(3)
            w.string(name)
        }
        // 4 the header costs of `sync init`, 5 the revoked devices.
        if let headerKDF {
            w.u8(4)
            w.u64(headerKDF.opslimit)
            w.u64(UInt64(headerKDF.memlimit))
        }
        if !revoked.isEmpty {
            w.u8(5)
            w.vector(VersionVector(revoked))
        }
        // 6 (no content) a copy was found.
        if copyFound { w.u8(6) }
        encodeTrust(into: &w)
        return SecretBytes(w.bytes)
    }

    /// Decodes the state item's secret.
    /// - Throws: ``TreeFormatError``.
    public static func decode(_ secret: SecretBytes) throws(TreeFormatError) -> SyncState {
        try reading(secret) { (raw) throws(TreeFormatError) -> SyncState in
            var r = ByteReader(raw)
            guard try r.u8() == 1 else { throw .malformed("an unknown sync state version") }
            let device = try r.device()
            let key = SecretBytes(try r.data(max: 32))
            guard key.count == 32 else { throw .malformed("the sync key") }
            var state = SyncState(device: device, syncKey: key, remote: try r.string(max: 65_536))
            state.counter = try r.u64()
            state.seen = try r.vector().counters
            let commit = try r.string(max: 64)
            state.syncedCommit = commit.isEmpty ? nil : commit
            let count = try r.u32()
            // Each entry takes at least 12 bytes: a count beyond what is left is damage.
            guard Int(count) <= (raw.count - r.offset) / 12 else { throw .truncated }
            state.revisions.reserveCapacity(Int(count))
            for _ in 0..<count { state.revisions[try r.string(max: 32)] = try r.u64() }
            let resolvedCount = try r.u32()
            for _ in 0..<resolvedCount { state.resolved.insert(try r.string(max: 32)) }
            state.lastSync = try r.u64()
            state.lastMerged = try r.u64()
            state.lastConflicts = try r.u64()
            var lastTag: UInt8 = 0
            while !r.atEnd {
                let tag = try r.u8()
                guard tag > lastTag else { throw .malformed("a sync state section out of order") }
                lastTag = tag
                switch tag {
                case 1:
                    for epoch in try r.epochs() {
                        guard epoch.number > 1, state.learn(epoch) else { throw .malformed("a key epoch") }
                    }
                case 2: try state.decodeShardLayout(&r)
                case 3:
                    let name = try r.string(max: DeviceName.maxBytes)
                    guard DeviceName.isValid(name) else { throw .malformed("the device name") }
                    state.name = name
                case 4:
                    let ops = try r.u64()
                    let mem = try r.u64()
                    let kdf = KDFParameters(opslimit: ops, memlimit: Int(min(mem, UInt64(Int.max))))
                    guard kdf.isValid else { throw .malformed("the header costs") }
                    state.headerKDF = kdf
                case 5: state.revoked = try r.vector().counters
                case 6: state.copyFound = true
                case 7: state.signingKey = try DeviceSigningKey(secretKey: SecretBytes(try r.data(max: 64)))
                case 8: try state.decodeSigners(&r)
                case 9: state.unsignedUpTo = try r.vector().counters
                case 10: state.rosterVersions = try r.vector().counters
                case 11: try state.decodeOrigins(&r)
                case 12: try state.decodeRenamedAway(&r)
                default: throw .malformed("an unknown sync state section")
                }
            }
            guard r.atEnd else { throw .malformed("bytes after the sync state") }
            return state
        }
    }
}

extension SyncState {
    /// Writes the sections of what this device trusts (7 to 11), then 12.
    func encodeTrust(into w: inout ByteWriter) {
        // 7 the signing key's secret half (64 bytes), 8 the signers, 9
        // the counters up to which each wrote unsigned files.
        if let signingKey {
            w.u8(7)
            signingKey.secretKey.withUnsafeBytes { w.raw($0) }
        }
        Self.encode(8, signers, into: &w) { w, id, key in
            w.string(id)
            w.data(key)
        }
        if unsignedUpTo.values.contains(where: { $0 > 0 }) {
            w.u8(9)
            w.vector(VersionVector(unsignedUpTo.filter { $0.value > 0 }))
        }
        // 10 the versions of the other devices' rosters.
        if !rosterVersions.isEmpty {
            w.u8(10)
            w.vector(VersionVector(rosterVersions))
        }
        // 11 who added each trusted device: id, adder, its counter, time.
        Self.encode(11, origins, into: &w) { w, id, origin in
            w.string(id)
            w.string(origin.device)
            w.u64(origin.counter)
            w.u64(origin.time)
        }
        // 12 the names a merge dropped, to keep as conflicting versions: dropped, kept.
        Self.encode(12, renamedAway, into: &w) { w, dropped, kept in
            w.string(dropped)
            w.string(kept)
        }
    }

    /// Writes section `tag` of `map` unless it is empty: the tag, the count
    /// (u32), then each entry in key order, written by `entry` (what
    /// ``entries(_:limit:duplicate:_:)`` reads back).
    static func encode<Value>(
        _ tag: UInt8, _ map: [String: Value], into w: inout ByteWriter,
        _ entry: (inout ByteWriter, String, Value) -> Void
    ) {
        guard !map.isEmpty else { return }
        w.u8(tag)
        w.u32(UInt32(map.count))
        for (key, value) in map.sorted(by: { $0.key < $1.key }) { entry(&w, key, value) }
    }

    /// Reads a section of `count` entries (a u32, at most `limit`) into a
    /// map, each entry read by `entry`; a key read twice is `duplicate`.
    static func entries<Key: Hashable, Value>(
        _ r: inout ByteReader, limit: UInt32, duplicate: String,
        _ entry: (inout ByteReader) throws(TreeFormatError) -> (Key, Value)
    ) throws(TreeFormatError) -> [Key: Value] {
        let count = try r.u32()
        guard count <= limit else { throw .tooLarge }
        var out: [Key: Value] = [:]
        for _ in 0..<count {
            let (key, value) = try entry(&r)
            guard out[key] == nil else { throw .malformed(duplicate) }
            out[key] = value
        }
        return out
    }

    /// Reads the section of the names a merge dropped (each to the name kept).
    mutating func decodeRenamedAway(_ r: inout ByteReader) throws(TreeFormatError) {
        renamedAway = try Self.entries(&r, limit: 100_000, duplicate: "a dropped name") {
            (r: inout ByteReader) throws(TreeFormatError) in (try r.string(max: 32), try r.string(max: 32))
        }
    }

    /// Reads the signers' section (each device's 32-byte public key).
    mutating func decodeSigners(_ r: inout ByteReader) throws(TreeFormatError) {
        signers = try Self.entries(&r, limit: 10_000, duplicate: "a device's signing key") {
            (r: inout ByteReader) throws(TreeFormatError) in
            let id = try r.device()
            let key = Array(try r.data(max: 32))
            guard key.count == 32 else { throw .malformed("a device's signing key") }
            return (id, key)
        }
    }

    /// Reads the origins' section.
    mutating func decodeOrigins(_ r: inout ByteReader) throws(TreeFormatError) {
        origins = try Self.entries(&r, limit: 10_000, duplicate: "a device's origin") {
            (r: inout ByteReader) throws(TreeFormatError) in
            let id = try r.device()
            return (id, DeviceRoster.Origin(device: try r.device(), counter: try r.u64(), time: try r.u64()))
        }
    }

    /// Reads the shard layout that follows the state's fields.
    mutating func decodeShardLayout(_ r: inout ByteReader) throws(TreeFormatError) {
        let digits = Int(try r.u8())
        guard digits <= SyncIndexShards.maxDigits else { throw .malformed("the index layout") }
        let count = try r.u32()
        guard count <= 1 << (4 * digits) else { throw .malformed("the index layout") }
        var prefixes: [String] = []
        for _ in 0..<count {
            let prefix = try r.string(max: digits)
            guard prefix.utf8.count == digits, prefix.utf8.allSatisfy(TreePath.isHexDigit),
                prefixes.last.map({ $0 < prefix }) ?? true
            else { throw .malformed("the index layout") }
            prefixes.append(prefix)
        }
        shardDigits = digits
        shardPrefixes = prefixes
    }
}

extension SyncState {
    /// The highest counter of `device` this device has taken in (its own
    /// reserved counter for itself): a revision at or below it that shows
    /// up again in a tree is a replay.
    func watermark(of device: String) -> UInt64 {
        device == self.device ? counter : (seen[device] ?? 0)
    }
}

import FobStore
import FoundationEssentials

/// Paths in the sync tree.
///
/// - `headers/DEVICE.header`: the sync key sealed under an Argon2id key of
///   that device's master password (``TreeHeader``), written by that device only;
/// - `devices/DEVICE.head`: each device's head (``DeviceHead``), written by that device only;
/// - `items/AA/NAME/DEVICE.COUNTER.rec`: one revision of one item
///   (``Revision``), immutable; `AA` is the name's first two digits;
/// - `keys/EPOCH.DEVICE.key`: the keys of the epochs before EPOCH, sealed
///   under EPOCH's key (``EpochFile``), written once by the device that started it.
public enum TreePath {
    /// The path of the epoch file of `epoch` (never epoch 1).
    public static func epoch(_ epoch: KeyEpoch) -> String { "keys/\(epoch.number).\(epoch.device).key" }

    /// The number and device of an epoch file's path, or `nil`.
    public static func parseEpoch(_ path: String) -> (number: UInt64, device: String)? {
        guard path.hasPrefix("keys/"), path.hasSuffix(".key") else { return nil }
        let stem = path.dropFirst(5).dropLast(4).split(separator: ".", omittingEmptySubsequences: false)
        guard stem.count == 2, let number = parseCounter(stem[0]), number > 1, DeviceID.isValid(stem[1]) else {
            return nil
        }
        return (number, String(stem[1]))
    }

    /// The path of `device`'s header.
    public static func header(device: String) -> String { "headers/\(device).header" }

    /// The device of a header path, or `nil`.
    public static func parseHeader(_ path: String) -> String? {
        guard path.hasPrefix("headers/"), path.hasSuffix(".header") else { return nil }
        let id = path.dropFirst(8).dropLast(7)
        return DeviceID.isValid(id) ? String(id) : nil
    }

    /// The path of the revision `dot` of item `name`.
    public static func record(name: String, dot: Dot) -> String {
        "items/\(name.prefix(2))/\(name)/\(dot.device).\(dot.counter).rec"
    }

    /// The path of `device`'s head.
    public static func head(device: String) -> String { "devices/\(device).head" }

    /// The item name and dot of a revision path, or `nil` for any other path
    /// (strict: lowercase hex, no leading zeros, the prefix matching).
    /// Read byte by byte: a fetched tree's listing has one path per item.
    public static func parseRecord(_ path: String) -> (name: String, dot: Dot)? {
        var path = path
        return path.withUTF8 { b -> (name: String, dot: Dot)? in
            // items/AA/NAME/DEVICE.COUNTER.rec: NAME 32 hex digits beginning
            // with AA, DEVICE 16, COUNTER 1 to 19 decimal digits.
            let n = b.count
            guard n >= 64, n <= 82, b[5] == 47, b[8] == 47, b[41] == 47, b[58] == 46, b[n - 4] == 46,
                b[n - 3] == 114, b[n - 2] == 101, b[n - 1] == 99, b[6] == b[9], b[7] == b[10],
                b[0] == 105, b[1] == 116, b[2] == 101, b[3] == 109, b[4] == 115,
                b[9..<41].allSatisfy(isHexDigit), b[42..<58].allSatisfy(isHexDigit),
                b[59] != 48, b[59..<(n - 4)].allSatisfy({ $0 >= 48 && $0 <= 57 })
            else { return nil }
            // At most 19 digits: below 10^19, so no overflow.
            var counter: UInt64 = 0
            for digit in b[59..<(n - 4)] { counter = counter * 10 + UInt64(digit - 48) }
            let name = String(decoding: UnsafeBufferPointer(rebasing: b[9..<41]), as: UTF8.self)
            let device = String(decoding: UnsafeBufferPointer(rebasing: b[42..<58]), as: UTF8.self)
            return (name, Dot(device: device, counter: counter))
        }
    }

    /// The path of the device roster `device` signs.
    public static func roster(device: String) -> String { "devices/\(device).roster" }

    /// The device of a device roster's path, or `nil`.
    public static func parseRoster(_ path: String) -> String? {
        guard path.hasPrefix("devices/"), path.hasSuffix(".roster") else { return nil }
        let id = path.dropFirst(8).dropLast(7)
        return DeviceID.isValid(id) ? String(id) : nil
    }

    /// The path of the revocation of `device`.
    public static func revoked(device: String) -> String { "devices/\(device).revoked" }

    /// The device of a revocation path, or `nil`.
    public static func parseRevoked(_ path: String) -> String? {
        guard path.hasPrefix("devices/"), path.hasSuffix(".revoked") else { return nil }
        let id = path.dropFirst(8).dropLast(8)
        return DeviceID.isValid(id) ? String(id) : nil
    }

    /// The device of a head path, or `nil`.
    public static func parseHead(_ path: String) -> String? {
        guard path.hasPrefix("devices/"), path.hasSuffix(".head") else { return nil }
        let id = path.dropFirst(8).dropLast(5)
        return DeviceID.isValid(id) ? String(id) : nil
    }

    static func parseCounter(_ text: Substring) -> UInt64? {
        guard !text.isEmpty, text.utf8.count <= 19, text.utf8.first != 48,
            text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        return UInt64(text)
    }

    static func isHexDigit(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 97 && c <= 102) }
}

/// The parts of an item the merge compares and takes one by one. Where
/// two devices changed different parts, both changes are kept.
public enum FieldGroup: UInt8, CaseIterable, Sendable, Comparable {
    case secret = 1, notes, url, label, oneTimePassword, customFields, kind, access, generic, apple

    public static func < (a: FieldGroup, b: FieldGroup) -> Bool { a.rawValue < b.rawValue }

    /// Whether `a` and `b` hold the same value of this part.
    func same(_ a: Item, _ b: Item) -> Bool {
        switch self {
        case .secret: a.secret == b.secret
        case .notes: a.comment == b.comment
        case .url: a.url == b.url
        case .label: a.label == b.label
        case .oneTimePassword: a.oneTimePassword == b.oneTimePassword
        case .customFields: a.customFields == b.customFields
        case .kind: a.kind == b.kind
        case .access: a.accessible == b.accessible && a.deviceBinding == b.deviceBinding
        case .generic: a.generic == b.generic
        case .apple:
            a.itemDescription == b.itemDescription && a.itemType == b.itemType && a.creator == b.creator
                && a.isInvisible == b.isInvisible && a.isNegative == b.isNegative
                && a.accessControlFlags == b.accessControlFlags
        }
    }

    /// Copies this part of `source` into `target`.
    func copy(from source: Item, into target: inout Item) {
        switch self {
        case .secret: target.secret = source.secret
        case .notes: target.comment = source.comment
        case .url: target.url = source.url
        case .label: target.label = source.label
        case .oneTimePassword: target.oneTimePassword = source.oneTimePassword
        case .customFields: target.customFields = source.customFields
        case .kind: target.kind = source.kind
        case .access:
            target.accessible = source.accessible
            target.deviceBinding = source.deviceBinding
        case .generic: target.generic = source.generic
        case .apple:
            target.itemDescription = source.itemDescription
            target.itemType = source.itemType
            target.creator = source.creator
            target.isInvisible = source.isInvisible
            target.isNegative = source.isNegative
            target.accessControlFlags = source.accessControlFlags
        }
    }
}

/// One revision of one item: a file of the tree, never changed once written.
public struct Revision: Sendable {
    /// Who wrote it, under which counter (from the file's name, authenticated).
    public var dot: Dot
    /// The revisions of this item it has seen (its own dot included).
    public var vector: VersionVector
    /// For each part of the item, the write that set its value.
    public var fieldDots: [FieldGroup: Dot]
    /// The item (revision 0), or `nil` for a tombstone: deleted.
    public var item: Item?
    /// Versions kept beside it after a conflict, until `fob resolve`.
    public var siblings: [Sibling]
    /// The ``KeyEpoch/id`` of the key its file is sealed under (0 for one not read from a file).
    public var sealedUnder: UInt64 = 0
    /// Whether its file was signed by its device (``SignedFile``); a file
    /// written before signing keys is written again, signed, at the next export.
    var signed = true

    static let magic = Array("FSR2".utf8)
    /// Version 1: no sibling's parts; version 2 adds them (written only
    /// when a sibling has them, so a revision without one stays readable
    /// by a Fob that knows version 1 only).
    static let version: UInt8 = 1
    static let versionWithParts: UInt8 = 2
    /// Version 3 adds, after the parts, each sibling's writer (a flag byte,
    /// then the device id when 1); written only when a sibling has one.
    static let versionWithWriters: UInt8 = 3

    static func associatedData(name: String, dot: Dot) -> [UInt8] {
        Array("fob-sync record 1/\(name)/\(dot.device).\(dot.counter)".utf8)
    }

    /// The file's bytes: "FSR2", the current key's id, then the plaintext
    /// sealed with XChaCha20-Poly1305 under the current epoch's sealing
    /// key, with the item name, device and counter as associated data.
    /// The plaintext: version, flags, vector, field dots, the item and its
    /// siblings; in versions 2 and 3 then one 32-bit mask per sibling of the
    /// parts it lost (bit n for ``FieldGroup`` raw value n; 0: not known);
    /// in version 3 then per sibling a byte, 1 when its writer's device id follows.
    public func sealed(name: String, keys: SyncKeys) -> [UInt8] {
        var w = ByteWriter()
        defer { w.wipe() }
        encodePlaintext(into: &w)
        return keys.seal(magic: Revision.magic, w.bytes, ad: Revision.associatedData(name: name, dot: dot))
    }

    /// ``sealed(name:keys:)``, and the revision as ``open(_:name:dot:keys:)``
    /// gives it back from those bytes (the value another device reads),
    /// decoded from the plaintext before it is sealed rather than opened
    /// again.
    /// - Throws: ``TreeFormatError``, as ``open(_:name:dot:keys:)``.
    func sealedAndRead(name: String, keys: SyncKeys) throws(TreeFormatError) -> (bytes: [UInt8], read: Revision) {
        var w = ByteWriter()
        defer { w.wipe() }
        encodePlaintext(into: &w)
        let bytes = keys.seal(magic: Revision.magic, w.bytes, ad: Revision.associatedData(name: name, dot: dot))
        var read = try reading(w.bytes) { (raw) throws(TreeFormatError) -> Revision in
            try Revision.decodePlaintext(raw, dot: dot)
        }
        read.sealedUnder = keys.sealingID
        try read.checkItems(name: name, keys: keys)
        return (bytes, read)
    }

    /// The plaintext ``sealed(name:keys:)`` seals.
    private func encodePlaintext(into w: inout ByteWriter) {
        let withWriters = siblings.contains { $0.device != nil }
        let withParts = withWriters || siblings.contains { $0.parts != nil }
        w.u8(withWriters ? Revision.versionWithWriters : withParts ? Revision.versionWithParts : Revision.version)
        w.u8(item == nil ? 1 : 0)
        w.vector(vector)
        let dots = fieldDots.sorted { $0.key < $1.key }
        w.u32(UInt32(dots.count))
        for (group, dot) in dots {
            w.u8(group.rawValue)
            w.string(dot.device)
            w.u64(dot.counter)
        }
        let items = (item.map { [$0] } ?? []) + siblings.map(\.item)
        w.u32(UInt32(siblings.count))
        for item in items {
            var copy = item
            copy.revision = 0
            let encoded = ItemWire.encode(copy)
            encoded.withUnsafeBytes { w.raw($0) }
        }
        if withParts {
            for sibling in siblings { w.u32(Revision.mask(sibling.parts)) }
        }
        if withWriters {
            for sibling in siblings {
                w.u8(sibling.device == nil ? 0 : 1)
                if let device = sibling.device { w.string(device) }
            }
        }
    }

    /// Opens a revision file.
    /// - Parameters:
    ///   - bytes: the file's content (not trusted).
    ///   - name, dot: from its path (``TreePath/parseRecord(_:)``).
    /// - Throws: ``TreeFormatError``.
    public static func open(_ bytes: [UInt8], name: String, dot: Dot, keys: SyncKeys) throws(TreeFormatError)
        -> Revision
    {
        let (plain, keyID) = try keys.open(
            bytes, magic: magic, ad: associatedData(name: name, dot: dot), what: "a revision file")
        var revision = try reading(plain) { (raw) throws(TreeFormatError) -> Revision in
            try decodePlaintext(raw, dot: dot)
        }
        revision.sealedUnder = keyID
        try revision.checkItems(name: name, keys: keys)
        return revision
    }

    /// The item must be the one its path names, and never enter a group
    /// Fob keeps for itself (the sync state's): a file sealed under a key
    /// another device holds cannot plant an item under another name.
    private func checkItems(name: String, keys: SyncKeys) throws(TreeFormatError) {
        for item in [item].compactMap({ $0 }) + siblings.map(\.item) {
            guard keys.name(of: item) == name else { throw .malformed("an item whose key is not its file's name") }
            guard !ItemQuery.reservedAccessGroups.contains(item.accessGroup) else {
                throw .malformed("an item in Fob's reserved access group \"\(item.accessGroup)\"")
            }
        }
    }

    /// Decodes a revision's plaintext (the fuzz target `sync-tree` calls it).
    public static func decodePlaintext(_ raw: UnsafeRawBufferPointer, dot: Dot) throws(TreeFormatError) -> Revision {
        var r = ByteReader(raw)
        let fileVersion = try r.u8()
        guard (version...versionWithWriters).contains(fileVersion) else {
            throw .malformed("an unknown revision version")
        }
        let flags = try r.u8()
        guard flags <= 1 else { throw .malformed("flags") }
        let vector = try r.vector()
        guard vector.includes(dot), vector.counters[dot.device] == dot.counter else {
            throw .malformed("a vector without its own revision")
        }
        let dotCount = try r.u32()
        guard dotCount <= UInt32(FieldGroup.allCases.count) else { throw .tooLarge }
        var dots: [FieldGroup: Dot] = [:]
        for _ in 0..<dotCount {
            guard let group = FieldGroup(rawValue: try r.u8()), dots[group] == nil else { throw .malformed("a field") }
            let device = try r.device()
            let counter = try r.u64()
            let fieldDot = Dot(device: device, counter: counter)
            guard vector.includes(fieldDot) else { throw .malformed("a field newer than its revision") }
            dots[group] = fieldDot
        }
        let siblingCount = try r.u32()
        guard siblingCount <= 64 else { throw .tooLarge }
        var items: [Item] = []
        for _ in 0..<Int(siblingCount) + (flags == 1 ? 0 : 1) {
            let encoded = try r.data(max: Vault.maxRecordBytes)
            do { items.append(try ItemWire.decode(encoded)) } catch { throw .malformed("an item: \(error)") }
        }
        let item = flags == 1 ? nil : items.removeFirst()
        var siblings = items.map { Sibling(item: $0, parts: nil) }
        if fileVersion >= versionWithParts {
            for i in siblings.indices { siblings[i].parts = try parts(try r.u32()) }
        }
        if fileVersion == versionWithWriters {
            for i in siblings.indices {
                switch try r.u8() {
                case 0: break
                case 1: siblings[i].device = try r.device()
                default: throw .malformed("a sibling's writer")
                }
            }
        }
        guard r.atEnd else { throw .malformed("bytes after the end") }
        return Revision(dot: dot, vector: vector, fieldDots: dots, item: item, siblings: siblings)
    }

    /// The mask of `parts` (bit n for raw value n; 0 for `nil`).
    static func mask(_ parts: Set<FieldGroup>?) -> UInt32 {
        (parts ?? []).reduce(0) { $0 | 1 << UInt32($1.rawValue) }
    }

    /// The parts of a mask: `nil` for 0.
    /// - Throws: ``TreeFormatError/malformed(_:)`` for a bit no part has.
    static func parts(_ bits: UInt32) throws(TreeFormatError) -> Set<FieldGroup>? {
        guard bits != 0 else { return nil }
        let known = FieldGroup.allCases.filter { bits & 1 << UInt32($0.rawValue) != 0 }
        guard mask(Set(known)) == bits else { throw .malformed("a sibling's parts") }
        return Set(known)
    }
}

/// A device's head: `devices/DEVICE.head`, written by that device only,
/// sealed (so MAC'd) under the sync key with the device id as associated
/// data, and signed by the device (``SignedFile``): it carries the public
/// half of the device's signing key.
public struct DeviceHead: Sendable, Equatable {
    /// The device.
    public var device: String
    /// The highest counter it has written.
    public var counter: UInt64
    /// The highest counter of every device it had seen when it wrote this.
    public var vector: VersionVector
    /// A keyed hash of the revision paths live in the tree it committed.
    public var liveHash: [UInt8]
    /// The device's name (``DeviceName``), or `nil` for one without.
    public var name: String?
    /// The public half of the device's signing key (32 bytes), or `nil`
    /// in a head written before signing keys.
    public var publicKey: [UInt8]?
    /// The last counter of its own it wrote before it had a signing key:
    /// its files up to it may be unsigned (0: none; only with ``publicKey``).
    public var unsignedUpTo: UInt64 = 0
    /// The ``KeyEpoch/id`` of the key its file is sealed under (0 for one not read from a file).
    var sealedUnder: UInt64 = 0

    static let magic = Array("FSH2".utf8)

    /// Equal heads say the same; the key their files were sealed under does not count.
    public static func == (a: DeviceHead, b: DeviceHead) -> Bool {
        a.device == b.device && a.counter == b.counter && a.vector == b.vector && a.liveHash == b.liveHash
            && a.name == b.name && a.publicKey == b.publicKey && a.unsignedUpTo == b.unsignedUpTo
    }

    /// The file's bytes: "FSH2", the current key's id, then the plaintext
    /// sealed under the current epoch with the device id as associated data.
    /// The plaintext: version (1; 2 with a name; 3 with a signing key),
    /// counter, vector, live hash, then in version 2 the name; in version 3
    /// the public key (32 bytes), ``unsignedUpTo`` (8 bytes) and a byte,
    /// 1 when the name follows.
    public func sealed(keys: SyncKeys) -> [UInt8] {
        var w = ByteWriter()
        w.u8(publicKey != nil ? 3 : name == nil ? 1 : 2)
        w.u64(counter)
        w.vector(vector)
        w.data(liveHash)
        if let publicKey {
            w.data(publicKey)
            w.u64(unsignedUpTo)
            w.u8(name == nil ? 0 : 1)
        }
        if let name { w.string(name) }
        return keys.seal(magic: DeviceHead.magic, w.bytes, ad: Array("fob-sync head 1/\(device)".utf8))
    }

    /// Opens `device`'s head file (its content, the envelope taken off).
    /// - Throws: ``TreeFormatError``.
    public static func open(_ bytes: [UInt8], device: String, keys: SyncKeys) throws(TreeFormatError) -> DeviceHead {
        let (plain, keyID) = try keys.open(
            bytes, magic: magic, ad: Array("fob-sync head 1/\(device)".utf8), what: "a head file")
        var head = try reading(plain) { (raw) throws(TreeFormatError) -> DeviceHead in
            try decodePlaintext(raw, device: device)
        }
        head.sealedUnder = keyID
        return head
    }

    /// Decodes a head's plaintext (the fuzz target `sync-tree` calls it).
    public static func decodePlaintext(_ raw: UnsafeRawBufferPointer, device: String) throws(TreeFormatError)
        -> DeviceHead
    {
        var r = ByteReader(raw)
        let version = try r.u8()
        guard (1...3).contains(version) else { throw .malformed("an unknown head version") }
        let counter = try r.u64()
        let vector = try r.vector()
        let hash = Array(try r.data(max: 64))
        var key: [UInt8]?
        var unsignedUpTo: UInt64 = 0
        var named = version == 2
        if version == 3 {
            key = Array(try r.data(max: 32))
            unsignedUpTo = try r.u64()
            let flag = try r.u8()
            guard key?.count == 32, flag <= 1 else { throw .malformed("a head's signing key") }
            named = flag == 1
        }
        var name: String?
        if named {
            let given = try r.string(max: DeviceName.maxBytes)
            guard DeviceName.isValid(given) else { throw .malformed("a device name") }
            name = given
        }
        guard r.atEnd, hash.count == 32 else { throw .malformed("a head") }
        return DeviceHead(
            device: device, counter: counter, vector: vector, liveHash: hash, name: name, publicKey: key,
            unsignedUpTo: unsignedUpTo)
    }
}

/// `devices/DEVICE.revoked`: the device's writes after `counter` are
/// ignored by every device, and its head may go. Sealed under the sync key
/// with the device id as associated data, and signed by the device that
/// revoked it (``SignedFile``).
public struct Revocation: Sendable, Equatable {
    /// The revoked device.
    public var device: String
    /// Its last counter still taken.
    public var counter: UInt64

    static func associatedData(_ device: String) -> [UInt8] { Array("fob-sync revoked 1/\(device)".utf8) }

    /// The file's bytes.
    public func sealed(keys: SyncKeys) -> [UInt8] {
        var w = ByteWriter()
        w.u64(counter)
        return keys.seal(magic: Array("FSV2".utf8), w.bytes, ad: Revocation.associatedData(device))
    }

    /// Opens `device`'s revocation file.
    /// - Throws: ``TreeFormatError``.
    public static func open(_ bytes: [UInt8], device: String, keys: SyncKeys) throws(TreeFormatError) -> Revocation {
        let (plain, _) = try keys.open(
            bytes, magic: Array("FSV2".utf8), ad: associatedData(device), what: "a revocation")
        return try reading(plain) { (raw) throws(TreeFormatError) -> Revocation in
            var r = ByteReader(raw)
            let counter = try r.u64()
            guard r.atEnd else { throw .malformed("a revocation") }
            return Revocation(device: device, counter: counter)
        }
    }
}

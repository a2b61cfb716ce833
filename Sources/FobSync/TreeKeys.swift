import FobStore
import FoundationEssentials

/// One key epoch of a sync tree: the random 32-byte key every file of
/// the epoch is sealed under. The tree starts at epoch 1 (`fob sync
/// init`); `fob passwd --rotate-key` and `fob devices --revoke` start the
/// next one. Epochs are ordered by number, then by the device that started
/// them (two devices rotating at once both count; the greater is current).
public struct KeyEpoch: Sendable, Equatable {
    /// The epoch's number, from 1.
    public var number: UInt64
    /// The device that started it (`""` for epoch 1).
    public var device: String
    /// The epoch's key (32 bytes).
    public var key: SecretBytes

    /// Names the key in the files sealed under it without telling it: a
    /// keyed BLAKE2b of a fixed input, its first 8 bytes, big-endian.
    public var id: UInt64 {
        Sodium.genericHash(Array("fob-sync key id".utf8), key: key, length: 16).prefix(8).reduce(0) {
            $0 << 8 | UInt64($1)
        }
    }

    /// Whether this epoch comes after `other` (number, then device id).
    public func isAfter(_ other: KeyEpoch) -> Bool {
        number != other.number ? number > other.number : device > other.device
    }
}

/// The keys of one sync tree, derived from its epochs' keys (keyed
/// BLAKE2b with a distinct input each): files are sealed under the current
/// epoch and opened under any epoch known; names come from epoch 1's key,
/// so an item keeps its name across epochs.
public struct SyncKeys: Sendable {
    /// Seals revision files and device heads: the current epoch's.
    let sealing: SecretBytes
    /// The current epoch's ``KeyEpoch/id``.
    let sealingID: UInt64
    /// The sealing key of every known epoch, by id.
    let sealingByID: [UInt64: SecretBytes]
    /// Names items: the remote learns counts and sizes, not names.
    let naming: SecretBytes
    /// The epochs known, as `NUMBER.DEVICE`.
    let known: Set<String>

    /// Whether the epoch `number` started by `device` is known.
    func knows(number: UInt64, device: String) -> Bool { known.contains("\(number).\(device)") }

    /// The keys of a tree with one epoch, keyed by `syncKey` (32 bytes).
    public init(syncKey: SecretBytes) {
        self.init(epochs: [KeyEpoch(number: 1, device: "", key: syncKey)])
    }

    /// The keys of `epochs` (not empty): names from the first, sealing
    /// under the last, opening under any.
    public init(epochs: [KeyEpoch]) {
        var byID: [UInt64: SecretBytes] = [:]
        for epoch in epochs { byID[epoch.id] = SyncKeys.sealingKey(epoch.key) }
        let current = epochs[epochs.count - 1]
        sealingID = current.id
        sealing = byID[sealingID] ?? SyncKeys.sealingKey(current.key)
        sealingByID = byID
        known = Set(epochs.map { "\($0.number).\($0.device)" })
        naming = SecretBytes(Sodium.genericHash(Array("fob-sync naming".utf8), key: epochs[0].key, length: 32))
    }

    static func sealingKey(_ key: SecretBytes) -> SecretBytes {
        SecretBytes(Sodium.genericHash(Array("fob-sync sealing".utf8), key: key, length: 32))
    }

    /// `magic`, the current key's id (8 bytes), then `plain` sealed
    /// (XChaCha20-Poly1305) with `ad`.
    func seal(magic: [UInt8], _ plain: [UInt8], ad: [UInt8]) -> [UInt8] {
        var out = magic
        for s in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: sealingID >> UInt64(s))) }
        return out + plain.withUnsafeBytes { Sodium.seal($0, ad: ad, key: sealing) }
    }

    /// Opens what ``seal(magic:_:ad:)`` made under any known epoch.
    /// - Returns: the plaintext and the id of the key it was sealed under.
    /// - Throws: ``TreeFormatError``; ``TreeFormatError/unknownKey`` for
    ///   an epoch this device does not know.
    func open(_ bytes: [UInt8], magic: [UInt8], ad: [UInt8], what: String) throws(TreeFormatError) -> (
        plain: SecretBytes, keyID: UInt64
    ) {
        guard bytes.count > magic.count + 8, Array(bytes.prefix(magic.count)) == magic else {
            throw .malformed("not \(what)")
        }
        let id = bytes[magic.count..<magic.count + 8].reduce(0) { $0 << 8 | UInt64($1) }
        guard let key = sealingByID[id] else { throw .unknownKey }
        guard let plain = Sodium.open(Array(bytes.dropFirst(magic.count + 8)), ad: ad, key: key) else {
            throw .unauthentic
        }
        return (plain, id)
    }

    /// The tree name of the item with `item`'s primary key: 32 hex digits
    /// of a keyed hash of the key's fields.
    public func name(of item: Item) -> String {
        var w = ByteWriter()
        w.string(item.itemClass.rawValue)
        w.string(item.accessGroup)
        w.string(item.service)
        w.string(item.account)
        w.u8(item.synchronizable ? 1 : 0)
        if item.itemClass == .internetPassword {
            w.string(item.internetProtocol)
            w.string(item.authenticationType)
            w.u64(UInt64(item.port))
            w.string(item.path)
            w.string(item.securityDomain)
        }
        return Sodium.hex(Sodium.genericHash(w.bytes, key: naming, length: 16))
    }
}

/// `headers/DEVICE.header`: the key of an epoch sealed under a key derived
/// from the master password (Argon2id), so a new device needs only the
/// password. The epoch it seals, its salt and its costs are authenticated
/// (associated data); costs below ``floor`` are refused.
public struct TreeHeader: Sendable, Equatable {
    /// The Argon2id salt (16 bytes).
    public var salt: [UInt8]
    /// The Argon2id costs.
    public var kdf: KDFParameters
    /// The epoch whose key it seals (its number, and the device that started it; `""` for 1).
    public var epochNumber: UInt64
    public var epochDevice: String
    /// The epoch's key, sealed.
    public var sealedKey: [UInt8]

    /// Format 3: the salt and the costs are associated data, so a header
    /// whose costs were lowered does not open (format 2 left them unauthenticated).
    static let magic = Array("FOBSYNC3".utf8)
    static let formatTwo = Array("FOBSYNC2".utf8)

    /// The lowest costs a header may ask for: libsodium's INTERACTIVE preset
    /// (2 passes, 64 MiB). A header below it is refused before any key derivation.
    public static let floor = KDFParameters(.interactive)

    /// Whether `kdf` asks for at least `floor`'s passes and memory.
    public static func meets(_ kdf: KDFParameters, floor: KDFParameters) -> Bool {
        kdf.opslimit >= floor.opslimit && kdf.memlimit >= floor.memlimit
    }

    /// `kdf`, raised to `floor` where it asks for less.
    public static func raised(_ kdf: KDFParameters, to floor: KDFParameters) -> KDFParameters {
        KDFParameters(opslimit: max(kdf.opslimit, floor.opslimit), memlimit: max(kdf.memlimit, floor.memlimit))
    }

    /// The magic, the salt, the costs and the epoch it seals.
    var associatedData: [UInt8] {
        var w = ByteWriter()
        w.data(salt)
        w.u64(kdf.opslimit)
        w.u64(UInt64(kdf.memlimit))
        return TreeHeader.magic + w.bytes + Array("/\(epochNumber).\(epochDevice)".utf8)
    }

    /// A header sealing `epoch`'s key under `password` with a new salt.
    /// - Throws: as ``Sodium/passwordKey(password:salt:kdf:)``.
    public static func make(epoch: KeyEpoch, password: SecretBytes, kdf: KDFParameters) throws(KeychainError)
        -> TreeHeader
    {
        let salt = Sodium.randomBytes(16)
        let key = try Sodium.passwordKey(password: password, salt: salt, kdf: kdf)
        var header = TreeHeader(
            salt: salt, kdf: kdf, epochNumber: epoch.number, epochDevice: epoch.device, sealedKey: [])
        header.sealedKey = epoch.key.withUnsafeBytes { Sodium.seal($0, ad: header.associatedData, key: key) }
        return header
    }

    /// The epoch it seals, or `nil` for another password.
    /// - Throws: as ``Sodium/passwordKey(password:salt:kdf:)``.
    public func open(password: SecretBytes) throws(KeychainError) -> KeyEpoch? {
        let key = try Sodium.passwordKey(password: password, salt: salt, kdf: kdf)
        guard let epochKey = Sodium.open(sealedKey, ad: associatedData, key: key), epochKey.count == 32 else {
            return nil
        }
        return KeyEpoch(number: epochNumber, device: epochDevice, key: epochKey)
    }

    /// The file's bytes.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        w.data(salt)
        w.u64(kdf.opslimit)
        w.u64(UInt64(kdf.memlimit))
        w.u64(epochNumber)
        w.string(epochDevice)
        w.data(sealedKey)
        return TreeHeader.magic + w.bytes
    }

    /// Parses a header file (the fuzz target `sync-tree` calls it).
    /// - Throws: ``TreeFormatError``.
    public static func parse(_ bytes: [UInt8]) throws(TreeFormatError) -> TreeHeader {
        if Array(bytes.prefix(8)) == formatTwo {
            throw .outdated(
                "a sync header of format 2 (costs not authenticated); run `fob passwd` with this Fob on the device that wrote it"
            )
        }
        guard bytes.count > 8, Array(bytes.prefix(8)) == magic else { throw .malformed("not a sync header") }
        return try reading(Array(bytes.dropFirst(8))) { (raw) throws(TreeFormatError) -> TreeHeader in
            var r = ByteReader(raw)
            let salt = Array(try r.data(max: 16))
            let ops = try r.u64()
            let mem = try r.u64()
            let number = try r.u64()
            let device = try r.string(max: 16)
            let sealed = Array(try r.data(max: 256))
            guard r.atEnd, salt.count == 16, mem <= UInt64(Int.max), number >= 1,
                number == 1 ? device.isEmpty : DeviceID.isValid(device)
            else { throw .malformed("a sync header") }
            let kdf = KDFParameters(opslimit: ops, memlimit: Int(mem))
            guard kdf.isValid else { throw .malformed("key derivation costs out of range") }
            return TreeHeader(salt: salt, kdf: kdf, epochNumber: number, epochDevice: device, sealedKey: sealed)
        }
    }
}

/// `keys/EPOCH.DEVICE.key`: the keys of every epoch before EPOCH that its
/// device knew, sealed under EPOCH's key. A device that learns the new key
/// (from a header, with a master password) reads the older files through
/// it; a device that knows only older keys (a revoked one) cannot open it.
public enum EpochFile {
    static func associatedData(_ epoch: KeyEpoch) -> [UInt8] {
        Array("fob-sync epoch 1/\(epoch.number).\(epoch.device)".utf8)
    }

    /// The file's bytes: "FSK1", then the older epochs sealed under `epoch`'s key.
    public static func sealed(_ epoch: KeyEpoch, older: [KeyEpoch]) -> [UInt8] {
        var w = ByteWriter()
        defer { w.wipe() }
        w.epochs(older)
        return Array("FSK1".utf8)
            + w.bytes.withUnsafeBytes {
                Sodium.seal($0, ad: associatedData(epoch), key: SyncKeys.sealingKey(epoch.key))
            }
    }

    /// The older epochs `bytes` holds, opened with `epoch`'s key.
    /// - Throws: ``TreeFormatError``.
    public static func open(_ bytes: [UInt8], epoch: KeyEpoch) throws(TreeFormatError) -> [KeyEpoch] {
        guard bytes.count > 4, Array(bytes.prefix(4)) == Array("FSK1".utf8) else {
            throw .malformed("not an epoch file")
        }
        guard
            let plain = Sodium.open(
                Array(bytes.dropFirst(4)), ad: associatedData(epoch), key: SyncKeys.sealingKey(epoch.key))
        else { throw .unauthentic }
        return try reading(plain) { (raw) throws(TreeFormatError) -> [KeyEpoch] in try decodePlaintext(raw) }
    }

    /// Decodes the plaintext (the fuzz target `sync-tree` calls it).
    public static func decodePlaintext(_ raw: UnsafeRawBufferPointer) throws(TreeFormatError) -> [KeyEpoch] {
        var r = ByteReader(raw)
        let out = try r.epochs()
        guard r.atEnd else { throw .malformed("bytes after the epochs") }
        return out
    }
}

import FobStore
import FoundationEssentials

/// Length-prefixed big-endian fields: the plaintext layout of the tree's files.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u32(_ v: UInt32) {
        for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) }
    }
    mutating func u64(_ v: UInt64) {
        for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt64(s))) }
    }
    mutating func data<C: Collection>(_ v: C) where C.Element == UInt8 {
        u32(UInt32(v.count))
        bytes.append(contentsOf: v)
    }
    mutating func raw(_ v: UnsafeRawBufferPointer) {
        u32(UInt32(v.count))
        bytes.append(contentsOf: v)
    }
    mutating func string(_ v: String) { data(Array(v.utf8)) }
    mutating func vector(_ v: VersionVector) {
        let entries = v.sortedEntries
        u32(UInt32(entries.count))
        for (device, counter) in entries {
            string(device)
            u64(counter)
        }
    }
    /// A count, then each epoch's number, device and key.
    mutating func epochs(_ list: [KeyEpoch]) {
        u32(UInt32(list.count))
        for epoch in list {
            u64(epoch.number)
            string(epoch.device)
            epoch.key.withUnsafeBytes { raw($0) }
        }
    }
    mutating func wipe() { bytes.wipe() }
}

/// Reads what ``ByteWriter`` wrote; every read is bounds-checked.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var atEnd: Bool { offset == bytes.count }

    mutating func take(_ n: Int) throws(TreeFormatError) -> UnsafeRawBufferPointer {
        guard n >= 0, bytes.count - offset >= n else { throw .truncated }
        defer { offset += n }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + n])
    }
    mutating func u8() throws(TreeFormatError) -> UInt8 { try take(1)[0] }
    mutating func u32() throws(TreeFormatError) -> UInt32 { try take(4).reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws(TreeFormatError) -> UInt64 { try take(8).reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func data(max: Int) throws(TreeFormatError) -> UnsafeRawBufferPointer {
        let n = Int(try u32())
        guard n <= max else { throw .tooLarge }
        return try take(n)
    }
    mutating func string(max: Int = 4096) throws(TreeFormatError) -> String {
        let raw = try data(max: max)
        guard let text = String(validating: raw, as: UTF8.self) else { throw .malformed("text is not UTF-8") }
        return text
    }
    mutating func device() throws(TreeFormatError) -> String {
        let id = try string(max: 16)
        guard DeviceID.isValid(id) else { throw .malformed("a device id") }
        return id
    }
    /// What ``ByteWriter/epochs(_:)`` wrote: epoch 1 without a device, any
    /// later one with a device id, every key 32 bytes.
    mutating func epochs() throws(TreeFormatError) -> [KeyEpoch] {
        let count = try u32()
        guard count <= 10_000 else { throw .tooLarge }
        var out: [KeyEpoch] = []
        for _ in 0..<count {
            let number = try u64()
            let device = try string(max: 16)
            let key = SecretBytes(try data(max: 32))
            guard number >= 1, key.count == 32, number == 1 ? device.isEmpty : DeviceID.isValid(device) else {
                throw .malformed("a key epoch")
            }
            out.append(KeyEpoch(number: number, device: device, key: key))
        }
        return out
    }
    mutating func vector() throws(TreeFormatError) -> VersionVector {
        let n = try u32()
        guard n <= 100_000 else { throw .tooLarge }
        var v = VersionVector()
        for _ in 0..<n {
            let device = try device()
            let counter = try u64()
            guard v.counters[device] == nil, counter > 0 else { throw .malformed("a version vector") }
            v.counters[device] = counter
        }
        return v
    }
}

/// Why a file of the sync tree could not be read: the caller reports the
/// file as damaged or tampered with (exit 93).
public enum TreeFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The bytes end before the layout does.
    case truncated
    /// A length over its limit.
    case tooLarge
    /// Authentication failed: a flipped byte, another key, or a file moved
    /// to another item, device or counter.
    case unauthentic
    /// A field that is not what the format allows.
    case malformed(String)
    /// Sealed under a key epoch this device does not know (a newer one
    /// it has not picked up, or a forged key id).
    case unknownKey
    /// Written in an older format this Fob no longer reads (says which, and what to do).
    case outdated(String)

    /// A phrase for messages.
    public var description: String {
        switch self {
        case .truncated: "truncated"
        case .tooLarge: "a length over its limit"
        case .unauthentic: "does not authenticate (changed, moved, or sealed under another key)"
        case .malformed(let what): "malformed: \(what)"
        case .unknownKey: "sealed under a key epoch this device does not know"
        case .outdated(let what): "written by an older Fob: \(what)"
        }
    }
}

/// Runs `body` over the bytes of `secret`, keeping its typed error.
func reading<R>(_ secret: SecretBytes, _ body: (UnsafeRawBufferPointer) throws(TreeFormatError) -> R)
    throws(TreeFormatError) -> R
{
    let result = secret.withUnsafeBytes { raw in Result { () throws(TreeFormatError) -> R in try body(raw) } }
    return try result.get()
}

/// Runs `body` over `bytes`, keeping its typed error.
func reading<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(TreeFormatError) -> R)
    throws(TreeFormatError) -> R
{
    let result = bytes.withUnsafeBytes { raw in Result { () throws(TreeFormatError) -> R in try body(raw) } }
    return try result.get()
}

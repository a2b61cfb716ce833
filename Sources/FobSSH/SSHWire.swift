import FobSystem

/// Why bytes in the SSH wire encoding (RFC 4251 §5) could not be read.
public enum SSHWireError: Error, Equatable, Sendable {
    /// The input ended inside a field; `field` names what was being read.
    case truncated(field: String)
    /// A string longer than the bytes left, or than the limit of its field.
    case tooLong(field: String)
    /// An `mpint` that is negative or not in its shortest form (RFC 4251 §5).
    case badMpint
    /// A `boolean` byte other than 0 or 1 where one was required, or text that is not UTF-8.
    case badValue(field: String)
    /// Bytes were left after the last field.
    case trailingBytes(Int)
}

/// Reads RFC 4251 §5 data types from a byte array: `byte`, `boolean`,
/// `uint32`, `string` (uint32 length, then bytes), `mpint` and `name-list`.
/// Every read checks the bytes left, so a damaged frame is an error, never a crash.
public struct SSHReader {
    private let bytes: [UInt8]
    private var offset: Int

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        offset = 0
    }

    /// The number of bytes not yet read.
    public var remaining: Int { bytes.count - offset }

    /// Whether every byte was read.
    public var isAtEnd: Bool { offset == bytes.count }

    /// One byte.
    public mutating func byte(_ field: String = "byte") throws(SSHWireError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(field: field) }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// A `boolean`: 0 is false, any other value true (RFC 4251 §5).
    public mutating func boolean(_ field: String = "boolean") throws(SSHWireError) -> Bool {
        try byte(field) != 0
    }

    /// A big-endian `uint32`.
    public mutating func uint32(_ field: String = "uint32") throws(SSHWireError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated(field: field) }
        defer { offset += 4 }
        return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A `string`: its bytes, at most `limit` of them.
    public mutating func string(_ field: String = "string", limit: Int = 1 << 24) throws(SSHWireError) -> [UInt8] {
        let length = Int(try uint32(field))
        guard length <= remaining, length <= limit else { throw .tooLong(field: field) }
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }

    /// A `string` holding a secret, copied straight into ``SecretBytes``.
    public mutating func secretString(_ field: String) throws(SSHWireError) -> SecretBytes {
        let length = Int(try uint32(field))
        guard length <= remaining, length <= 1 << 16 else { throw .tooLong(field: field) }
        defer { offset += length }
        return bytes.withUnsafeBufferPointer { SecretBytes($0[offset..<offset + length]) }
    }

    /// A `string` that must be UTF-8 text.
    public mutating func text(_ field: String = "text", limit: Int = 1 << 16) throws(SSHWireError) -> String {
        let raw = try string(field, limit: limit)
        guard let text = String(validating: raw, as: UTF8.self) else { throw .badValue(field: field) }
        return text
    }

    /// A non-negative `mpint`'s magnitude, big-endian without leading zeros
    /// (empty for zero). A negative value or a needless leading byte is ``SSHWireError/badMpint``.
    public mutating func mpint(_ field: String = "mpint") throws(SSHWireError) -> [UInt8] {
        let raw = try string(field, limit: 16_385)
        return try SSHReader.magnitude(ofMpint: raw)
    }

    /// A non-negative `mpint` holding a secret, into ``SecretBytes``.
    public mutating func secretMpint(_ field: String) throws(SSHWireError) -> SecretBytes {
        var raw = try string(field, limit: 16_385)
        defer { raw.wipe() }
        var magnitude = try SSHReader.magnitude(ofMpint: raw)
        defer { magnitude.wipe() }
        return SecretBytes(magnitude)
    }

    /// A `name-list`: comma-separated ASCII names, none empty.
    public mutating func nameList(_ field: String = "name-list") throws(SSHWireError) -> [String] {
        let value = try text(field)
        if value.isEmpty { return [] }
        let names = value.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard names.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 > 32 && $0 < 127 } }) else {
            throw .badValue(field: field)
        }
        return names
    }

    /// The bytes not yet read, which are then consumed.
    public mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    /// Throws ``SSHWireError/trailingBytes(_:)`` unless every byte was read.
    public func expectEnd() throws(SSHWireError) {
        if !isAtEnd { throw .trailingBytes(remaining) }
    }

    static func magnitude(ofMpint raw: [UInt8]) throws(SSHWireError) -> [UInt8] {
        guard let first = raw.first else { return [] }
        if first & 0x80 != 0 { throw .badMpint }
        if first == 0 {
            guard raw.count > 1, raw[1] & 0x80 != 0 else { throw .badMpint }
            return Array(raw.dropFirst())
        }
        return raw
    }
}

/// Writes RFC 4251 §5 data types into a growing byte array.
public struct SSHWriter {
    /// The bytes written so far.
    public private(set) var bytes: [UInt8] = []

    /// An empty writer.
    public init() {}

    /// Appends one byte.
    public mutating func byte(_ value: UInt8) { bytes.append(value) }

    /// Appends a `boolean` (1 or 0).
    public mutating func boolean(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// Appends a big-endian `uint32`.
    public mutating func uint32(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff)]
    }

    /// Appends a `string` of bytes.
    public mutating func string<C: Collection>(_ value: C) where C.Element == UInt8 {
        uint32(UInt32(value.count))
        bytes += value
    }

    /// Appends a `string` of UTF-8 text.
    public mutating func string(_ value: String) { string(Array(value.utf8)) }

    /// Appends a non-negative `mpint` from its big-endian magnitude (leading
    /// zeros dropped, a zero byte added when the top bit is set).
    public mutating func mpint(_ magnitude: [UInt8]) {
        let trimmed = magnitude.drop { $0 == 0 }
        if let first = trimmed.first, first & 0x80 != 0 {
            uint32(UInt32(trimmed.count + 1))
            bytes.append(0)
            bytes += trimmed
        } else {
            string(trimmed)
        }
    }

    /// Appends a `name-list`.
    public mutating func nameList(_ names: [String]) { string(names.joined(separator: ",")) }

    /// Appends raw bytes with no length.
    public mutating func raw<C: Collection>(_ value: C) where C.Element == UInt8 { bytes += value }

    /// Overwrites the bytes with zeros (for writers that held a secret).
    public mutating func wipe() { bytes.wipe() }
}

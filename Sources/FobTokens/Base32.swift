/// Base32 (RFC 4648 §6) as authenticator secrets are written: the
/// alphabet `A-Z 2-7`, upper or lower case, with or without `=` padding,
/// and grouped with spaces (`JBSW Y3DP EHPK 3PXP`).
public enum Base32 {
    /// The RFC 4648 §6 alphabet, value 0 to 31.
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// Decodes base32 text.
    ///
    /// Whitespace anywhere is ignored; letters may be lower case; trailing
    /// `=` padding may be left out, but when present it must complete the
    /// last 8-character block. Bits after the last whole byte are dropped,
    /// as RFC 4648 §6 pads with zeros.
    /// - Parameter text: the base32 text.
    /// - Returns: the decoded bytes; never empty.
    /// - Throws: ``Base32Error`` naming the problem and, for a bad
    ///   character, its position (never the text itself: it is a secret).
    public static func decode(_ text: some StringProtocol) throws(Base32Error) -> [UInt8] {
        try decode(bytes: text.utf8)
    }

    /// Decodes base32 given as UTF-8 bytes (for a secret that never became a
    /// `String`); as ``decode(_:)``.
    /// - Parameter bytes: the base32 text's UTF-8 bytes.
    /// - Returns: the decoded bytes; never empty.
    /// - Throws: ``Base32Error``.
    public static func decode(bytes: some Collection<UInt8>) throws(Base32Error) -> [UInt8] {
        var values: [UInt8] = []
        values.reserveCapacity(bytes.count)
        defer { values.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        var padding = 0
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "="):
                padding += 1
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "2")...UInt8(ascii: "7"):
                guard padding == 0 else { throw .padding }
                values.append(value(of: byte))
            default:
                throw .character(offset: offset)
            }
        }
        guard !values.isEmpty else { throw .empty }
        // A final block of 2, 4, 5 or 7 symbols holds 1 to 4 bytes; 1, 3 or 6 cannot end a block.
        guard [0, 2, 4, 5, 7].contains(values.count % 8) else { throw .length(values.count) }
        if padding > 0, (values.count + padding) % 8 != 0 || padding >= 8 { throw .padding }

        // The 1 to 4 bits left over are the padding bits of the last symbol.
        return regroup(values, width: 5, into: 8).groups
    }

    /// Encodes bytes as upper-case base32 without padding (as authenticator
    /// apps show secrets).
    /// - Parameter bytes: any bytes.
    /// - Returns: `ceil(8 × count / 5)` characters of `A-Z 2-7`.
    public static func encode(_ bytes: [UInt8]) -> String {
        var (groups, leftover, rest) = regroup(bytes, width: 8, into: 5)
        defer { groups.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        // The last symbol carries the leftover bits, padded with zeros on the right.
        if leftover > 0 { groups.append(UInt8((rest << UInt32(5 - leftover)) & 31)) }
        return String(decoding: groups.map { alphabet[Int($0)] }, as: UTF8.self)
    }

    /// Regroups `values`, each `width` bits wide (at most 8), into groups of
    /// `target` bits (at most 8), most significant bit first (RFC 4648 §6).
    /// - Returns: the whole groups, and the `leftover` bits (fewer than
    ///   `target`) that end the input, as the low bits of `rest`.
    private static func regroup(_ values: [UInt8], width: Int, into target: Int)
        -> (groups: [UInt8], leftover: Int, rest: UInt32)
    {
        var groups: [UInt8] = []
        groups.reserveCapacity(values.count * width / target + 1)
        var buffer: UInt32 = 0
        var bits = 0
        for value in values {
            buffer = (buffer << UInt32(width)) | UInt32(value)
            bits += width
            while bits >= target {
                bits -= target
                groups.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
                buffer &= (1 << UInt32(bits)) - 1
            }
        }
        return (groups, bits, buffer)
    }

    private static func value(of byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a")
        default: return byte - UInt8(ascii: "2") + 26
        }
    }
}

/// Why base32 text could not be decoded. Descriptions never quote the text.
public enum Base32Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// No base32 characters at all.
    case empty
    /// A character outside `A-Z a-z 2-7 =` and whitespace, at this UTF-8
    /// byte offset of the text.
    case character(offset: Int)
    /// This many symbols cannot end a block (a final block has 2, 4, 5 or 7).
    case length(Int)
    /// `=` before the end, or too much or too little of it.
    case padding

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .empty: return "no base32 characters"
        case .character(let offset): return "a character that is not base32 (A-Z, 2-7) at byte \(offset + 1)"
        case .length(let n): return "\(n) base32 characters cannot be whole bytes (a truncated secret?)"
        case .padding: return "misplaced or wrong '=' padding"
        }
    }
}

/// Base64url (RFC 4648 §5): the URL- and filename-safe alphabet with `-`
/// and `_`, as JWS (RFC 7515 §2) and PKCE (RFC 7636 Appendix A) use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (i, c) in alphabet.enumerated() { table[Int(c)] = Int8(i) }
        return table
    }()

    /// Encodes `bytes` without `=` padding (RFC 7515 §2, RFC 7636 §4.2).
    public static func encode<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var iterator = bytes.makeIterator()
        while let b0 = iterator.next() {
            let b1 = iterator.next()
            let b2 = iterator.next()
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | (b1 ?? 0) >> 4)])
            if let b1 { out.append(alphabet[Int((b1 & 0x0F) << 2 | (b2 ?? 0) >> 6)]) }
            if let b2 { out.append(alphabet[Int(b2 & 0x3F)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes base64url text with or without trailing `=` padding.
    ///
    /// Refuses characters outside `A–Z a–z 0–9 - _` (so standard base64's
    /// `+` and `/` are errors), a length that no encoding produces, wrong
    /// padding, and non-zero bits after the last byte (non-canonical text).
    /// - Parameter text: the encoded text.
    /// - Returns: the bytes, or `nil` when `text` is not valid base64url.
    public static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var chars = Array(text.utf8)
        var padding = 0
        while chars.last == UInt8(ascii: "=") {
            chars.removeLast()
            padding += 1
        }
        let remainder = chars.count % 4
        if remainder == 1 { return nil }
        if padding > 0 && (remainder == 0 || padding != 4 - remainder) { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for c in chars {
            let v = values[Int(c)]
            if v < 0 { return nil }
            accumulator = accumulator << 6 | UInt32(v)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits (2 or 4) must be zero in a canonical encoding.
        if bits > 0 && accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
    }
}

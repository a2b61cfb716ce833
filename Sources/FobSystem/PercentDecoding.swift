/// RFC 3986 §2.1 percent-decoding over bytes: each `%` and two hex digits
/// (either case) becomes the byte they name. The one decoder of URIs
/// (`otpauth://`, git credential URLs), HTML forms and queries
/// (`application/x-www-form-urlencoded`, where `+` is a space) and
/// pinentry's Assuan `D` lines.
public enum PercentDecoding {
    /// What a `%` not followed by two hex digits means.
    public enum Malformed: Sendable {
        /// The text is refused (`nil`).
        case refused
        /// The `%` stands for itself, as lenient readers of forms and Assuan lines take it.
        case literal
    }

    /// The bytes `encoded` stands for.
    /// - Parameters:
    ///   - encoded: percent-encoded bytes (for example a URI component's UTF-8).
    ///   - plusIsSpace: read `+` as a space (forms and queries).
    ///   - malformed: what a `%` without two hex digits after it means.
    /// - Returns: the decoded bytes, or `nil` when `malformed` is `.refused`
    ///   and a `%` is not followed by two hex digits (what was decoded so
    ///   far is wiped: it may be a secret).
    public static func decode<C: Collection>(
        _ encoded: C, plusIsSpace: Bool = false, malformed: Malformed = .refused
    ) -> [UInt8]? where C.Element == UInt8 {
        var out: [UInt8] = []
        out.reserveCapacity(encoded.count)
        var index = encoded.startIndex
        while index != encoded.endIndex {
            let byte = encoded[index]
            let next = encoded.index(after: index)
            if byte == UInt8(ascii: "%") {
                if next != encoded.endIndex, encoded.index(after: next) != encoded.endIndex,
                    let high = HexText.value(encoded[next]),
                    let low = HexText.value(encoded[encoded.index(after: next)])
                {
                    out.append(high << 4 | low)
                    index = encoded.index(next, offsetBy: 2)
                    continue
                }
                if malformed == .refused {
                    out.wipe()
                    return nil
                }
            }
            out.append(plusIsSpace && byte == UInt8(ascii: "+") ? 0x20 : byte)
            index = next
        }
        return out
    }
}

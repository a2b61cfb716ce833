import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// The `--json` shapes of docs/cli.md, written byte by byte so that a secret
/// never passes through a `String`.
///
/// An item is an object with `service`, `account`, `kind`, `label` (`null`
/// when unset), `comment` (`null` when unset), `created`, `modified`
/// (ISO 8601, UTC), `revision` (the item's revision, a whole number: what
/// `--if-revision` takes), `url` (`null` when unset), `hasTotp` (whether a
/// one-time seed is stored; never the seed), `accessible`, and for `get --json` either `secret` (valid UTF-8) or
/// `secretBase64` (RFC 4648 §4, with padding).
enum ItemJSON {
    /// ISO 8601 in UTC to the second (RFC 3339 §5.6), such as `2026-05-01T12:00:00Z`.
    static func date(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        // Written as bytes: `ls` writes one a row.
        var out: [UInt8] = []
        out.reserveCapacity(20)
        appendPadded(parts.tm_year + 1900, width: 4, then: "-", to: &out)
        appendPadded(parts.tm_mon + 1, width: 2, then: "-", to: &out)
        appendPadded(parts.tm_mday, width: 2, then: "T", to: &out)
        appendPadded(parts.tm_hour, width: 2, then: ":", to: &out)
        appendPadded(parts.tm_min, width: 2, then: ":", to: &out)
        appendPadded(parts.tm_sec, width: 2, then: "Z", to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `value` in decimal (a minus sign first when negative) with
    /// zeros before it up to `width` characters, then `separator`.
    static func appendPadded(_ value: Int32, width: Int, then separator: Unicode.Scalar, to out: inout [UInt8]) {
        let magnitude = value.magnitude
        var count = value < 0 ? 2 : 1
        var scale: UInt32 = 1
        while magnitude / scale >= 10 {
            scale *= 10
            count += 1
        }
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: max(0, width - count)))
        if value < 0 { out.append(UInt8(ascii: "-")) }
        while scale > 0 {
            out.append(UInt8(ascii: "0") + UInt8(magnitude / scale % 10))
            scale /= 10
        }
        out.append(UInt8(separator.value))
    }

    /// The object for `item`, with its secret when `includeSecret`.
    /// - Important: the result holds the secret in an ordinary array; the
    ///   caller wipes it after writing.
    static func object(_ item: Item, includeSecret: Bool) -> [UInt8] {
        var out: [UInt8] = []
        if includeSecret, let secret = item.secret { out.reserveCapacity(secret.count * 6 + 1024) }
        out += Array("{\"service\":".utf8)
        appendString(item.service.utf8, to: &out)
        out += Array(",\"account\":".utf8)
        appendString(item.account.utf8, to: &out)
        out += Array(",\"kind\":".utf8)
        appendString(item.kind.rawValue.utf8, to: &out)
        out += Array(",\"label\":".utf8)
        if let label = item.label { appendString(label.utf8, to: &out) } else { out += Array("null".utf8) }
        out += Array(",\"comment\":".utf8)
        if let comment = item.comment { appendString(comment.utf8, to: &out) } else { out += Array("null".utf8) }
        out += Array(",\"url\":".utf8)
        if let url = item.url { appendString(url.utf8, to: &out) } else { out += Array("null".utf8) }
        out += Array(",\"hasTotp\":\(item.oneTimePassword != nil)".utf8)
        out += Array(",\"accessible\":".utf8)
        appendString(item.accessible.rawValue.utf8, to: &out)
        out += Array(",\"created\":".utf8)
        appendString(date(item.created).utf8, to: &out)
        out += Array(",\"modified\":".utf8)
        appendString(date(item.modified).utf8, to: &out)
        out += Array(",\"revision\":\(item.revision)".utf8)
        if includeSecret, let secret = item.secret {
            secret.withUnsafeBytes { bytes in
                if secret.isValidUTF8 {
                    out += Array(",\"secret\":".utf8)
                    appendString(bytes, to: &out)
                } else {
                    out += Array(",\"secretBase64\":\"".utf8)
                    secret.base64().withUnsafeBytes { out.append(contentsOf: $0) }
                    out.append(UInt8(ascii: "\""))
                }
            }
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// Appends a JSON string (RFC 8259 §7) of valid UTF-8 bytes: quotes,
    /// backslashes and control characters escaped, everything else as is.
    static func appendString<S: Sequence>(_ utf8: S, to out: inout [UInt8]) where S.Element == UInt8 {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [0x5C, 0x22]
            case UInt8(ascii: "\\"): out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

import FobStore
import Foundation

/// `fob export --format csv`: one record per item with RFC 4180 quoting.
public enum CSVExport {
    /// The header line's columns.
    public static let columns = [
        "service", "account", "password", "url", "notes", "totp", "label", "kind", "created", "modified",
    ]

    /// Writes `items` as CSV: ``columns``, dates in ISO 8601 (UTC). A secret
    /// that is not UTF-8 is written as `base64:` and its base64.
    /// - Important: the result holds every secret; the caller wipes it.
    public static func write(_ items: [Item]) -> [UInt8] {
        var out = Array((columns.joined(separator: ",") + "\r\n").utf8)
        let formatter = ISO8601DateFormatter()
        for item in items {
            field(Array(item.service.utf8), &out, first: true)
            field(Array(item.account.utf8), &out)
            if let secret = item.secret {
                if secret.isValidUTF8 {
                    secret.withUnsafeBytes { field(Array($0), &out) }
                } else {
                    secret.base64().withUnsafeBytes { field(Array("base64:".utf8) + Array($0), &out) }
                }
            } else {
                field([], &out)
            }
            field(Array((item.url ?? "").utf8), &out)
            field(Array((item.notes ?? "").utf8), &out)
            if let seed = item.oneTimePassword {
                seed.withUnsafeBytes { field(Array($0), &out) }
            } else {
                field([], &out)
            }
            field(Array((item.label ?? "").utf8), &out)
            field(Array(item.kind.rawValue.utf8), &out)
            field(Array(formatter.string(from: item.created).utf8), &out)
            field(Array(formatter.string(from: item.modified).utf8), &out)
            out += [0x0D, 0x0A]
        }
        return out
    }

    /// Appends one field, quoted when it holds a comma, quote or line break.
    static func field(_ bytes: [UInt8], _ out: inout [UInt8], first: Bool = false) {
        if !first { out.append(0x2C) }
        guard bytes.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else {
            out += bytes
            return
        }
        out.append(0x22)
        for byte in bytes {
            if byte == 0x22 { out.append(0x22) }
            out.append(byte)
        }
        out.append(0x22)
    }
}

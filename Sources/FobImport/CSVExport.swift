import FobStore
import FobSystem
import FoundationEssentials

/// `fob export --format csv`: one record per item with RFC 4180 quoting,
/// made safe to open in a spreadsheet, and read back by `import fob-csv`
/// (``CSVFormats/fob(_:encoding:)``).
public enum CSVExport {
    /// The header line's columns.
    public static let columns = [
        "service", "account", "password", "url", "notes", "totp", "label", "kind", "created", "modified",
    ]

    /// What marks a secret written as base64: `base64:` and the base64 of its bytes.
    public static let base64Prefix = "base64:"

    /// The first bytes that make a spreadsheet read a cell as a formula or
    /// command: `=`, `+`, `-`, `@`, tab and carriage return (OWASP, "CSV
    /// Injection"), and `'`, the mark itself, so that the mark is never
    /// ambiguous.
    static let formulaStarts: Set<UInt8> = [0x3D, 0x2B, 0x2D, 0x40, 0x09, 0x0D, 0x27]

    /// Writes `items` as CSV: ``columns``, dates in ISO 8601 (UTC, to the
    /// second). A secret that is not UTF-8, or whose text begins with
    /// ``base64Prefix``, is written as that prefix and its base64.
    ///
    /// As OWASP's CSV injection guidance advises, a text cell that begins
    /// with `=`, `+`, `-`, `@`, a tab or a carriage return (or with `'`) gets
    /// a `'` in front and is quoted, so no spreadsheet runs it as a formula;
    /// `import fob-csv` removes that one `'`.
    ///
    /// The output is measured first (``byteCount(_:)``) and written into one
    /// buffer of exactly that size: it never grows, so no copy of the
    /// secrets is left in freed memory by a reallocation.
    /// - Important: the result holds every secret; the caller wipes it.
    public static func write(_ items: [Item]) -> [UInt8] {
        var sink = ByteSink(writing: byteCount(items))
        emit(items, &sink)
        return sink.bytes
    }

    /// The length in bytes of what ``write(_:)`` writes for `items`.
    public static func byteCount(_ items: [Item]) -> Int {
        var sink = ByteSink(writing: nil)
        emit(items, &sink)
        return sink.count
    }

    private static func emit(_ items: [Item], _ out: inout ByteSink) {
        out.append(contentsOf: Array((columns.joined(separator: ",") + "\r\n").utf8))
        for item in items {
            field(Array(item.service.utf8), &out, first: true)
            field(Array(item.account.utf8), &out)
            if let secret = item.secret {
                let tagged = secret.withUnsafeBytes { $0.starts(with: base64Prefix.utf8) }
                if secret.isValidUTF8 && !tagged {
                    secret.withUnsafeBytes { field($0, &out) }
                } else {
                    var encoded = Array(base64Prefix.utf8)
                    encoded.reserveCapacity(encoded.count + (secret.count + 2) / 3 * 4)
                    secret.base64().withUnsafeBytes { encoded.append(contentsOf: $0) }
                    field(encoded, &out)
                    encoded.wipe()
                }
            } else {
                field([], &out)
            }
            field(Array((item.url ?? "").utf8), &out)
            field(Array((item.notes ?? "").utf8), &out)
            if let seed = item.oneTimePassword {
                seed.withUnsafeBytes { field($0, &out) }
            } else {
                field([], &out)
            }
            field(Array((item.label ?? "").utf8), &out)
            field(Array(item.kind.rawValue.utf8), &out)
            field(Array(DateText.utc(item.created, "%Y-%m-%dT%H:%M:%SZ").utf8), &out)
            field(Array(DateText.utc(item.modified, "%Y-%m-%dT%H:%M:%SZ").utf8), &out)
            out.append(contentsOf: [0x0D, 0x0A])
        }
    }

    /// What CSV cannot hold of `items`, one line per kind of attribute with
    /// how many items have it: custom fields, an access group,
    /// `after-first-unlock` accessibility, internet-password attributes and
    /// the other Keychain attributes that only `fob-json` keeps. Empty when
    /// the CSV holds everything.
    public static func losses(_ items: [Item]) -> [String] {
        let checks: [(String, (Item) -> Bool)] = [
            ("custom fields", { !$0.customFields.isEmpty }),
            ("an access group", { !$0.accessGroup.isEmpty }),
            ("an accessibility other than when-unlocked", { $0.accessible != .whenUnlocked }),
            ("internet-password attributes (server, protocol, port, path)", { $0.itemClass == .internetPassword }),
            ("generic bytes", { $0.generic != nil }),
            ("synchronizable", { $0.synchronizable }),
        ]
        return checks.compactMap { name, has in
            let count = items.filter(has).count
            return count == 0 ? nil : "\(name): \(count) item\(count == 1 ? "" : "s")"
        }
    }

    /// Appends one field: a text cell that could start a formula gets a `'`
    /// in front (see ``write(_:)``); quoted when it holds a comma, quote or
    /// line break, or was marked.
    static func field<C: Collection>(_ bytes: C, _ out: inout ByteSink, first: Bool = false) where C.Element == UInt8 {
        if !first { out.append(0x2C) }
        let marked = bytes.first.map { formulaStarts.contains($0) } ?? false
        guard marked || bytes.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else {
            out.append(contentsOf: bytes)
            return
        }
        out.append(0x22)
        if marked { out.append(0x27) }
        for byte in bytes {
            if byte == 0x22 { out.append(0x22) }
            out.append(byte)
        }
        out.append(0x22)
    }
}

/// Bytes written into a buffer reserved once, or only counted (to learn the size to reserve).
struct ByteSink {
    private(set) var bytes: [UInt8] = []
    private(set) var count = 0
    private let writes: Bool

    /// - Parameter capacity: the exact size to reserve, or `nil` to count only.
    init(writing capacity: Int?) {
        writes = capacity != nil
        if let capacity { bytes.reserveCapacity(capacity) }
    }

    mutating func append(_ byte: UInt8) {
        count += 1
        if writes { bytes.append(byte) }
    }

    mutating func append<C: Collection>(contentsOf more: C) where C.Element == UInt8 {
        count += more.count
        if writes { bytes.append(contentsOf: more) }
    }
}

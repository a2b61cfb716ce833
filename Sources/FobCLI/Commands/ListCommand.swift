import FobAccess
import FobAgent
import FobStore
import FobTerminal
@preconcurrency import Glibc

/// `fob ls [--service S] [--json]`: lists items without their secrets, in
/// ``ListingOrder`` (as the terminal UI's list).
enum ListCommand: FobCommand {
    static let name = "ls"
    static let summary = "list items: service, account, kind, label, modified; never secrets"
    static let options: [OptionSpec] = [
        .value("--service", "S", help: "only the items of service S"),
        .flag("--json", help: "print a JSON array of objects"),
    ]

    static func run(_ invocation: Invocation) throws -> Int32 {
        let backend = invocation.items()
        // In ListingOrder, as the terminal UI's list: the agent (or the vault) sorts.
        let items = try backend.list(service: invocation.arguments.value("--service"))
        backend.close()
        let out = invocation.standardOutput
        if invocation.arguments.flag("--json") {
            var json: [UInt8] = [UInt8(ascii: "[")]
            for (index, item) in items.enumerated() {
                if index > 0 { json.append(UInt8(ascii: ",")) }
                json += ItemJSON.object(item, includeSecret: false)
            }
            json += Array("]\n".utf8)
            out.write(json)
            return 0
        }
        guard !items.isEmpty else { return 0 }
        let rows =
            [["SERVICE", "ACCOUNT", "KIND", "LABEL", "MODIFIED"]]
            + items.map { item in
                [
                    printable(item.service), printable(item.account), item.kind.rawValue,
                    printable(item.label ?? ""), ItemJSON.date(item.modified),
                ]
            }
        out.write(table(rows))
        return 0
    }

    /// The most terminal cells a service, account or label takes in the
    /// table; a longer one is cut and ends in `…` (`--json` has it whole).
    static let maximumColumnCells = 40

    /// The rows as columns two spaces apart, each padded to its widest cell
    /// in terminal cells (as the terminal UI measures them: `密码` and `🔑`
    /// take two each), so wide characters do not shift the columns after them.
    /// A cell wider than ``maximumColumnCells`` is cut first, so one long
    /// value cannot widen every line.
    /// - Returns: the table's UTF-8 bytes, a line a row.
    static func table(_ rows: [[String]]) -> [UInt8] {
        // wcwidth follows LC_CTYPE: the user's locale, as the UI uses.
        setlocale(LC_CTYPE, "")
        let ellipsis = Glyphs.current(term: getenv("TERM").map { String(cString: $0) }).ellipsis
        // Each cell is measured once; only a cut one is measured again.
        let measuredRows = rows.map { row in
            row.map { text -> (text: String, cells: Int) in
                let cells = DisplayWidth.cells(of: text)
                guard cells > maximumColumnCells else { return (text, cells) }
                let kept = cut(text, toCells: maximumColumnCells, ellipsis: ellipsis)
                return (kept, DisplayWidth.cells(of: kept))
            }
        }
        var widths = [Int](repeating: 0, count: rows.map(\.count).max() ?? 0)
        for row in measuredRows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.cells) }
        }
        var text: [UInt8] = []
        text.reserveCapacity(measuredRows.count * (widths.reduce(0, +) + 2 * widths.count))
        for row in measuredRows {
            for (column, cell) in row.enumerated() {
                text.append(contentsOf: cell.text.utf8)
                if column < row.count - 1 {
                    text.append(contentsOf: repeatElement(UInt8(ascii: " "), count: widths[column] - cell.cells + 2))
                }
            }
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }

    /// `text` when it takes at most `limit` terminal cells, else its first
    /// whole clusters and `ellipsis`, `limit` cells at most in all.
    /// - Parameters:
    ///   - text: a printable cell (control characters already escaped).
    ///   - limit: the most cells, 1 or more.
    ///   - ellipsis: what marks the cut (`…`, or `~` outside UTF-8 locales).
    static func cut(_ text: String, toCells limit: Int, ellipsis: Character) -> String {
        guard DisplayWidth.cells(of: text) > limit else { return text }
        var kept = ""
        var used = 0
        for cluster in text {
            let width = DisplayWidth.cells(of: cluster) ?? 1
            if used + width > limit - 1 { break }
            kept.append(cluster)
            used += width
        }
        kept.append(ellipsis)
        return kept
    }

    /// `text` with control characters (C0, DEL and C1, such as U+009B) written
    /// as `\u{9B}`, as error messages show them (``displaySafe(_:)``), so a
    /// name can neither break the table nor drive the terminal.
    static func printable(_ text: String) -> String { displaySafe(text) }
}

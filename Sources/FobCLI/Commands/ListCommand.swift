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

    /// The rows as columns two spaces apart, each padded to its widest cell
    /// in terminal cells (as the terminal UI measures them: `密码` and `🔑`
    /// take two each), so wide characters do not shift the columns after them.
    static func table(_ rows: [[String]]) -> String {
        // wcwidth follows LC_CTYPE: the user's locale, as the UI uses.
        setlocale(LC_CTYPE, "")
        let cells = rows.map { $0.map { DisplayWidth.cells(of: $0) } }
        var widths = [Int](repeating: 0, count: rows.map(\.count).max() ?? 0)
        for row in cells { for (column, width) in row.enumerated() { widths[column] = max(widths[column], width) } }
        var text = ""
        for (row, measured) in zip(rows, cells) {
            for (column, cell) in row.enumerated() {
                text += cell
                if column < row.count - 1 {
                    text += String(repeating: " ", count: widths[column] - measured[column] + 2)
                }
            }
            text += "\n"
        }
        return text
    }

    /// `text` with control characters shown as `?`, so a name cannot break the table.
    static func printable(_ text: String) -> String {
        // Most names hold no control character: return them as they are.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return text }
        return String(
            String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

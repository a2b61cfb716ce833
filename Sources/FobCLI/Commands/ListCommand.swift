import FobAgent
import FobStore

/// `fob ls [--service S] [--json]`: lists items without their secrets.
enum ListCommand: FobCommand {
    static let name = "ls"
    static let summary = "list items: service, account, kind, label, modified; never secrets"
    static let options: [OptionSpec] = [
        .value("--service", "S", help: "only the items of service S"),
        .flag("--json", help: "print a JSON array of objects"),
    ]

    static func run(_ invocation: Invocation) throws -> Int32 {
        let backend = invocation.items()
        guard case .items(let items) = try backend.perform(.list(service: invocation.arguments.value("--service"))) else {
            throw KeychainError.io("unexpected answer")
        }
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
        let rows = [["SERVICE", "ACCOUNT", "KIND", "LABEL", "MODIFIED"]] + items.map { item in
            [printable(item.service), printable(item.account), item.kind.rawValue,
             printable(item.label ?? ""), ItemJSON.date(item.modified)]
        }
        var widths = [Int](repeating: 0, count: 5)
        for row in rows { for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) } }
        for row in rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                line += cell
                if column < row.count - 1 { line += String(repeating: " ", count: widths[column] - cell.count + 2) }
            }
            out.write(line + "\n")
        }
        return 0
    }

    /// `text` with control characters shown as `?`, so a name cannot break the table.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : $0 }))
    }
}

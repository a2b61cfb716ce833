import FobAccess
import FobAgent
import FobStore

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
        let ellipsis = TextTable.ellipsis(term: invocation.context.environment["TERM"])
        out.write(TextTable(rows: rows).render(width: nil, ellipsis: ellipsis))
        return 0
    }

    /// `text` with control characters (C0, DEL and C1, such as U+009B) written
    /// as `\u{9B}`, as error messages show them (``displaySafe(_:)``), so a
    /// name can neither break the table nor drive the terminal.
    static func printable(_ text: String) -> String { displaySafe(text) }
}

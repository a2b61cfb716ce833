import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Issue 32: long service names were cut beside blank cells (`api.ex… ci`
/// followed by 19 blank cells at 80×24; `api.example.c… ci` with 30 at
/// 120×40), and opening the editor moved the list's columns.
@Suite struct ListColumnTests {
    private static let now = 1_767_225_600.0

    /// An app over `items`, unlocked.
    private func app(_ items: [Item]) -> AppModel {
        let clock = TestClock()
        let store = InMemoryStore(password: "pw", now: { clock.now })
        for item in items { store.externalPut(item) }
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(
                clipboard: FakeClipboard(), clearAfter: 45, clock: clock, runner: InlineRunner()),
            clock: clock, lockAfter: 300)
        app.send(.insert("pw"))
        app.send(.submit)
        return app
    }

    /// The user's vault: one long service with a short account among items
    /// with long accounts, so the names' split favours the accounts.
    private func items() -> [Item] {
        [
            item("api.example.com", "ci", jwt(exp: Self.now + 6 * 365 * 86_400), kind: .token),
            item("box", "ana@example.com", "x"), item("mail", "ana@example.com", "x"),
            item("slack", "ana@example.com", "x"), item("zoom", "ana@example.com", "x", label: "Work/Meetings"),
        ]
    }

    /// The list pane's rows (the list's own cells) at `rows` × `columns`.
    private func listRows(_ app: AppModel, rows: Int, columns: Int) -> [String] {
        let canvas = draw(app, rows: rows, columns: columns)
        return (0..<canvas.rows).map { String(canvas.line($0).prefix(Layout.listWidth(columns: columns))) }
            .filter { $0.hasPrefix("│") }
    }

    /// Where `text` starts on `line`, in characters.
    private func column(of text: String, in line: String) -> Int? {
        line.range(of: text).map { line.distance(from: line.startIndex, to: $0.lowerBound) }
    }

    @Test(arguments: [(24, 80), (40, 120)]) func aLongNameTakesItsRowsBlankCells(size: (Int, Int)) throws {
        try #require(unicodeLocale)
        let lines = listRows(app(items()), rows: size.0, columns: size.1)
        let api = try #require(lines.first { $0.contains("api.ex") })
        #expect(api.contains("api.example.com ci") && !api.contains("…"), "\(size): \(api)")
        for service in ["box", "mail", "slack", "zoom"] {
            let row = try #require(lines.first { $0.contains(service) })
            #expect(row.contains("ana@example.com") && !row.contains("…"), "\(size): \(row)")
        }
        // The rows whose names fit their columns keep them: every account starts in one column.
        let starts = lines.filter { $0.contains("ana@example.com") }.compactMap { column(of: "ana@", in: $0) }
        #expect(starts.count == 4 && Set(starts).count == 1, "\(size): \(lines)")
    }

    /// Opening the editor leaves the list as wide and its columns where they were.
    @Test(arguments: [(24, 80), (40, 120)]) func theEditorDoesNotMoveTheColumns(size: (Int, Int)) throws {
        try #require(unicodeLocale)
        let app = app(items())
        let browsing = listRows(app, rows: size.0, columns: size.1)
        app.send(.moveSelection(2))
        app.send(.editSelected)
        #expect(app.mainModel?.focus == .service)
        let editing = listRows(app, rows: size.0, columns: size.1)
        for name in ["api.example.com", "slack", "ana@example.com", "token"] {
            let before = browsing.compactMap { column(of: name, in: $0) }
            let after = editing.compactMap { column(of: name, in: $0) }
            #expect(!before.isEmpty && before == after, "\(size) \(name): \(before) vs \(after)")
        }
    }

    @Test func rowNamesLendBlankCellsAndMoveNoFurtherThanNeeded() {
        // Both fit: the columns stay.
        #expect(Layout.rowNames(needs: (5, 3), columns: (8, 10)) == (8, 10))
        // The service borrows the account's blank cells.
        #expect(Layout.rowNames(needs: (15, 2), columns: (6, 19)) == (15, 10))
        // The account borrows the service's, starting no earlier than it must.
        #expect(Layout.rowNames(needs: (4, 24), columns: (10, 19)) == (5, 24))
        // Both too long: each keeps its column and is cut.
        #expect(Layout.rowNames(needs: (20, 30), columns: (10, 19)) == (10, 19))
    }
}

import CNcurses
import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The mouse on the list and the preview: a click highlights the row
/// under it, the wheel moves the highlight over the list and scrolls the
/// preview over the preview; elsewhere, and in the editor, it does nothing.
@Suite struct MouseTests {
    @Test func aClickSelectsAndTheWheelScrolls() throws {
        try #require(unicodeLocale)
        let (app, store, _) = makeTestApp(
            items: (1...30).map { ("site\($0).example", "user\($0)", "pw") }, locked: true)
        var long = Item(service: "a-notes.example", account: "me", secret: SecretBytes(utf8: "pw"))
        long.notes = (1...40).map { "note line \($0)" }.joined(separator: "\n")
        store.externalPut(long)
        app.send(.insert("pw"))
        app.send(.submit)
        let main = try #require(app.mainModel)
        var renderer = Renderer(vaultDescription: "~/vault.db")
        var canvas = renderer.render(app, rows: 24, columns: 80, glyphs: .unicodeSet)
        func send(_ key: Key) throws {
            let action = try #require(
                KeyMap.action(
                    for: key, in: app, pageRows: renderer.listPage, previewRows: renderer.previewRows,
                    pointer: renderer.pointerAreas))
            app.send(action)
            canvas = renderer.render(app, rows: 24, columns: 80, glyphs: .unicodeSet)
        }
        // A click on the row showing site11.example.
        let row = try #require((0..<24).first { canvas.line($0).contains("site11.example ") })
        try send(.click(row: row, column: 10))
        #expect(main.list.selectedRow?.service == "site11.example")
        // The wheel over the list moves the highlight three rows.
        try send(.wheel(down: true, row: row, column: 10))
        #expect(main.list.selectedRow?.service == "site14.example")
        try send(.wheel(down: false, row: row, column: 10))
        #expect(main.list.selectedRow?.service == "site11.example")
        // Back on the long note: the wheel over the preview scrolls it.
        try send(.click(row: renderer.pointerAreas.listRow, column: 5))
        #expect(main.list.selectedRow?.service == "a-notes.example")
        let preview = renderer.pointerAreas.previewRows.lowerBound + 2
        let column = renderer.pointerAreas.previewColumns.lowerBound + 5
        try send(.wheel(down: true, row: preview, column: column))
        #expect(main.previewOffset == 3)
        #expect(main.list.selectedRow?.service == "a-notes.example")
        try send(.wheel(down: false, row: preview, column: column))
        #expect(main.previewOffset == 0)
        // A click on the header or the status line changes nothing.
        try send(.click(row: 0, column: 5))
        try send(.click(row: 23, column: 5))
        #expect(main.list.selectedRow?.service == "a-notes.example")
        // In the editor the mouse does nothing.
        app.send(.editSelected)
        #expect(KeyMap.action(for: .click(row: row, column: 10), in: app) == nil)
    }

    @Test func mouseEventsAreDecoded() {
        var d = KeyDecoder()
        #expect(d.feed(.mouse(row: 4, column: 7, button: 1)) == [.click(row: 4, column: 7)])
        #expect(d.feed(.mouse(row: 4, column: 7, button: 5)) == [.wheel(down: true, row: 4, column: 7)])
        #expect(d.feed(.mouse(row: 1, column: 2, button: 4)) == [.wheel(down: false, row: 1, column: 2)])
        #expect(d.feed(.mouse(row: 1, column: 2, button: 0)).isEmpty)
    }
}

import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The editor's Notes field is a text area: one line of the note a row,
/// as many rows as fit with the buttons in view (8 at 80×24), scrolled
/// with the cursor.
@Suite struct NotesAreaRenderTests {
    /// An app whose editor is open on `mail / ana` with a 40-line note.
    static func editingALongNote() -> AppModel {
        let (app, store, _) = makeTestApp()
        var noted = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "pw"))
        noted.notes = (1...40).map { "note \($0)" }.joined(separator: "\n")
        store.externalPut(noted)
        app.tick()
        app.send(.editSelected)
        return app
    }

    /// The editor's rows (right of the list) of `app` drawn at 80×24.
    static func editorRows(_ app: AppModel) -> [String] {
        let canvas = draw(app, rows: 24, columns: 80)
        return (1..<21).map { String(canvas.line($0).dropFirst(44)) }
    }

    /// Without focus the area shows the note's first lines (the editor's
    /// rows below them out of view); with focus and the cursor moved down
    /// to line 6, the area scrolls to keep it in the middle, says which
    /// lines show of how many, and keeps the buttons in view.
    @Test func aLongNoteShowsEightLinesScrolledWithTheCursor() throws {
        try #require(unicodeLocale)
        let app = Self.editingALongNote()
        #expect(
            Array(Self.editorRows(app)[13...19]) == [
                "│ Notes       note 1               │",
                "│             note 2               │",
                "│             note 3               │",
                "│             note 4               │",
                "│             note 5               │",
                "│             note 6               │",
                "│ ↓ 11 more                        │",
            ])
        app.send(.focus(.notes))
        // Home goes to the start of the cursor's line, then to the note's start.
        app.send(.moveCursor(.home))
        app.send(.moveCursor(.home))
        for _ in 0..<5 { app.send(.moveCursor(.lineDown)) }
        let rows = Self.editorRows(app)
        #expect(Array(rows[1...2]) == ["│ ↑ 2 more                         │", "│ [Save] [Retrieve] [Delete]       │"])
        #expect(
            Array(rows[11...19]) == [
                "│ Notes       note 3               │",
                "│             note 4               │",
                "│             note 5               │",
                "│             note 6               │",
                "│             note 7               │",
                "│             note 8               │",
                "│             note 9               │",
                "│ 3-10/40     note 10              │",
                "│ ↓ 9 more                         │",
            ])
        // The terminal cursor at the start of line 6, the area's fourth row.
        let cursor = try #require(draw(app, rows: 24, columns: 80).cursor)
        #expect(cursor.row == 15)
        #expect(cursor.column == 58)
    }
}

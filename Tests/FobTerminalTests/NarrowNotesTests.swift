import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Notes at 40×12 took one row and said nothing of the other lines; the
/// cursor's line, cut on the right, showed no `…` where the other lines do.
@Suite struct NarrowNotesTests {
    /// An app whose editor is open on `mail / ana` with a 15-line note of long lines, focus in Notes.
    private func editingLongLines() -> AppModel {
        let (app, store, _) = makeTestApp()
        var noted = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "pw"))
        noted.notes = (1...15).map { "note \($0) with a rather long line" }.joined(separator: "\n")
        store.externalPut(noted)
        app.tick()
        app.send(.editSelected)
        app.send(.focus(.notes))
        return app
    }

    @Test func aOneRowNotesAreaSaysWhichLineShows() throws {
        try #require(unicodeLocale)
        let app = editingLongLines()
        app.send(.moveCursor(.lineUp))
        app.send(.moveCursor(.lineUp))
        app.send(.moveCursor(.home))
        let canvas = draw(app, rows: 12, columns: 40)
        let row = try #require((0..<12).first { canvas.line($0).contains("Notes") }, "\(canvas.text)")
        #expect(canvas.line(row) == "│ Notes 13/15 note 13 with a rather l… │", "\(canvas.text)")
    }

    @Test func theCursorLineCutOnTheRightEndsInAnEllipsis() throws {
        try #require(unicodeLocale)
        let app = editingLongLines()
        app.send(.moveCursor(.lineUp))
        app.send(.moveCursor(.home))
        let rows = NotesAreaRenderTests.editorRows(app)
        #expect(
            Array(rows[16...18]) == [
                "│             note 13 with a rath… │",
                "│             note 14 with a rath… │", // the cursor's line
                "│ 8-15/15     note 15 with a rath… │",
            ])
        // The cursor at the line's end: scrolled, a leading `…`, nothing cut on the right.
        app.send(.moveCursor(.end))
        #expect(NotesAreaRenderTests.editorRows(app)[17] == "│             …a rather long line  │")
    }
}

import FobStore
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Ctrl-Y in dropbox's editor when the newest change was zoom's Save: the
/// message was cut in the middle at 80 columns, losing what to do. Now what
/// matters comes first and the whole of it shows.
@Suite struct UndoMessageFitTests {
    @Test func theUndoElsewhereMessageShowsWholeAt80Columns() throws {
        let (app, _, _) = makeTestApp(items: [("dropbox.com", "ana@example.com", "d"), ("zoom.us", "ana", "z")])
        let main = try #require(app.mainModel)
        app.send(.selectRow(1))
        #expect(main.list.selectedRow?.key == ItemKey(service: "zoom.us", account: "ana"))
        let steps: [Action] = [
            .editSelected, .focus(.password), .insert("new"), .save, .cancel, .selectRow(0), .editSelected,
        ]
        for step in steps { app.send(step) }
        #expect(main.form.editorTitle == "Editing dropbox.com / ana@example.com")
        app.send(.undo)
        let message = main.form.message
        #expect(
            message.text
                == "Nothing undone here: the last change is the Save of zoom.us / ana; Esc, then Ctrl-Y undoes it")
        let rows = Layout.statusRows(message, columns: 80, unicode: true)
        #expect(rows.count == 2)
        #expect(!rows.joined().contains("…"))
        #expect(rows.joined(separator: " ").hasSuffix(message.text))
    }
}

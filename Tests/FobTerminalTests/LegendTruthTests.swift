import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The key legend says only what the keys do there: the editor keeps
/// `Ctrl-Q quit` as the list does, the list offers no item keys while
/// nothing is highlighted, and the help's legend names what Esc and the
/// other keys really do on its last page and after a search that found
/// nothing.
@Suite struct LegendTruthTests {
    /// The bottom row of `app` drawn at `columns` × `rows`, trailing blanks dropped.
    private func legendRow(_ app: AppModel, rows: Int = 24, columns: Int = 80) -> String {
        let canvas = draw(app, rows: rows, columns: columns)
        var line = canvas.line(rows - 1)
        while line.hasSuffix(" ") { line.removeLast() }
        return line
    }

    @Test func theEditorLegendKeepsHelpAndQuitAtEightyColumns() throws {
        let app = makeApp(items: [("dropbox", "ana", "Dr0p-pass")])
        app.send(.editSelected)
        app.send(.focus(.password))
        // Movement first, then the hints from the end make room for quit;
        // generating comes before revealing, which loses its place.
        #expect(legendRow(app) == " Enter next  Ctrl-S save  Ctrl-G generate  F1 help  Ctrl-Q quit")
        app.send(.focus(.saveButton))
        #expect(legendRow(app) == " Enter press  Ctrl-S save  Ctrl-R reveal retrieved  F1 help  Ctrl-Q quit")
        app.send(.focus(.kind))
        #expect(legendRow(app) == " Ctrl-S save  Left/Right change  Tab/S-Tab move  Esc list  F1 help  Ctrl-Q quit")
    }

    @Test func noMatchesOffersNoKeysThatActOnAnItem() throws {
        let app = makeApp(items: [("dropbox", "ana", "Dr0p-pass")])
        #expect(legendRow(app, columns: 200).contains("Enter copy  Ctrl-E edit  Del delete"))
        app.send(.insert("zzz"))
        #expect(draw(app, rows: 24, columns: 200).text.contains("No matches"))
        #expect(
            legendRow(app, columns: 200)
                == " type to find  Ctrl-O new  Ctrl-L lock  Up/Down move  Ctrl-Y undo  F8 logout  Ctrl-R reveal  "
                + "Esc clear  F2 messages  F4 log  F1 help  Ctrl-Q quit")
    }

    @Test func theHelpsLastPageSaysTabAndPgUpDoNotClose() throws {
        let app = makeApp()
        app.send(.showHelp)
        let pages = Renderer.helpPageLines(rows: 12, columns: 40, context: .list).pages.count
        for _ in 1..<pages { app.send(.moveSelection(1)) }
        #expect(
            Renderer.helpLegend(app, rows: 12, columns: 40)
                == ["/ search", "PgUp back", "other keys close the help", "Tab next section"])
    }

    @Test func aSearchThatFoundNothingLeavesNoSearchToEnd() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        _ = draw(app, rows: 24, columns: 80)
        app.send(.startFilter)
        app.send(.insert("zebra"))
        app.send(.submit)
        #expect(draw(app, rows: 24, columns: 80).text.contains("No match for"))
        #expect(
            Renderer.helpLegend(app, rows: 24, columns: 80)
                == ["/ search", "Space next", "PgUp back", "Esc clear", "Tab next section"])
        // Esc takes the `No match` away, as the legend says, and then closes the help.
        app.send(.cancel)
        #expect(app.overlay == .help && app.help.missed == nil)
        #expect(
            Renderer.helpLegend(app, rows: 24, columns: 80)
                == ["/ search", "Space next", "PgUp back", "Esc closes the help", "Tab next section"])
    }
}

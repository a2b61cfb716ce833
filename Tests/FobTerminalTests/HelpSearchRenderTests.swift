import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Draws `app` with `glyphs`, the help laid out for the model's search first, as the terminal does.
private func drawn(_ app: AppModel, rows: Int = 24, columns: Int = 80, glyphs: Glyphs = .unicodeSet) -> Canvas {
    Renderer.layOutHelp(app, rows: rows, columns: columns)
    var renderer = Renderer(vaultDescription: "~/vault.db")
    return renderer.render(app, rows: rows, columns: columns, glyphs: glyphs)
}

/// The help's search on screen (issue 32): the help's first line and its
/// legend say how to search, the field shows what is typed, the page of
/// the first match shows with every match marked (by attributes, and by a
/// mark beside the line that needs none), a search that finds nothing says so.
@Suite struct HelpSearchRenderTests {
    /// The page at 80 × 24 holding `word`, counted from 0.
    private func page(of word: String) throws -> Int {
        let pages = Renderer.helpPageLines(rows: 24, columns: 80, context: .list).pages
        return try #require(pages.firstIndex { $0.contains { $0.action.contains(word) } })
    }

    @Test func theFirstLineAndTheLegendSayHowToSearch() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        let canvas = drawn(app)
        let top = try #require((0..<24).first { canvas.line($0).contains("Help") })
        #expect(canvas.line(top + 1).hasPrefix("│ /  "))
        #expect(canvas.line(top + 1).contains("search this help (Enter finds, n / N next"))
        #expect(
            canvas.line(23).contains("/ search  Space next  PgUp back  Esc closes the help  Tab next section"),
            "\(canvas.line(23))")
        app.send(.startFilter)
        #expect(drawn(app).line(23).contains("type a word  Enter find  Esc cancel"))
    }

    @Test func aSearchShowsTheLaterPageOfItsMatchMarked() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        let pages = Renderer.helpPages(rows: 24, columns: 80, context: .list)
        let target = try page(of: "Forwarded")
        #expect(target > 0, "a later page")
        _ = drawn(app)
        app.send(.startFilter)
        app.send(.insert("forwarDED"))
        var canvas = drawn(app)
        let fieldRow = try #require((0..<24).first { canvas.line($0).contains("│ /forwarDED ") })
        #expect(canvas.cursor?.row == fieldRow, "the cursor in the search field")
        app.send(.submit)
        canvas = drawn(app)
        #expect(app.helpPage == target && target < pages, "\(canvas.text)")
        let row = try #require((0..<24).first { canvas.line($0).contains("Forwarded") })
        let line = canvas.line(row)
        #expect(line.hasPrefix("│▸"), "\(line)")
        let column = try #require(
            (0..<71).first { c in String((c..<c + 9).compactMap { canvas[row, $0].text }) == "Forwarded" })
        #expect((column..<column + 9).allSatisfy { canvas[row, $0].role == .focus }, "the match drawn highlighted")
        #expect(canvas[row, column + 9].role != .focus)
        #expect(canvas.text.contains("\u{201C}forwarDED\u{201D}: match 1 of 1; n next, N previous, Esc ends"))
        #expect(canvas.line(23).contains("/ search  n/N next/previous match  "), "\(canvas.line(23))")
        #expect(canvas.line(23).contains("Esc end search"))
    }

    /// Under TERM=linux (the renderer's ASCII stand-ins) the marks beside
    /// the matching lines are ASCII: `>` for the current match, `*` for the others.
    @Test func theMarksAreAsciiOnTheLinuxConsole() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        _ = drawn(app, glyphs: .consoleSet)
        app.send(.startFilter)
        app.send(.insert("COPY the"))
        app.send(.submit)
        let canvas = drawn(app, glyphs: .consoleSet)
        let marked = (0..<24).map { canvas.line($0) }.filter { $0.contains("copy the") && !$0.contains(": match") }
        #expect(marked.count == 3, "\(canvas.text)")
        #expect(marked.first?.hasPrefix("│>") == true, "\(marked)")
        #expect(marked.dropFirst().allSatisfy { $0.hasPrefix("│*") }, "\(canvas.text)")
        #expect(!canvas.text.contains("▸") && !canvas.text.contains("•") && !canvas.text.contains("\u{201C}"))
        #expect(canvas.text.contains("\"COPY the\": match 1 of 3"))
    }

    @Test func aSearchThatFindsNothingSaysSo() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        _ = drawn(app)
        app.send(.startFilter)
        app.send(.insert("zebra"))
        app.send(.submit)
        let canvas = drawn(app)
        let row = try #require((0..<24).first { canvas.line($0).contains("No match for \u{201C}zebra\u{201D}") })
        #expect(canvas[row, 2].role == .warning)
        #expect(canvas.text.contains("Help: Contents"))
        #expect(!canvas.text.contains("▸"))
    }

    /// A match across a line's key and its action (`ctrl-s  save`, over
    /// "Ctrl-S" and "save from any field") was counted and marked beside
    /// the line, but highlighted nowhere. A search finds text within the
    /// key or within the action, and each line it counts shows its match
    /// highlighted.
    @Test func everyCountedMatchIsHighlighted() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        _ = drawn(app)
        app.send(.startFilter)
        app.send(.insert("ctrl-s  save"))
        app.send(.submit)
        var canvas = drawn(app)
        #expect(app.help.matches.isEmpty)
        #expect(canvas.text.contains("No match for \u{201C}ctrl-s  save\u{201D}"), "\(canvas.text)")
        #expect(!canvas.text.contains("▸") && !canvas.text.contains("•"))
        app.send(.cancel)
        app.send(.startFilter)
        app.send(.insert("ctrl-s"))
        app.send(.submit)
        canvas = drawn(app)
        let marked = (0..<24).filter { canvas.line($0).hasPrefix("│▸") || canvas.line($0).hasPrefix("│•") }
        #expect(!marked.isEmpty, "\(canvas.text)")
        for row in marked {
            // Past the mark beside the line, the cells drawn as a match: "Ctrl-S" at least once.
            let mark = try #require((0..<80).first { ["▸", "•"].contains(canvas[row, $0].text) })
            let lit = (mark + 1..<80).filter { [.focus, .selection].contains(canvas[row, $0].role) }
            #expect(lit.count >= 6, "row \(row): \(canvas.line(row))")
        }
    }
}

import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The help at 40 × 12 (issue: it ran to 48 pages) comes in 39 pages of
/// 7 lines that can be read: one section a page or a few, its title in the
/// top border, the footer in the row the search line takes while searching, the explanations at least 24 cells beside a narrow key
/// column (longer keys on a line of their own), nothing cut, every key and
/// word of the help on one of the pages; Tab and Shift-Tab jump between
/// the sections.
@Suite struct NarrowHelpTests {
    @Test func theHelpAtFortyByTwelvePagesReadably() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        let (pages, sections, width, keyWidth) = Renderer.helpPageLines(rows: 12, columns: 40, context: .list)
        #expect(Renderer.helpLinesPerPage(rows: 12) == 7)
        #expect(pages.allSatisfy { $0.count <= 7 && !$0.isEmpty })
        #expect(width - 4 - keyWidth - 2 >= Renderer.helpMinimumActionWidth, "explanations \(width - 6 - keyWidth)")
        var seen = ""
        for page in 1...pages.count {
            let canvas = draw(app, rows: 12, columns: 40)
            let text = canvas.text
            let section = try #require(sections.last { $0.first < page })
            #expect(text.contains("Help: \(section.title)"), "\(text)")
            #expect(text.contains("\(page - section.first)/\(section.count)") || section.count == 1, "\(text)")
            // The footer (the row above the bottom border) names the section and the page,
            // whatever else it has to leave out (`Preview 1/3`, not only `1/3`).
            let place = section.count == 1 ? section.title : "\(section.title) \(page - section.first)/\(section.count)"
            #expect(canvas.line(9).hasPrefix("│ \(place)"), "page \(page): \(canvas.line(9))")
            #expect(!text.contains("…"), "cut on page \(page):\n\(text)")
            // Seven lines of help at most between the top border and the footer.
            let lines = (0..<12).map { canvas.line($0) }
            let top = try #require(lines.firstIndex { $0.contains("Help: ") })
            #expect(lines[top + 1...top + pages[page - 1].count].allSatisfy { $0.hasPrefix("│ ") })
            seen += lines.joined(separator: " ")
            app.send(.moveSelection(1))
        }
        let words = Set(seen.split(separator: " ").map(String.init))
        for line in HelpSections.lines(for: .list) {
            for word in (line.key + " " + line.action).split(separator: " ") {
                #expect(words.contains(String(word)), "missing: \(word) of \(line.key)")
            }
        }
    }

    /// 39 pages where there were 48: a page holds one section's lines only,
    /// Tab goes to the next section's first page and Shift-Tab back, the
    /// footer says where the page stands and how to move on.
    @Test func everyPageHoldsOneSectionAndTabJumpsToTheNext() throws {
        try #require(unicodeLocale)
        let laid = Renderer.helpPageLines(rows: 12, columns: 40, context: .list)
        #expect(laid.pages.count == 39)
        #expect(
            laid.sections.map { "\($0.title) \($0.first) \($0.count)" } == [
                "Contents 0 1", "List 1 10", "Find 11 2", "Preview 13 3", "Editor 16 11", "Generator 27 2",
                "Dialogs 29 5", "Help 34 5",
            ])
        let contents = Renderer.helpContents(HelpSections.ordered(for: .list))
        for section in laid.sections {
            let source = try #require(([contents] + HelpSections.all).first { $0.title == section.title })
            let words = Set(source.lines.flatMap { ($0.keys + " " + $0.text).split(separator: " ") })
            let keys = Set(source.lines.map(\.keys))
            for page in laid.pages[section.first..<section.first + section.count] {
                for line in page {
                    #expect(line.key.isEmpty || keys.contains(line.key), "\(line.key) not in \(section.title)")
                    #expect(line.action.split(separator: " ").allSatisfy(words.contains), "\(line.action)")
                }
            }
        }
        let app = makeApp()
        app.send(.showHelp)
        Renderer.layOutHelp(app, rows: 12, columns: 40)
        #expect(draw(app, rows: 12, columns: 40).text.contains("Help: Contents"))
        let tab = try #require(KeyMap.action(for: .tab, in: app, helpPages: 39))
        app.send(tab)
        #expect(app.helpPage == 1)
        var canvas = draw(app, rows: 12, columns: 40)
        #expect(canvas.text.contains("┌─ Help: List "), "\(canvas.text)")
        #expect(canvas.line(9) == "│ List 1/10 · Tab section · PgDn more  │", "\(canvas.text)")
        // On the Linux console the dots are ASCII, as the other symbols.
        var renderer = Renderer(vaultDescription: "~/vault.db")
        let console = renderer.render(app, rows: 12, columns: 40, glyphs: .consoleSet)
        #expect(console.line(9) == "│ List 1/10 - Tab section - PgDn more  │", "\(console.text)")
        app.send(.moveSelection(1))
        app.send(tab)
        #expect(app.helpPage == 11, "from the second page of List to the first of Find")
        canvas = draw(app, rows: 12, columns: 40)
        #expect(canvas.text.contains("Help: Find"))
        #expect(canvas.text.contains("Find 1/2 · Tab section · PgDn more"))
        // Longer names keep their name and page: `PgDn more` shortens first.
        app.send(tab)
        #expect(draw(app, rows: 12, columns: 40).line(9) == "│ Preview 1/3 · Tab section · PgDn     │")
        app.send(tab)
        for _ in 1..<10 { app.send(.moveSelection(1)) }
        #expect(draw(app, rows: 12, columns: 40).line(9) == "│ Editor 10/11 · Tab section · PgDn    │")
        app.send(.moveSelection(1))
        #expect(draw(app, rows: 12, columns: 40).line(9) == "│ Editor 11/11 · Tab next section      │")
        // Back to Find: the Editor's first page, then Preview's, then Find's.
        for _ in 0..<3 { app.send(.focusPrevious) }
        #expect(app.helpPage == 11)
        app.send(try #require(KeyMap.action(for: .backTab, in: app, helpPages: 39)))
        #expect(app.helpPage == 1)
        app.send(.focusPrevious)
        #expect(app.helpPage == 0)
        app.send(.focusPrevious)
        #expect(app.helpPage == 34, "round the ends, to the last section")
        #expect(draw(app, rows: 12, columns: 40).text.contains("Help: Help"))
        app.send(.focusNext)
        #expect(app.helpPage == 0 && app.overlay == .help)
    }

    /// The search at 40 × 12 finds every line of every page, and shows the
    /// page of its match with its section's title; the search line takes
    /// the footer's row while the search is in effect.
    @Test func theSearchFindsEveryLineAndShowsItsSection() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        let laid = Renderer.helpPageLines(rows: 12, columns: 40, context: .list)
        Renderer.layOutHelp(app, rows: 12, columns: 40)
        for (p, page) in laid.pages.enumerated() {
            for (l, line) in page.enumerated() where !line.action.isEmpty {
                app.send(.startFilter)
                app.send(.insert(line.action))
                app.send(.submit)
                let found = app.help.matches.contains { $0.page == p && $0.line == l }
                #expect(found, "\(line.action) on page \(p)")
                app.send(.cancel)
            }
        }
        app.send(.startFilter)
        app.send(.insert("forwarded"))
        app.send(.submit)
        let editor = try #require(laid.sections.first { $0.title == "Editor" })
        #expect((editor.first..<editor.first + editor.count).contains(app.helpPage))
        let canvas = draw(app, rows: 12, columns: 40)
        #expect(canvas.text.contains("┌─ Help: Editor "), "\(canvas.text)")
        #expect(canvas.line(9) == "│ \u{201C}forwarded\u{201D}: match 1 of 1            │", "\(canvas.text)")
        #expect(canvas.text.contains("Forwarded"))
    }
}

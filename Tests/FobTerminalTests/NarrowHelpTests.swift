import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The help at 40 × 12 comes in pages of 6 lines that can be read: the
/// explanations get at least 24 cells beside a narrow key column (longer
/// keys on a line of their own), nothing is cut, and every key and word of
/// the help is on one of the pages.
@Suite struct NarrowHelpTests {
    @Test func theHelpAtFortyByTwelvePagesReadably() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        let (pages, width, keyWidth) = Renderer.helpPageLines(rows: 12, columns: 40, context: .list)
        #expect(Renderer.helpLinesPerPage(rows: 12) == 6)
        #expect(pages.allSatisfy { $0.count <= 6 && !$0.isEmpty })
        #expect(width - 4 - keyWidth - 2 >= Renderer.helpMinimumActionWidth, "explanations \(width - 6 - keyWidth)")
        var seen = ""
        for page in 1...pages.count {
            let canvas = draw(app, rows: 12, columns: 40)
            let text = canvas.text
            #expect(text.contains("Page \(page) of \(pages.count)"), "\(text)")
            #expect(!text.contains("…"), "cut on page \(page):\n\(text)")
            // Six lines of help between the top border and the footer.
            let lines = (0..<12).map { canvas.line($0) }
            let top = try #require(lines.firstIndex { $0.contains("Help") })
            #expect(lines[top + 1...top + pages[page - 1].count].allSatisfy { $0.hasPrefix("│ ") })
            seen += lines.joined(separator: " ")
            app.send(.moveSelection(1))
        }
        let words = Set(seen.split(separator: " ").map(String.init))
        for line in HelpSections.lines(for: .list) where !line.title {
            for word in (line.key + " " + line.action).split(separator: " ") {
                #expect(words.contains(String(word)), "missing: \(word) of \(line.key)")
            }
        }
    }
}

import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The password generator dialog fits and stays usable at 40 × 12, 80 × 24
/// and 120 × 40: every field can be reached and seen, the preview, its
/// entropy and the buttons always show, and no pane shows beside the box
/// cut in the middle of a word.
@Suite struct GeneratorFitTests {
    static let sizes = [(rows: 12, columns: 40), (rows: 24, columns: 80), (rows: 40, columns: 120)]

    /// The rows of `canvas` the dialog's box takes (its top border to its bottom one).
    static func boxRows(_ canvas: Canvas) -> ClosedRange<Int>? {
        guard let top = (0..<canvas.rows).first(where: { canvas.line($0).contains("Password generator") }),
            let bottom = (top..<canvas.rows).first(where: { canvas.line($0).hasPrefix("└") })
        else { return nil }
        return top...bottom
    }

    @Test(arguments: [false, true])
    func everyFieldIsReachableAndThePreviewAndButtonsShow(words: Bool) throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "pw")])
        app.send(.newItem)
        app.send(.openGenerator)
        if words { app.send(.cycleKind(1)) }
        let dialog = try #require(app.mainModel?.generatorDialog)
        #expect(dialog.fields.contains(.separator) == words)
        for (rows, columns) in Self.sizes {
            for _ in dialog.fields {
                let canvas = draw(app, rows: rows, columns: columns)
                let size = "\(columns)x\(rows)"
                let box = try #require(Self.boxRows(canvas), "\(size): no box\n\(canvas.text)")
                let inside = box.map { canvas.line($0) }
                let text = inside.joined(separator: "\n")
                for caption in ["Preview", "Entropy", "[ Enter Use ]", "[ Esc Cancel ]"] {
                    #expect(text.contains(caption), "\(size): no \(caption)\n\(canvas.text)")
                }
                let focused = Renderer.generatorLabel(dialog.focus)
                #expect(text.contains(focused), "\(size): \(focused) out of view\n\(canvas.text)")
                let cursor = try #require(canvas.cursor, "\(size)")
                #expect(box.contains(cursor.row) && canvas.line(cursor.row).contains(focused), "\(size)")
                // The whole preview shows (masked: one • a character), nothing cut.
                let masks = text.filter { $0 == "•" }.count
                #expect(masks == dialog.previewText.count, "\(size)\n\(canvas.text)")
                #expect(!text.contains("…"), "\(size)\n\(canvas.text)")
                // The box spans the screen: no pane beside it.
                for line in inside.dropFirst().dropLast() {
                    #expect(line.hasPrefix("│") && line.hasSuffix("│"), "\(size): \(line)")
                }
                app.send(.focusNext)
            }
        }
    }

    /// At 40 × 12 a revealed preview wraps over two lines and reads whole;
    /// fields out of view are said (`↓ N more`).
    @Test func theRevealedPreviewReadsWholeAtFortyByTwelve() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "pw")])
        app.send(.newItem)
        app.send(.openGenerator)
        app.send(.toggleReveal)
        let dialog = try #require(app.mainModel?.generatorDialog)
        #expect(dialog.isPreviewRevealed)
        let canvas = draw(app, rows: 12, columns: 40)
        let box = try #require(Self.boxRows(canvas))
        let shown = box.map { canvas.line($0) }.filter { !$0.contains("Entropy") }
            .map { String($0.dropFirst(23).prefix(15)) }.joined()
        #expect(shown.contains(dialog.previewText), "\(canvas.text)")
        #expect(canvas.text.contains("↓ 3 more"), "\(canvas.text)")
        #expect(canvas.text.contains("(32 ASCII)") || !canvas.text.contains("Symbols"))
    }
}

import CNcurses
import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// A note longer than the preview pane scrolls: Shift-Down/Up by a line,
/// Shift-PgDn/PgUp by a page, never past its last line, and the next item's
/// preview starts at its top.
@Suite struct PreviewScrollTests {
    @Test func aLongNoteScrollsToItsLastLineAndBack() throws {
        try #require(unicodeLocale)
        let (app, store, _) = makeTestApp(items: [("zzz.example", "bob", "pw")], locked: true)
        var long = Item(service: "notes.example", account: "me", secret: SecretBytes(utf8: "pw"))
        long.notes = (1...40).map { "note line \($0)" }.joined(separator: "\n")
        store.externalPut(long)
        app.send(.insert("pw"))
        app.send(.submit)
        let main = try #require(app.mainModel)
        #expect(main.list.selectedRow?.service == "notes.example")
        var renderer = Renderer(vaultDescription: "~/vault.db")
        var text = renderer.render(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        #expect(text.contains("note line 1") && !text.contains("note line 40"), "\(text)")
        #expect(text.contains("more"), "\(text)")
        func press(_ key: Key) throws {
            let action = try #require(
                KeyMap.action(for: key, in: app, pageRows: renderer.listPage, previewRows: renderer.previewRows))
            app.send(action)
            text = renderer.render(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        }
        try press(.shiftDown)
        #expect(main.previewOffset == 1)
        #expect(text.contains("↑ 1 more"), "\(text)")
        for _ in 0..<20 { try press(.shiftPageDown) }
        #expect(text.contains("note line 40") && !text.contains("↓"), "\(text)")
        let bottom = main.previewOffset
        try press(.shiftDown)
        #expect(main.previewOffset == bottom, "never past the last line")
        try press(.shiftPageUp)
        #expect(main.previewOffset < bottom)
        for _ in 0..<40 { try press(.shiftUp) }
        #expect(main.previewOffset == 0 && text.contains("note line 1") && !text.contains("↑"), "\(text)")
        // Scrolled, then another item: its preview starts at the top.
        try press(.shiftPageDown)
        try press(.down)
        #expect(main.list.selectedRow?.service == "zzz.example")
        #expect(main.previewOffset == 0)
        // Typing still searches: the scroll keys are no letters.
        try press(.character("n"))
        #expect(main.list.filter.text == "n")
    }

    @Test func shiftArrowsAndPagesAreDecoded() {
        var d = KeyDecoder()
        var keys: [Key] = []
        for sequence in ["\u{1B}[1;2A", "\u{1B}[1;2B", "\u{1B}[5;2~", "\u{1B}[6;2~"] {
            for scalar in sequence.unicodeScalars { keys += d.feed(.character(scalar.value)) }
            keys += d.flush()
        }
        for code in [KEY_SR, KEY_SF, KEY_SPREVIOUS, KEY_SNEXT] { keys += d.feed(.function(code)) }
        let expected: [Key] = [.shiftUp, .shiftDown, .shiftPageUp, .shiftPageDown]
        #expect(keys == expected + expected)
    }
}

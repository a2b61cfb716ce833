import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// `app` drawn on a `rows` × `columns` canvas with `glyphs`.
private func drawn(_ app: AppModel, rows: Int, columns: Int, glyphs: Glyphs) -> Canvas {
    var renderer = Renderer(vaultDescription: "~/vault.db")
    return renderer.render(app, rows: rows, columns: columns, glyphs: glyphs)
}

@Suite struct PolishRenderTests {
    /// The Linux console's fonts hold box lines but not the screens' symbols:
    /// `TERM=linux` under a UTF-8 locale picks ASCII stand-ins for them.
    @Test func linuxConsoleGetsAsciiSymbols() {
        #expect(Glyphs.select(utf8: true, term: "linux") == .consoleSet)
        #expect(Glyphs.select(utf8: true, term: "linux-16color") == .consoleSet)
        #expect(Glyphs.select(utf8: true, term: "xterm-256color") == .unicodeSet)
        #expect(Glyphs.select(utf8: false, term: "xterm-256color") == .asciiSet)
    }

    /// No ✓ ✗ ▸ • … ● ↓ on the console: a copy's `✓`, the pointer, a
    /// masked secret, the `●` of unsaved edits all have their stand-ins.
    @Test func consoleScreenHasNoSymbolOutsideItsFont() throws {
        try #require(unicodeLocale)
        let items = (0..<40).map { ("service\($0).example", "user\($0)", "secret\($0)") }
        let (app, _, _) = makeTestApp(items: items)
        app.send(.copySelected)
        var text = drawn(app, rows: 24, columns: 80, glyphs: .consoleSet).text
        #expect(text.contains("+ Copied password"), "\(text)")
        app.send(.editSelected)
        app.send(.insert("x"))
        text = drawn(app, rows: 24, columns: 80, glyphs: .consoleSet).text
        for symbol in ["✓", "✗", "▸", "•", "…", "●", "↓", "↑", "⏎", "·"] {
            #expect(!text.contains(symbol), "\(symbol) in \(text)")
        }
        #expect(text.contains("* Editing") || text.contains("*"), "\(text)")
        // The unicode set keeps them.
        text = drawn(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        #expect(text.contains("●"))
    }
}

@Suite struct EditorMessageRowTests {
    /// At 80×24 the editor's Message row repeated the status line over up to
    /// 6 of its 19 rows: below 100 columns it is left out, and the message
    /// shows once, on the status line; from 100 columns the row is back.
    @Test func theMessageRowIsDroppedBelowHundredColumns() throws {
        try #require(unicodeLocale)
        let (app, _, _) = makeTestApp(items: [("github.com", "ana", "pw")])
        app.send(.editSelected)
        app.send(.retrieve)
        var text = drawn(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        #expect(!text.contains("Message"), "\(text)")
        let said = app.mainModel?.form.message.text ?? ""
        #expect(!said.isEmpty)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[lines.count - 2].contains("✓ \(said)"), "\(text)")
        text = drawn(app, rows: 40, columns: 120, glyphs: .unicodeSet).text
        #expect(text.contains("Message"))
    }
}

@Suite struct SpacesTests {
    /// The form's Message and the preview collapsed runs of spaces
    /// (`a   b` showed as `a b`): they are kept, and dropped only where a
    /// line breaks.
    @Test func runsOfSpacesAreKept() {
        #expect(Layout.wrapCells("col1    col2  end", width: 40) == ["col1    col2  end"])
        #expect(Layout.wrapCells("  indented", width: 40) == ["  indented"])
        #expect(Layout.wrapCells("aaa     bbb", width: 5) == ["aaa  ", "bbb"])
        #expect(Layout.wrapCells("one two three", width: 7) == ["one two", "three"])
    }

    /// A note with aligned columns shows them aligned in the preview.
    @Test func thePreviewKeepsANotesSpaces() throws {
        try #require(unicodeLocale)
        var stored = item("github.com", "ana", "pw")
        stored.notes = "pin:    1234"
        let store = InMemoryStore(password: "pw")
        store.externalPut(stored)
        let clock = TestClock()
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(
                clipboard: FakeClipboard(), clearAfter: 45, clock: clock, runner: InlineRunner()),
            clock: clock)
        app.send(.insert("pw"))
        app.send(.submit)
        let text = drawn(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        #expect(text.contains("pin:    1234"), "\(text)")
    }
}

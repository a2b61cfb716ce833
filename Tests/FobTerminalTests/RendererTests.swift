import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobTerminal

/// Whether the tests can switch to a UTF-8 locale (needed to draw `•` and box lines).
let unicodeLocale: Bool = setlocale(LC_CTYPE, "C.UTF-8") != nil

/// An app on an in-memory store with `items`, unlocked unless `locked`,
/// with the store and the fake clipboard it uses.
func makeTestApp(
    items: [(String, String, String)] = [], locked: Bool = false, vault: Bool = true,
    clock: TestClock = TestClock(), lockAfter: TimeInterval = 300
)
    -> (app: AppModel, store: InMemoryStore, clipboard: FakeClipboard)
{
    let store = InMemoryStore(password: vault ? "pw" : nil, now: { clock.now })
    for (service, account, secret) in items {
        store.externalPut(Item(service: service, account: account, secret: SecretBytes(utf8: secret)))
    }
    let clipboard = FakeClipboard()
    let app = AppModel(
        store: store,
        clipboard: ClipboardController(
            clipboard: clipboard, clearAfter: 45, clock: clock,
            runner: InlineRunner()),
        clock: clock, lockAfter: lockAfter)
    if vault && !locked {
        app.send(.insert("pw"))
        app.send(.submit)
    }
    return (app, store, clipboard)
}

/// An app on an in-memory store with `items`, unlocked unless `locked`.
func makeApp(
    items: [(String, String, String)] = [], locked: Bool = false, vault: Bool = true,
    clock: TestClock = TestClock(), lockAfter: TimeInterval = 300
) -> AppModel {
    makeTestApp(items: items, locked: locked, vault: vault, clock: clock, lockAfter: lockAfter).app
}

/// The app drawn on a 32 × 110 (or `rows` × `columns`) Unicode canvas.
func draw(_ app: AppModel, rows: Int = 32, columns: Int = 110) -> Canvas {
    var renderer = Renderer(vaultDescription: "~/vault.db")
    return renderer.render(app, rows: rows, columns: columns, glyphs: .unicodeSet)
}

@Suite struct RendererTests {
    @Test func createScreenHasBothMaskedFields() throws {
        try #require(unicodeLocale)
        let app = makeApp(vault: false)
        app.send(.insert("sekrit"))
        let text = draw(app).text
        #expect(text.contains("New master password"))
        #expect(text.contains("Confirm"))
        #expect(text.contains("••••••"))
        #expect(!text.contains("sekrit"))
    }

    @Test func unlockScreenMasksAndShowsNoItems() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s")], locked: true)
        app.send(.insert("åäö€"))
        let canvas = draw(app)
        #expect(canvas.text.contains("Master password"))
        #expect(canvas.text.contains("••••"))
        #expect(!canvas.text.contains("•••••"))
        #expect(!canvas.text.contains("github.com"))
        #expect(canvas.cursor != nil)
    }

    @Test func mainScreenHasEveryLabelAndTheLegend() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret"), ("密码", "🔑", "x")])
        var canvas = draw(app)
        // Browsing: the list beside the preview of the highlighted item.
        for label in ["Items 1/2", "Preview", "Service", "User ID", "Password", "github.com", "密码", "🔑"] {
            #expect(canvas.text.contains(label), "missing \(label)")
        }
        #expect(canvas.line(31).contains("F1 help"))
        #expect(canvas.line(31).contains("Ctrl-Q quit"))
        #expect(!canvas.text.contains("s3cret"))
        // In the form: the seeds' screen.
        app.send(.focus(.service))
        canvas = draw(app)
        for label in [
            "Service", "User ID", "Password", "[ Save ]", "[ Retrieve ]", "[ Delete ]",
            "Retrieved ID", "Retrieved Password", "Message", "Items 1/2", "github.com", "密码", "🔑",
        ] {
            #expect(canvas.text.contains(label), "missing \(label)")
        }
        #expect(!canvas.text.contains("s3cret"))
    }

    @Test func retrievedPasswordIsMaskedUntilRevealed() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.send(.openSelected)
        var text = draw(app).text
        #expect(text.contains("••••••"))
        #expect(!text.contains("s3cret"))
        app.send(.focus(.saveButton))
        app.send(.toggleReveal)
        text = draw(app).text
        #expect(text.contains("s3cret"))
    }

    @Test func tooSmallAndBack() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s")])
        let small = draw(app, rows: 5, columns: 20)
        #expect(small.text.contains("Terminal too small"))
        // The key bound there (q types nothing and quits nothing).
        #expect(small.text.contains("Ctrl-Q quits"))
        #expect(draw(app, rows: 9, columns: 80).text.contains("Terminal too small"))
        #expect(draw(app, rows: 10, columns: 39).text.contains("Terminal too small"))
        let minimum = draw(app, rows: 10, columns: 40)
        #expect(!minimum.text.contains("Terminal too small"))
        #expect(minimum.text.contains("github.com"))
    }

    @Test func everySizeDrawsWithinItsBounds() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: (0..<50).map { ("service-\($0)-密码-with-a-long-name", "user\($0)", "s") })
        app.send(.deleteSelected)
        for columns in stride(from: 1, through: 130, by: 7) {
            for rows in stride(from: 1, through: 40, by: 3) {
                let canvas = draw(app, rows: rows, columns: columns)
                #expect(canvas.rows == rows && canvas.columns == columns)
                for r in 0..<rows { #expect(DisplayWidth.cells(of: canvas.line(r)) <= columns) }
            }
        }
    }

    @Test func listScrollsToKeepTheSelectionInView() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: (0..<100).map { (String(format: "svc%03d", $0), "a", "s") })
        var renderer = Renderer(vaultDescription: "v")
        _ = renderer.render(app, rows: 20, columns: 100, glyphs: .unicodeSet)
        app.send(.moveSelection(60))
        let canvas = renderer.render(app, rows: 20, columns: 100, glyphs: .unicodeSet)
        #expect(canvas.text.contains("svc060"))
        #expect(!canvas.text.contains("svc000"))
        #expect(renderer.listTop > 0)
    }

    @Test func dialogAndHelpOverlays() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s")])
        app.send(.openSelected)
        app.send(.delete)
        var text = draw(app).text
        #expect(text.contains("Delete item"))
        #expect(text.contains("[ Enter Delete ]"))
        #expect(text.contains("[ Esc Keep it ]"))
        #expect(Renderer.legend(for: app) == "Enter delete  Esc keep it")
        app.send(.dismiss)
        app.send(.showHelp)
        text = draw(app).text
        #expect(text.contains("Help: Contents"))
        Renderer.layOutHelp(app, rows: 24, columns: 80)
        app.send(.focusNext)
        #expect(draw(app).text.contains("Ctrl-R"))
    }

    @Test func generatorRowAndDialog() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.newItem)
        var text = draw(app).text
        #expect(text.contains("Generator"))
        #expect(text.contains("20 chars, a-z A-Z 0-9 sym"))
        #expect(draw(app, rows: 32, columns: 140).text.contains("20 characters · a-z A-Z 0-9 symbols"))
        app.send(.openGenerator)
        var canvas = draw(app)
        text = canvas.text
        for caption in [
            "Password generator", "Make", "characters", "Length", "Lower case a-z", "Excluded characters",
            "Preview", "130.9 bits", "Enter Use", "Esc Cancel",
        ] {
            #expect(text.contains(caption), "\(caption)")
        }
        #expect(text.contains(String(repeating: "•", count: 20)))
        // On the focused choice (the mode), for screen readers.
        #expect(canvas.cursor.map { canvas.line($0.row).contains("Make") } == true)
        app.send(.focusNext)
        canvas = draw(app)
        #expect(canvas.cursor != nil) // in the Length field
        app.send(.clearField)
        app.send(.insert("5000"))
        text = draw(app).text
        #expect(text.contains("The length must be 1 to 4096 characters, not 5000"))
        #expect(!text.contains("bits"))
        // Small screens still draw it without a crash.
        _ = draw(app, rows: 10, columns: 40)
        app.send(.focusPrevious)
        app.send(.cycleKind(1))
        text = draw(app).text
        #expect(text.contains("Separator") && text.contains("(a space)") && !text.contains("Length"))
    }

    /// A problem with the generator settings is wrapped, never cut, and the
    /// Symbols toggle says it is every ASCII punctuation character.
    @Test func generatorProblemsWrapAndSymbolsSayWhatTheyAre() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.openGenerator)
        var text = draw(app, rows: 40, columns: 140).text
        #expect(text.contains("Symbols") && text.contains("(all 32 ASCII punctuation characters)"))
        #expect(!text.contains("!#$%&*"))
        // Digits only, every digit excluded.
        for action: Action in [
            .focusNext, .focusNext, .cycleKind(1), .focusNext, .cycleKind(1), .focusNext, .focusNext,
            .cycleKind(1), .focusNext, .insert("0123456789"),
        ] { app.send(action) }
        let problem = try #require(app.mainModel?.generatorDialog?.problem)
        // The box spans the screen: at 72 columns its inside is 68 cells wide.
        #expect(DisplayWidth.cells(of: problem) > 68)
        let canvas = draw(app, rows: 40, columns: 72)
        text = canvas.text
        let lines = Renderer.wrap(problem, width: 68)
        #expect(lines.count == 2)
        let rows = lines.compactMap { line in (0..<40).first { canvas.line($0).contains(line) } }
        #expect(rows.count == lines.count && rows == Array(rows[0]..<rows[0] + lines.count), "\(rows)")
        for row in rows { #expect(!canvas.line(row).contains("…")) }
        #expect(text.contains("Enter Use"))
    }

    @Test func helpBoxFitsItsLongestLineAndWrapsOnNarrowScreens() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        // One section a page: every page read in turn.
        let sections = Renderer.helpPages(rows: 100, columns: 160)
        let wide = (0..<sections).map { _ in
            defer { app.send(.moveSelection(1)) }
            return draw(app, rows: 100, columns: 160).text
        }.joined(separator: "\n")
        for line in HelpSections.lines(for: .list) where !line.key.isEmpty {
            #expect(wide.contains(line.key), "cut: \(line.key)")
            #expect(line.action.isEmpty || wide.contains(line.action), "cut: \(line.action)")
        }
        #expect(!wide.contains("…"))
        // Narrower than the longest line: the explanations wrap, nothing is cut.
        for _ in 0..<sections { app.send(.moveSelection(-1)) }
        let narrow = (0..<sections).map { _ in
            defer { app.send(.moveSelection(1)) }
            return draw(app, rows: 200, columns: 60)
        }
        #expect(!narrow.contains { $0.text.contains("…") })
        let joined = narrow.flatMap { canvas in (0..<200).map { canvas.line($0) } }.joined(separator: " ")
            .split(separator: " ").filter { !$0.allSatisfy { $0 == "│" } }.joined(separator: " ")
        let typing = try #require(HelpSections.lines(for: .list).first { $0.key == "typing" }).action
        #expect(joined.contains(typing))
        #expect(joined.contains("List · Tab next section"))
    }

    /// On an 80 × 24 terminal the help does not fit: it comes in pages that
    /// together hold every line, no entry split between two; Space and
    /// PageDown turn them, PageUp goes back, and Space on the last page
    /// (or any other key) closes it.
    @Test func aHelpTallerThanTheScreenComesInPages() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.showHelp)
        let pages = Renderer.helpPages(rows: 24, columns: 80)
        #expect(pages > 1)
        #expect(Renderer.helpPages(rows: 100, columns: 160) == 8, "one page for each section and the contents")
        let laid = Renderer.helpPageLines(rows: 24, columns: 80, context: .list)
        // No entry is cut between pages: every page starts with a key.
        for page in Renderer.helpPageLines(rows: 24, columns: 80, context: .list).pages {
            #expect(page.first?.key.isEmpty == false)
        }
        var seen = ""
        for page in 1...pages {
            let canvas = draw(app, rows: 24, columns: 80)
            let section = try #require(laid.sections.last { $0.first < page })
            #expect(canvas.text.contains("Help: \(section.title)"), "\(canvas.text)")
            let footer = Renderer.helpFooter(
                title: section.title, page: page - section.first, of: section.count, width: 76)
            #expect(canvas.text.contains(footer), "\(canvas.text)")
            seen += (0..<24).map { canvas.line($0) }.joined(separator: " ")
            let next = try #require(KeyMap.action(for: .character(" "), in: app, helpPages: pages))
            if page < pages {
                #expect(next == .moveSelection(1))
                app.send(next)
                #expect(app.overlay != nil, "turning a page keeps the help open")
            } else {
                #expect(next == .dismiss, "Space on the last page closes the help")
            }
        }
        let words = seen.split(separator: " ").filter { !$0.allSatisfy { $0 == "│" } }.joined(separator: " ")
        for line in HelpSections.lines(for: .list) where !line.key.isEmpty {
            #expect(words.contains(line.key), "missing: \(line.key)")
        }
        #expect(KeyMap.action(for: .pageUp, in: app, helpPages: pages) == .moveSelection(-1))
        app.send(.moveSelection(-1))
        #expect(app.helpPage == pages - 2)
        for _ in 0..<(pages + 2) { app.send(.moveSelection(-1)) }
        #expect(app.helpPage == 0, "PageUp stops at the first page")
        // Where it fits, Space closes it like any other key.
        #expect(KeyMap.action(for: .character(" "), in: app, helpPages: 1) == .dismiss)
        #expect(KeyMap.action(for: .character("x"), in: app, helpPages: pages) == .dismiss)
        app.send(.dismiss)
        #expect(app.overlay == nil)
        app.send(.showHelp)
        #expect(app.helpPage == 0, "the help opens on its first page")
    }

    @Test func messageWrapsOntoTheFollowingLines() throws {
        try #require(unicodeLocale)
        let app = makeApp()
        app.send(.focus(.service))
        app.send(.insert("nosuchservice.example"))
        app.send(.focus(.userID))
        app.send(.insert("someone"))
        app.send(.retrieve)
        let canvas = draw(app)
        let rows = (0..<canvas.rows).map { canvas.line($0) }
        let first = try #require(rows.firstIndex { $0.contains("Message") })
        let column = try #require(rows[first].range(of: "No item for"))
        let start = rows[first].distance(from: rows[first].startIndex, to: column.lowerBound)
        let parts = rows[first...(first + 2)].map { line -> String in
            let chars = Array(line)
            return String(chars[min(start, chars.count)...]).split(separator: "│").first.map(String.init)?
                .trimmingCharacters(in: .whitespaces) ?? ""
        }
        #expect(
            parts.filter { !$0.isEmpty }.joined(separator: " ")
                == #"No item for nosuchservice.example / someone"#)
        // The message is wrapped, never cut (the Generator row's summary below may be).
        #expect(!parts.joined().contains("…"))
    }

    @Test func expiryColumnShowsTheWholeText() throws {
        try #require(unicodeLocale)
        let clock = TestClock()
        let store = InMemoryStore(password: "pw", now: { clock.now })
        // An unsigned JWT whose exp (RFC 7519 §4.1.4) is 10 years and 239 days ago.
        let exp = Int(clock.now.timeIntervalSince1970) - (10 * 365 + 239) * 86_400
        func b64url(_ s: String) -> String {
            Data(s.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let jwt = b64url(#"{"alg":"none"}"#) + "." + b64url(#"{"exp":\#(exp)}"#) + ".c2ln"
        store.externalPut(Item(service: "idp.example", account: "ana", kind: .token, secret: SecretBytes(utf8: jwt)))
        store.externalPut(Item(service: "api.example", account: "bo", secret: SecretBytes(utf8: "x")))
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(
                clipboard: FakeClipboard(), clearAfter: 45, clock: clock,
                runner: InlineRunner()),
            clock: clock, lockAfter: 0)
        app.send(.insert("pw"))
        app.send(.submit)
        for columns in [80, 110, 160] {
            let text = draw(app, columns: columns).text
            #expect(text.contains("!10y ago"), "at \(columns) columns")
        }
    }

    @Test func passwordLegendSaysWhatCtrlRReveals() throws {
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.send(.openSelected)
        app.send(.focus(.password))
        #expect(Renderer.legend(for: app).contains("Ctrl-R reveal retrieved"))
        app.send(.insert("x"))
        #expect(Renderer.legend(for: app).contains("Ctrl-R reveal typed"))
        #expect(
            HelpSections.lines(for: .field).contains { $0.key == "Ctrl-R" && $0.action.contains("retrieved password") })
    }

    @Test func wrapKeepsWordsTogether() {
        #expect(
            Renderer.wrap("Delete service \"a\", user ID \"b\"? (y/n)", width: 16)
                == ["Delete service", "\"a\", user ID", "\"b\"? (y/n)"])
        #expect(Renderer.wrap("", width: 10) == [""])
    }
}

@Suite struct KeyMapTests {
    @Test func listKeys() {
        let app = makeApp(items: [("a", "b", "c")])
        let cases: [(Key, Action)] = [
            (.down, .moveSelection(1)), (.control("n"), .moveSelection(1)), (.up, .moveSelection(-1)),
            (.control("p"), .moveSelection(-1)), (.control("f"), .selectQuery), (.enter, .submit),
            (.control("b"), .copyUserID), (.control("t"), .copyOneTimeCode), (.control("e"), .editSelected),
            (.control("o"), .newItem), (.delete, .askDeleteSelected), (.control("l"), .askLock),
            (.function(8), .logoutWipe(service: nil)), (.function(1), .showHelp), (.function(2), .showMessages),
            (.control("q"), .askQuit), (.function(10), .askQuit), (.control("y"), .undo),
            (.function(5), .refreshSelected), (.function(6), .resolveSelected),
            (.tab, .focusNext), (.backTab, .focusPrevious), (.escape, .cancel),
        ]
        for (key, action) in cases { #expect(KeyMap.action(for: key, in: app) == action, "\(key)") }
        // Every printable character, space included, goes to the query: none is a command.
        for character in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 /?!.-_@:" {
            #expect(KeyMap.action(for: .character(character), in: app) == .insert(String(character)), "\(character)")
        }
    }

    @Test func fieldKeysEditInsteadOfCommanding() {
        let app = makeApp()
        app.send(.newItem)
        #expect(KeyMap.action(for: .character("q"), in: app) == .insert("q"))
        #expect(KeyMap.action(for: .paste("a b"), in: app) == .insert("a b"))
        #expect(KeyMap.action(for: .backspace, in: app) == .deleteBackward)
        #expect(KeyMap.action(for: .control("r"), in: app) == .toggleReveal)
        #expect(KeyMap.action(for: .enter, in: app) == .submit)
        #expect(KeyMap.action(for: .escape, in: app) == .cancel)
        #expect(KeyMap.action(for: .left, in: app) == .moveCursor(.left))
    }

    @Test func dialogKeys() {
        let app = makeApp(items: [("a", "b", "c")])
        app.send(.openSelected)
        app.send(.delete)
        // A typed word cannot answer: only Enter confirms, Esc says no.
        #expect(KeyMap.action(for: .enter, in: app) == .confirm)
        #expect(KeyMap.action(for: .escape, in: app) == .dismiss)
        for letter in "ynqdr" { #expect(KeyMap.action(for: .character(letter), in: app) == nil, "\(letter)") }
    }

    @Test func tooSmallIgnoresEveryKeyButCtrlQ() {
        let unlock = makeApp(locked: true)
        for key: Key in [.character("x"), .enter, .tab, .escape, .control("r"), .paste("pw"), .backspace] {
            #expect(KeyMap.action(for: key, in: unlock, fits: false) == nil, "\(key)")
        }
        #expect(KeyMap.action(for: .control("q"), in: unlock, fits: false) == .quit)
        #expect(KeyMap.action(for: .character("q"), in: unlock, fits: false) == nil)
        let main = makeApp(items: [("a", "b", "c")])
        #expect(KeyMap.action(for: .character("d"), in: main, fits: false) == nil)
        #expect(KeyMap.action(for: .character("l"), in: main, fits: false) == nil)
        // Ctrl-Q quits even with a dialog open.
        main.send(.deleteSelected)
        #expect(KeyMap.action(for: .character("y"), in: main, fits: false) == nil)
        let quit = KeyMap.action(for: .control("q"), in: main, fits: false)
        #expect(quit == .quit)
        main.send(quit!)
        #expect(main.shouldQuit)
        #expect(Renderer.fits(rows: 10, columns: 40))
        #expect(!Renderer.fits(rows: 8, columns: 30))
    }

    @Test func setupScreenKeys() {
        let create = makeApp(vault: false)
        #expect(KeyMap.action(for: .control("t"), in: create) == .setKDFPreset(.sensitive))
        #expect(KeyMap.action(for: .tab, in: create) == .focusNext)
        #expect(KeyMap.action(for: .escape, in: create) == .quit)
        let unlock = makeApp(locked: true)
        #expect(KeyMap.action(for: .character("q"), in: unlock) == .insert("q"))
        #expect(KeyMap.action(for: .enter, in: unlock) == .submit)
    }
}

/// Issue 20's logout review, drawn: groups, ticks, scrolling that keeps the cursor's row in view.
@Suite struct LogoutReviewRendererTests {
    @Test func theCursorsRowIsNeverUnderAMoreIndicator() throws {
        try #require(unicodeLocale)
        let (app, store, _) = makeTestApp()
        for i in 0..<12 {
            store.externalPut(Item(service: "api\(i)", account: "ci", kind: .oauth, secret: SecretBytes(utf8: "{}")))
        }
        store.externalPut(Item(service: "npm", account: "publish", kind: .token, secret: SecretBytes(utf8: "t")))
        app.tick()
        app.send(.logoutWipe(service: nil))
        var text = draw(app, rows: 16, columns: 80).text
        #expect(text.contains("Session tokens (12)"))
        #expect(text.contains("↓"))
        #expect(text.contains("Delete 12 items, clear the clipboard and lock? Enter deletes"))
        for _ in 0..<12 { app.send(.moveSelection(1)) }
        app.send(.cycleKind(1))
        text = draw(app, rows: 16, columns: 80).text
        #expect(text.contains("[x] npm / publish  token"))
        #expect(text.contains("↑"))
        #expect(text.contains("Delete 13 items"))
    }
}

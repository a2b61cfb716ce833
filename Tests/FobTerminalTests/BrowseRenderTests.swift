import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// An app over `items` (full items), unlocked, with its clock.
private func browseApp(_ items: [Item], clock: TestClock = TestClock(), lockAfter: TimeInterval = 300) -> AppModel {
    let store = InMemoryStore(password: "pw", now: { clock.now })
    for item in items { store.externalPut(item) }
    let app = AppModel(
        store: store,
        clipboard: ClipboardController(
            clipboard: FakeClipboard(), clearAfter: 45, clock: clock, runner: InlineRunner()),
        clock: clock, lockAfter: lockAfter)
    app.send(.insert("pw"))
    app.send(.submit)
    return app
}

/// The rows of `canvas` as text.
private func rows(_ canvas: Canvas) -> [String] { (0..<canvas.rows).map { canvas.line($0) } }

/// The column (in cells, counting each character as one) where `text` starts on `line`.
private func column(of text: String, in line: String) -> Int? {
    guard let range = line.range(of: text) else { return nil }
    return line.distance(from: line.startIndex, to: range.lowerBound)
}

@Suite struct BrowseRenderTests {
    private static let now = 1_767_225_600.0

    private func items() -> [Item] {
        var github = item("github.com", "ana@example.com", "s3cret-github")
        github.oneTimePassword = SecretBytes(utf8: "otpauth://totp/GitHub:ana?secret=JBSWY3DPEHPK3PXP")
        return [
            github, item("slack.com", "ana", "xoxb"),
            item("api.example.com", "deploy", jwt(exp: Self.now + 52 * 60), kind: .token),
            item("old.example.com", "ci", jwt(exp: Self.now - 7200), kind: .token),
        ]
    }

    /// At 80×24: the list, the preview, the position in the title, a
    /// legend keeping `F1 help` and `Ctrl-Q quit`, the lock state in the header.
    @Test func eightyByTwentyFourShowsWhatMatters() throws {
        try #require(unicodeLocale)
        let app = browseApp(items())
        let canvas = draw(app, rows: 24, columns: 80)
        let lines = rows(canvas)
        #expect(lines[1].contains("Items 1/4"))
        #expect(lines[1].contains("Preview"))
        let legend = lines[23]
        #expect(legend.contains("F1 help") && legend.contains("Ctrl-Q quit"), "\(legend)")
        #expect(DisplayWidth.cells(of: legend) <= 80)
        // Typing finds, Enter copies: the bottom line says so at 80 columns, with edit and delete.
        #expect(
            legend.trimmingCharacters(in: .whitespaces)
                == "type to find  Enter copy  Ctrl-E edit  Del delete  F1 help  Ctrl-Q quit", "\(legend)")
        let locks = ItemPreview.localTime(app.idleLockDeadline!, now: app.now)
        #expect(lines[0].contains("unlocked · locks \(locks)"))
        #expect(draw(makeApp(locked: true), rows: 24, columns: 80).line(0).contains("locked"))
        #expect(draw(makeApp(vault: false), rows: 24, columns: 80).line(0).contains("no vault yet"))
        #expect(draw(makeApp(lockAfter: 0), rows: 24, columns: 80).line(0).hasSuffix("unlocked "))
        // Names are whole where the row has room for them.
        for name in ["api.example.com", "deploy", "github.com", "slack.com", "old.example.com"] {
            #expect(canvas.text.contains(name), "\(name) cut")
        }
        let wide = draw(app, rows: 40, columns: 120).text
        for name in ["api.example.com", "deploy", "github.com", "ana@example.com", "slack.com", "old.example.com"] {
            #expect(wide.contains(name), "\(name) cut at 120 columns")
        }
        #expect(canvas.text.contains("2fa"))
        #expect(canvas.text.contains("in 52m"))
        #expect(canvas.text.contains("!2h ago"))
        // The preview of the highlighted token: its expiry as local time and relative.
        let local = ItemPreview.localTime(Date(timeIntervalSince1970: Self.now + 52 * 60), now: app.now)
        #expect(canvas.text.contains("\(local) · in 52m"))
        #expect(canvas.text.contains("Subject") && canvas.text.contains("ana"))
    }

    /// Issue 20: the list dropped its Kind column once a token existed; the
    /// columns neither appear, vanish nor move with the filter.
    @Test func columnsStayPutWhatevertheFilter() throws {
        try #require(unicodeLocale)
        let app = browseApp(items())
        for columns in [80, 120] {
            let before = rows(draw(app, rows: 24, columns: columns))
            let width = Layout.listWidth(columns: columns)
            func inList(_ line: String) -> String { String(line.prefix(width)) }
            let slackRow = try #require(before.map(inList).first { $0.contains("slack.com") })
            let kindColumn = column(of: "password", in: slackRow)
            #expect(kindColumn != nil, "the kind shows beside a token at \(columns) columns")
            app.send(.startFilter)
            app.send(.insert("slack"))
            let after = rows(draw(app, rows: 24, columns: columns))
            let filteredRow = try #require(after.map(inList).first { $0.contains("slack.com") })
            #expect(column(of: "password", in: filteredRow) == kindColumn, "at \(columns) columns")
            #expect(after[1].contains("Items 1/1 of 4"))
            app.send(.cancel)
        }
    }

    /// The terminal cursor sits on the selected row, then in the filter, on
    /// the help, on a dialog's question and on the editor's focused button.
    @Test func cursorSitsOnWhatHasFocus() throws {
        try #require(unicodeLocale)
        let app = browseApp(items())
        app.send(.moveSelection(2))
        var canvas = draw(app, rows: 24, columns: 80)
        let cursor = try #require(canvas.cursor)
        #expect(canvas.line(cursor.row).contains("old.example.com"))
        app.send(.startFilter)
        app.send(.insert("sl"))
        canvas = draw(app, rows: 24, columns: 80)
        #expect(canvas.line(try #require(canvas.cursor).row).contains("/ sl"))
        app.send(.cancel)
        app.send(.showHelp)
        canvas = draw(app, rows: 24, columns: 80)
        // The help: on its first line, under the title of its first page (the contents, then List).
        let helpCursor = try #require(canvas.cursor).row
        #expect(canvas.line(helpCursor - 1).contains("Help: Contents") && canvas.line(helpCursor).contains("/"))
        app.send(.dismiss)
        // A dialog: on its question (the editor's Delete button asks; d in the list does not).
        app.send(.editSelected)
        app.send(.focus(.deleteButton))
        app.send(.submit)
        canvas = draw(app, rows: 24, columns: 80)
        let question = canvas.line(try #require(canvas.cursor).row)
        #expect(question.contains("Delete ") && question.contains(" / "), "\(question)")
        app.send(.dismiss)
        // A focused button: on its first cell, compact beside the list at
        // 80 columns, roomy at 120.
        app.send(.focus(.retrieveButton))
        for (rows, columns, label) in [(24, 80, "[Retrieve]"), (40, 120, "[ Retrieve ]")] {
            canvas = draw(app, rows: rows, columns: columns)
            let button = try #require(canvas.cursor)
            #expect(
                Array(canvas.line(button.row))[button.column...].starts(with: label), "at \(columns) columns")
        }
    }

    /// Issue 20: masks showed one `•` per character of a stored secret.
    @Test func masksHaveAFixedWidth() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("bank", "ana", String(repeating: "x", count: 31))])
        var text = draw(app, rows: 24, columns: 80).text
        #expect(text.contains("••••••••"))
        #expect(!text.contains("•••••••••"))
        app.send(.toggleReveal)
        text = draw(app, rows: 24, columns: 120).text
        #expect(text.contains(String(repeating: "x", count: 31)))
        app.send(.focus(.saveButton))
        app.send(.openSelected)
        text = draw(app, rows: 24, columns: 120).text
        #expect(!text.contains("•••••••••"))
    }

    /// The status line: full width above the legend, its tone as a symbol;
    /// a long message wraps onto a second row instead of being cut.
    @Test func statusLineSaysWhatHappenedToWhichItem() throws {
        try #require(unicodeLocale)
        let long = "a-service-with-a-rather-long-name.example.com"
        let app = browseApp([item(long, "someone.with.a.long.address@example.com", "pw")])
        app.send(.copySelected)
        let canvas = draw(app, rows: 24, columns: 80)
        let lines = rows(canvas)
        let message = "✓ Copied password of \(long) / someone.with.a.long.address@example.com · clears in 45 s"
        #expect(!lines[21].contains("…") && !lines[22].contains("…"))
        let joined = (lines[21] + " " + lines[22]).split(separator: " ").joined(separator: " ")
        #expect(joined.contains(message), "\(lines[21])\n\(lines[22])")
        #expect(canvas[22, 1].role == .info)
    }

    /// `m` shows the last messages, newest first.
    @Test func messageHistoryOverlay() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("slack.com", "ana", "pw")])
        app.send(.copySelected)
        app.send(.copyUserID)
        app.send(.showMessages)
        let text = draw(app, rows: 24, columns: 80).text
        #expect(text.contains("Messages"))
        let user = try #require(text.range(of: "Copied user ID of slack.com / ana"))
        let password = try #require(text.range(of: "Copied password of slack.com / ana"))
        #expect(user.lowerBound < password.lowerBound)
        #expect(KeyMap.action(for: .character("q"), in: app) == .dismiss)
    }

    /// Help by context: the editor's section comes first in the editor;
    /// q and Esc (without a search) close the help.
    @Test func helpShowsTheSectionOfWhatHasFocusFirst() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("slack.com", "ana", "pw")])
        app.send(.newItem)
        app.send(.showHelp)
        // The contents name it first, and Tab goes to it.
        #expect(draw(app, rows: 40, columns: 120).text.contains("next section: Editor, List, Find"))
        Renderer.layOutHelp(app, rows: 40, columns: 120)
        app.send(.focusNext)
        let canvas = draw(app, rows: 40, columns: 120)
        #expect(canvas.text.contains("─ Help: Editor "))
        for key in ["Ctrl-A/E", "Ctrl-U", "Kind: Left/Right"] { #expect(canvas.text.contains(key)) }
        #expect(KeyMap.action(for: .character("q"), in: app) == .dismiss)
        // Esc ends a search first; without one it closes the help too.
        #expect(KeyMap.action(for: .escape, in: app) == .cancel)
        app.send(.cancel)
        #expect(app.overlay == nil)
        let all = HelpSections.lines(for: .list).map { "\($0.key) \($0.action)" }.joined(separator: "\n")
        for key in ["PgUp/PgDn, Home/End", "Enter", "Esc", "Ctrl-D", "Ctrl-A/E", "Ctrl-U", "Kind: Left/Right"] {
            #expect(all.contains(key), "\(key)")
        }
        #expect(
            HelpSections.all.map(\.title) == [
                "List", "Find", "Preview", "Editor", "Generator", "Dialogs", "Help",
            ])
    }

    /// Under NO_COLOR an expired token reads bold with `!`; one expiring
    /// within five minutes is marked too.
    @Test func expiryIsMarkedWithoutColour() throws {
        try #require(unicodeLocale)
        #expect(Theme.table[.expired]?.monoAttributes.contains(.bold) == true)
        let clock = TestClock()
        let app = browseApp(
            [
                item("soon.example", "a", jwt(exp: Self.now + 240), kind: .token),
                item("old.example", "b", jwt(exp: Self.now - 60), kind: .token),
            ], clock: clock)
        let canvas = draw(app, rows: 24, columns: 80)
        let lines = rows(canvas)
        let old = try #require(lines.firstIndex { $0.contains("old.example") && $0.contains("!1m ago") })
        let soon = try #require(lines.firstIndex { $0.contains("soon.example") && $0.contains("*in 4m") })
        let oldColumn = try #require(column(of: "!1m ago", in: lines[old]))
        let soonColumn = try #require(column(of: "*in 4m", in: lines[soon]))
        // The selected row (old.example sorts first) has the selection's look; the other its own.
        #expect(canvas[soon, soonColumn].role == .warning)
        #expect(canvas[old, oldColumn].role == .selection)
    }

    /// At 80 columns every row keeps the columns: the account, the marks
    /// and the kind start where they start on every other row, whatever the
    /// filter or the selection; a long name takes the cells its row's other
    /// name leaves (s.io's long account starts right after it).
    @Test func everyRowKeepsTheColumnsAtEightyColumns() throws {
        try #require(unicodeLocale)
        var withCode = item("site-with-a-long-name.example.org", "someone@example.org", "x")
        withCode.oneTimePassword = SecretBytes(utf8: "otpauth://totp/S:u?secret=JBSWY3DPEHPK3PXP")
        let app = browseApp([
            withCode, item("bank.example.com", "ana.lopez", "x"), item("s.io", "a-very-long-account@example.com", "x"),
            item("api.example.com", "deploy", jwt(exp: Self.now + 3600), kind: .token),
        ])
        let accounts = ["someone", "ana.lop", "a-very-", "deploy"]
        func starts() throws -> (accounts: [Int], kinds: [Int]) {
            let lines = rows(draw(app, rows: 24, columns: 80)).map { String($0.prefix(Layout.listWidth(columns: 80))) }
            let shown = lines.filter { line in accounts.contains { line.contains($0) } }
            let accountStarts = shown.compactMap { line in accounts.compactMap { column(of: $0, in: line) }.first }
            let kinds = shown.compactMap { column(of: "password", in: $0) ?? column(of: "token", in: $0) }
            #expect(accountStarts.count == shown.count && kinds.count == shown.count, "\(lines)")
            return (accountStarts, kinds)
        }
        let all = try starts()
        // s.io's long account takes the cells its short service leaves: it starts right after it.
        let sio = try #require(rows(draw(app, rows: 24, columns: 80)).first { $0.contains("s.io") })
        #expect(column(of: "a-very-", in: sio) == (column(of: "s.io", in: sio) ?? 0) + 5, "\(sio)")
        #expect(all.accounts.count == 4, "\(all)")
        #expect(Set(all.kinds).count == 1, "\(all)")
        app.send(.moveSelection(2))
        #expect(try starts().accounts == all.accounts)
        app.send(.insert("example"))
        let filtered = try starts()
        #expect(Set(filtered.accounts).isSubset(of: Set(all.accounts)) && Set(filtered.kinds) == Set(all.kinds))
    }

    /// From 120 columns the list has a label column (imports put folders
    /// there); at 80 it has none, and the preview shows the label.
    @Test func aLabelColumnFromHundredTwentyColumns() throws {
        try #require(unicodeLocale)
        let app = browseApp([
            item("bank.example.com", "ana", "x", label: "Finance/Banking"), item("mail.example", "bob", "x"),
        ])
        let wide = rows(draw(app, rows: 40, columns: 120)).map { String($0.prefix(Layout.listWidth(columns: 120))) }
        let bank = try #require(wide.first { $0.contains("bank.example.com") })
        #expect(bank.contains("Finance/Banking"), "\(wide)")
        let label = try #require(column(of: "Finance/Banking", in: bank))
        let account = try #require(column(of: "ana", in: bank))
        #expect(label > account)
        let narrow = rows(draw(app, rows: 24, columns: 80)).map { String($0.prefix(Layout.listWidth(columns: 80))) }
        #expect(!narrow.contains { $0.contains("Finance") }, "\(narrow)")
    }

    @Test func legendDropsLowPriorityHintsFirst() {
        let entries = ["Up/Down j/k move", "/ filter", "Enter open", "c/u/o copy", "W logout", "? help", "q quit"]
        #expect(Layout.fitLegend(entries, width: 200) == entries.joined(separator: "  "))
        let fitted = Layout.fitLegend(entries, width: 50)
        #expect(fitted == "/ filter  Enter open  c/u/o copy  ? help  q quit")
        #expect(Layout.fitLegend(entries, width: 10) == "? help  q quit")
    }

    /// Every editor context keeps `Ctrl-S save` on its bottom line at 80 columns and narrower.
    @Test func theEditorsLegendAlwaysKeepsSave() {
        let editor = ["Tab/S-Tab move", "Enter press", "Ctrl-S save", "Ctrl-R reveal retrieved", "Esc list", "? help"]
        #expect(Layout.fitLegend(editor, width: 79).contains("Ctrl-S save"))
        #expect(Layout.fitLegend(editor, width: 30) == "Ctrl-S save  ? help")
    }

    /// A number stays with its unit when a line wraps: the help said `z undoes (10` / `s)`.
    @Test func aNumberWrapsWithItsUnit() {
        #expect(
            Renderer.wrap("delete the highlighted item at once; z undoes (10 s)", width: 50) == [
                "delete the highlighted item at once; z undoes", "(10 s)",
            ])
        #expect(Renderer.wrap("locks in 5 min, then 20 MB", width: 10) == ["locks in", "5 min,", "then 20 MB"])
        // Longer words after a number wrap as before.
        #expect(Renderer.wrap("keeps 3 versions", width: 7) == ["keeps 3", "versions"])
    }
}

extension BrowseRenderTests {
    /// The editor's box is titled with the item it edits, `New item` for
    /// `n`, and a `●` marks unsaved edits (the title was a fixed `Item`).
    @Test func editorTitleNamesTheItemAndMarksUnsavedEdits() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("slack.com", "ana", "xoxb")])
        app.send(.openSelected)
        var top = rows(draw(app, rows: 24, columns: 80))[1]
        #expect(top.contains("Editing slack.com / ana"), "\(top)")
        #expect(!top.contains("●"))
        app.send(.focusNext)
        app.send(.insert("x"))
        top = rows(draw(app, rows: 24, columns: 80))[1]
        #expect(top.contains("● Editing slack.com / ana"), "\(top)")
        app.send(.cancel)
        app.send(.discardEdits)
        app.send(.newItem)
        top = rows(draw(app, rows: 24, columns: 80))[1]
        #expect(top.contains("New item"), "\(top)")
    }
}

extension BrowseRenderTests {
    /// The help names the editor's and the list's keys as they work: Delete
    /// asks and Ctrl-Y undoes, Ctrl-S saves, the unsaved-edits question's
    /// Ctrl-D, and the logout review's keys.
    @Test func helpSaysWhatDeleteUndoSaveAndTheReviewDo() {
        let all = HelpSections.lines(for: .list)
        func text(_ key: String, in section: String) -> String? {
            guard let start = all.firstIndex(where: { $0.title && $0.key == section }) else { return nil }
            let rest = all[(start + 1)...]
            let end = rest.firstIndex(where: \.title) ?? all.endIndex
            return all[(start + 1)..<end].first { $0.key == key }?.action
        }
        #expect(text("Delete", in: "List")?.contains("Ctrl-Y undoes") == true)
        #expect(text("Delete", in: "List")?.contains("asks") == true)
        #expect(text("Ctrl-Y", in: "List")?.contains("rename or Save") == true)
        #expect(text("Ctrl-S", in: "Editor") == "save from any field")
        #expect(text("Ctrl-D", in: "Dialogs")?.hasPrefix("unsaved edits: discard them") == true)
        #expect(text("Space, Up/Down", in: "Dialogs")?.contains("logout review: tick") == true)
        #expect(text("Enter", in: "Dialogs")?.contains("delete") == true)
        #expect(HelpSections.ordered(for: .logoutReview).first?.title == "Dialogs")
    }
}

extension BrowseRenderTests {
    /// At 80×24 the editor beside the list shows the three buttons whole,
    /// compact (`[ Delet…` was cut), and the roomy ones where they fit.
    @Test func editorButtonsAreNeverCut() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("slack.com", "ana", "xoxb")])
        app.send(.openSelected)
        let small = draw(app, rows: 24, columns: 80)
        #expect(small.text.contains("[Save] [Retrieve] [Delete]"), "\(small.text)")
        let large = draw(app, rows: 40, columns: 120)
        #expect(large.text.contains("[ Save ]  [ Retrieve ]  [ Delete ]"), "\(large.text)")
    }
}

extension BrowseRenderTests {
    /// No page of the help is empty and every line is on one: at 80×24
    /// from the editor, a page once held only the `List` title, its keys on
    /// the next (titles are now in the box's border).
    @Test func noHelpPageIsEmptyAndNoLineIsLost() throws {
        try #require(unicodeLocale)
        for context in [KeyContext.list, .field, .button, .filter, .confirm] {
            for (rows, columns) in [(24, 80), (30, 100), (40, 120)] {
                let pages = Renderer.helpPageLines(rows: rows, columns: columns, context: context).pages
                for (n, page) in pages.enumerated() {
                    #expect(!page.isEmpty, "\(context) \(rows)×\(columns) page \(n + 1)")
                }
                let all = pages.joined().filter { !$0.key.isEmpty || !$0.action.isEmpty }
                let expected = Renderer.helpLayout(columns: columns, context: context).sections.flatMap(\.lines)
                    .filter { !$0.key.isEmpty || !$0.action.isEmpty }
                #expect(all.count == expected.count, "every line kept: \(context) \(rows)×\(columns)")
            }
        }
    }
}

extension BrowseRenderTests {
    /// A field scrolled to keep the cursor in view shows a leading `…`
    /// (it showed the tail of the text as if it were all of it).
    @Test func aScrolledFieldShowsALeadingEllipsis() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("slack.com", "ana", "xoxb")])
        app.send(.openSelected)
        app.send(.focus(.label))
        app.send(.insert("Work account of the whole team"))
        let canvas = draw(app, rows: 24, columns: 80)
        let row = try #require((0..<24).first { canvas.line($0).contains("Label") })
        let line = canvas.line(row)
        #expect(line.contains("…") && line.contains("team"), "\(line)")
        #expect(!line.contains("Work"))
        let cursor = try #require(canvas.cursor)
        #expect(cursor.row == row)
        let ellipsis = try #require(column(of: "…", in: line))
        #expect(cursor.column > ellipsis + 1, "the cursor sits after the text, not on the ellipsis")
    }
}

/// Found by fresh eyes at 80×24: each test failed before its fix.
@Suite struct FreshEyesRenderTests {
    /// The help's box takes the whole width: its border lies on the panes'
    /// frame, not one cell inside it (`┌┌─ Help`).
    @Test func theHelpBoxIsNotDrawnInsideTheFrames() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("mail", "ana", "pw")])
        app.send(.showHelp)
        let lines = rows(draw(app, rows: 24, columns: 80))
        #expect(!lines.contains { $0.contains("┌┌") || $0.contains("││") }, "\(lines.joined(separator: "\n"))")
        #expect(lines.contains { $0.hasPrefix("┌─ Help: Contents") })
    }

    /// The Kind column keeps a blank cell before the list's border.
    @Test func theKindColumnDoesNotTouchTheBorder() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("mail", "ana", "pw", kind: .note), item("a", "b", "c")])
        let canvas = draw(app, rows: 24, columns: 80)
        let width = Layout.listWidth(columns: 80)
        for line in rows(canvas)[2...3] {
            let cells = Array(line)
            #expect(cells[width - 1] == "│")
            #expect(cells[width - 2] == " ", "\(line)")
        }
    }

    /// The Generator row says its settings whole at 80 columns.
    @Test func theGeneratorRowFitsAtEightyColumns() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("mail", "ana", "pw")])
        app.send(.newItem)
        app.send(.focus(.generator))
        let text = rows(draw(app, rows: 24, columns: 80)).joined(separator: "\n")
        #expect(text.contains("Generator   20 chars, aA9#"), "\(text)")
    }

    /// The terminal cursor sits on the generator dialog's focused choice.
    @Test func theCursorSitsOnAFocusedGeneratorChoice() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("mail", "ana", "pw")])
        app.send(.openGenerator)
        let canvas = draw(app, rows: 24, columns: 80)
        let cursor = try #require(canvas.cursor)
        #expect(canvas.line(cursor.row).contains("Make"))
    }

    /// A long name wraps after its dots and dashes, not in the middle of a word.
    @Test func longNamesWrapAtTheirBreaks() {
        #expect(
            Layout.wrapCells("a-very-long-service-name-for-testing-wrapping.example.org", width: 19) == [
                "a-very-long-", "service-name-for-", "testing-wrapping.", "example.org",
            ])
        #expect(Layout.wrapCells("ana@example.com and more", width: 10) == ["ana@", "example.", "com", "and more"])
        // A word with no break is cut at the line's end.
        #expect(Layout.wrapCells("abcdefghijkl", width: 5) == ["abcde", "fghij", "kl"])
    }

    /// A status message too long for two rows keeps its first row (the
    /// item's name) and its end (the cause); the middle gives way.
    @Test func aLongStatusKeepsTheNameAndTheCause() {
        let message = StatusLine.error(
            "Copy of the password of github.com / ana@example.com failed: clipboard helper failed: tmux "
                + "load-buffer -w -b fob - exited with status 1: error connecting to /tmp/tmux-0/default")
        let rows = Layout.statusRows(message, columns: 80, unicode: true)
        #expect(rows.count == 2)
        #expect(rows[0].contains("github.com / ana@example.com"))
        #expect(rows[1].hasPrefix("…"))
        #expect(rows[1].hasSuffix("error connecting to /tmp/tmux-0/default"))
        #expect(rows.allSatisfy { DisplayWidth.cells(of: $0) <= 78 })
    }

    /// The editor's Message field wraps a long name at its breaks rather than cutting it.
    @Test func theMessageFieldKeepsLongNamesWhole() throws {
        try #require(unicodeLocale)
        let app = browseApp([item("a-very-long-service-name-for-testing.example.org", "ana", "pw")])
        app.send(.editSelected)
        let lines = rows(draw(app, rows: 40, columns: 120))
        let first = try #require(lines.firstIndex { $0.contains("Message") })
        let last = try #require(lines[first...].firstIndex { $0.contains("───") })
        // The editor's part of each Message row: after the list's right border.
        let message = lines[first..<last].map { String($0.split(separator: "│", omittingEmptySubsequences: false)[3]) }
        #expect(!message.contains { $0.contains("…") }, "\(message)")
        let joined = message.joined().filter { $0 != " " }
        #expect(joined.contains("a-very-long-service-name-for-testing.example.org/ana"), "\(message)")
    }

    /// A short expiry (`in 2h`) lends the cells it leaves to the row's
    /// names: api.example.com was cut beside three blank cells.
    @Test func aShortExpiryLendsItsBlankCellsToTheNames() throws {
        try #require(unicodeLocale)
        var github = item("github.com", "ana@example.com", "x")
        github.oneTimePassword = SecretBytes(utf8: "otpauth://totp/S:u?secret=JBSWY3DPEHPK3PXP")
        let app = browseApp([
            item("api.example.com", "deploy", jwt(exp: 1_767_225_600 + 7200), kind: .token),
            item("bank.example.com", "ana.larsson", "x"), item("ci.example.com", "runner", "x"), github,
        ])
        let lines = rows(draw(app, rows: 24, columns: 80)).map { String($0.prefix(Layout.listWidth(columns: 80))) }
        let api = try #require(lines.first { $0.contains("api.example") })
        // Both whole, the account in its column (the names' split cuts none here).
        #expect(api.contains("api.example.com") && api.contains("deploy") && !api.contains("…"), "\(api)")
        let kinds = lines.compactMap { line in column(of: "password", in: line) ?? column(of: "token", in: line) }
        #expect(kinds.count == 4 && Set(kinds).count == 1, "\(lines)")
    }
}

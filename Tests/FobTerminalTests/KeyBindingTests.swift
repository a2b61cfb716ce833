import FobClipboard
import FobStore
import FobSystem
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal
@testable import FobViewModels

/// A consent question as the agent's feed brings it.
let sampleQuestion = ConsentQuestion(
    id: 1, pid: 4242, program: "/usr/bin/git", parents: "bash[12] ← tmux[3]", workingDirectory: "/home/ana/src",
    terminal: "", item: "github.com / ana", channel: "fob get", leaseSeconds: 900)

/// An app showing `context`, with one item in the vault.
private func app(in context: KeyContext) -> AppModel {
    switch context {
    case .createVault: return makeApp(vault: false)
    case .unlock: return makeApp(locked: true)
    default: break
    }
    let (app, store, _) = makeTestApp(items: [("github.com", "ana", "s3cret")])
    switch context {
    case .help: app.send(.showHelp)
    case .helpSearch:
        app.send(.showHelp)
        app.send(.startFilter)
    case .messages: app.send(.showMessages)
    case .confirm:
        app.send(.openSelected)
        app.send(.delete)
    case .logoutReview:
        store.externalPut(Item(service: "npm", account: "ci", kind: .token, secret: SecretBytes(utf8: "tok")))
        app.tick()
        app.send(.logoutWipe(service: nil))
    case .filter: app.send(.startFilter)
    case .field: app.send(.newItem)
    case .button: app.send(.focus(.saveButton))
    case .choice: app.send(.focus(.kind))
    case .generatorRow: app.send(.focus(.generator))
    case .generatorChoice: app.send(.openGenerator)
    case .generatorField:
        app.send(.openGenerator)
        app.send(.focusNext)
    case .consent:
        app.mainModel!.consent.questions = [sampleQuestion]
        app.send(.openRequest)
    case .accessLog: app.send(.showAccessLog)
    case .programs:
        var item = Item(service: "github.com", account: "ana", secret: SecretBytes(utf8: "s3cret"))
        let identity = ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 0)
        item.accessRule = AccessRule(trusted: [TrustedProgram(path: "/usr/bin/git", identity: identity)])
        store.externalPut(item)
        app.tick()
        app.send(.editSelected)
        app.send(.focus(.accessPrograms))
    case .tooSmall, .list, .createVault, .unlock: break
    }
    return app
}

/// Keys standing for a row's keys in the checks.
private func sampleKeys(_ keys: KeyBinding.Keys) -> [Key] {
    switch keys {
    case .these(let keys): return keys
    case .text: return [.character("x"), .character("é"), .paste("a b")]
    // Not Tab: the help takes it (its next section) before its row of any other key.
    case .any: return [.character("z"), .character("q"), .enter, .escape, .function(12), .control("r")]
    case .mouse: return [.click(row: 3, column: 4), .wheel(down: true, row: 3, column: 4)]
    }
}

@Suite struct KeyBindingTableTests {
    @Test func eachContextCanBeReached() {
        for context in KeyContext.allCases {
            #expect(KeyContext(app(in: context), fits: context != .tooSmall) == context, "\(context)")
        }
    }

    /// Every row's keys reach the key map with the row's action: no earlier
    /// row in the same context shadows them.
    @Test func everyBindingIsReachableThroughTheKeyMap() {
        for context in KeyContext.allCases {
            let app = app(in: context)
            let situation = KeyBinding.Situation(app: app, pageRows: 7)
            for (index, row) in KeyBindings.table.enumerated() where row.contexts.contains(context) {
                for key in sampleKeys(row.keys) {
                    let first = KeyBindings.table.firstIndex { $0.contexts.contains(context) && $0.keys.match(key) }
                    #expect(first == index, "\(key) in \(context): row \(index) shadowed by row \(first ?? -1)")
                    let mapped = KeyMap.action(for: key, in: app, pageRows: 7, fits: context != .tooSmall)
                    #expect(mapped == row.action(for: key, in: situation), "\(key) in \(context)")
                }
            }
        }
    }

    @Test func keysOutsideTheTableMeanNothing() {
        #expect(KeyMap.action(for: .character("x"), in: app(in: .list)) == .insert("x"))
        #expect(KeyMap.action(for: .character("q"), in: app(in: .confirm)) == nil)
        #expect(KeyMap.action(for: .character("y"), in: app(in: .confirm)) == nil)
        #expect(KeyMap.action(for: .tab, in: app(in: .unlock)) == nil)
        #expect(KeyMap.action(for: .character("x"), in: app(in: .button)) == nil)
        #expect(KeyMap.action(for: .enter, in: app(in: .list), fits: false) == nil)
    }

    @Test func pagingUsesThePageSize() {
        let list = app(in: .list)
        #expect(KeyMap.action(for: .pageDown, in: list, pageRows: 7) == .moveSelection(7))
        #expect(KeyMap.action(for: .pageUp, in: list, pageRows: 0) == .moveSelection(-1))
        #expect(KeyMap.action(for: .end, in: list) == .moveSelection(Int(Int32.max)))
    }

    /// The legend of each context: the table's legend entries in order,
    /// and exactly the text the end-to-end tests and the docs show.
    @Test func legendsComeFromTheTable() {
        let expected: [KeyContext: String] = [
            .help: "/ search  Esc or any other key closes",
            .helpSearch: "type a word  Enter find  Esc cancel",
            .messages: "any key closes the messages",
            .confirm: "Enter delete  Esc keep it",
            .createVault: "Tab next field  Enter create  Ctrl-R reveal  Ctrl-T key derivation  Esc quit",
            .unlock: "Enter unlock  Ctrl-R reveal  Esc quit",
            .list:
                "type to find  Enter copy  Ctrl-E edit  Del delete  Ctrl-B user  Ctrl-T code  Ctrl-O new  "
                + "Ctrl-L lock  Up/Down move  Ctrl-Y undo  F8 logout  Ctrl-R reveal  Esc clear  F2 messages  "
                + "F4 log  F1 help  Ctrl-Q quit",
            .filter:
                "type to replace  Enter keep  Esc clear  Up/Down move  Ctrl-R reveal  F4 log  F1 help  Ctrl-Q quit",
            .accessLog: "type to find  Up/Down move  Enter details  Esc clear/close  F4 close",
            .programs: "Del remove  Up/Down select  Tab/S-Tab move  Ctrl-S save  Esc list  F1 help  Ctrl-Q quit",
            .field:
                "Tab/S-Tab move  Enter next  Ctrl-S save  Ctrl-R reveal retrieved  Ctrl-U clear  "
                + "Esc list  F1 help  Ctrl-Q quit",
            .choice: "Ctrl-S save  Left/Right change  Tab/S-Tab move  Esc list  F1 help  Ctrl-Q quit",
            .button:
                "Tab/S-Tab move  Enter press  Ctrl-S save  Ctrl-R reveal retrieved  Esc list  F1 help  Ctrl-Q quit",
            .generatorRow: "Ctrl-S save  Enter/Ctrl-G settings  Tab/S-Tab move  Esc list  F1 help  Ctrl-Q quit",
            .generatorField: "Tab/S-Tab move  Ctrl-G new  Ctrl-R reveal  Enter use  Esc cancel",
            .generatorChoice: "Tab/S-Tab move  Space switch  Ctrl-G new  Ctrl-R reveal  Enter use  Esc cancel",
        ]
        for (context, legend) in expected {
            let app = app(in: context)
            let fromTable = KeyBindings.table.filter { $0.contexts.contains(context) }
                .compactMap { $0.legend?.text(for: app) }.filter { !$0.isEmpty }.joined(separator: "  ")
            #expect(Renderer.legend(for: app) == fromTable, "\(context)")
            #expect(Renderer.legend(for: app) == legend, "\(context)")
        }
    }

    /// The unsaved-edits question's legend names its three answers, as its
    /// buttons do (it said "y yes  n/Esc no", and left out d); none is a letter.
    @Test func theUnsavedEditsLegendNamesSaveDiscardAndKeepEditing() {
        let (app, _, _) = makeTestApp(items: [("mail", "ana", "pw")])
        app.send(.editSelected)
        app.send(.focus(.label))
        app.send(.insert("X"))
        app.send(.cancel)
        guard case .confirm = app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(Renderer.legend(for: app) == "Enter save  Ctrl-D discard  Esc keep editing")
    }

    /// The help overlay's sections for the list (``HelpSections``: List,
    /// Find, Preview) and the key table agree: every key they name is bound
    /// on the list, and every key of the list's legend is named.
    @Test func theHelpNamesTheListsKeys() {
        let sections = HelpSections.all.filter { $0.contexts.contains(.list) }
        #expect(sections.map(\.title) == ["List", "Find", "Preview"])
        let named = Set(
            sections.flatMap(\.lines).flatMap { line in
                line.keys.split(separator: ", ").flatMap { $0.split(separator: "/") }.map(String.init)
            })
        let app = app(in: .list)
        let words = ["typing", "words", "marks", "is:", "mouse"]
        for name in named where !words.contains(name) {
            guard let key = Self.key(named: name) else {
                Issue.record("help names \(name), which is no key")
                continue
            }
            #expect(KeyMap.action(for: key, in: app) != nil, "help names \(name), unbound")
        }
        for entry in KeyBindings.legendEntries(for: app) where !entry.hasSuffix(" move") && entry != "type to find" {
            let keys = entry.split(separator: " ").first.map { $0.split(separator: "/").map(String.init) } ?? []
            for key in keys {
                let spelled = key == "Del" ? "Delete" : key
                #expect(named.contains(spelled), "legend \(entry): \(key) not in the help")
            }
        }
    }

    /// The key a help line spells (`Ctrl-B`, `F8`, `PgDn`, `N` after `Ctrl-P/`).
    static func key(named name: String) -> Key? {
        let plain: [String: Key] = [
            "Enter": .enter, "Tab": .tab, "Esc": .escape, "Delete": .delete, "Backspace": .backspace,
            "Up": .up, "Down": .down, "Left": .left, "Right": .right, "Home": .home, "End": .end,
            "PgUp": .pageUp, "PgDn": .pageDown, "N": .control("n"), "Shift-Up": .shiftUp, "Shift-Down": .shiftDown,
            "Shift-PgUp": .shiftPageUp, "Shift-PgDn": .shiftPageDown,
        ]
        if let key = plain[name] { return key }
        if name.hasPrefix("Ctrl-"), let c = name.dropFirst(5).first { return .control(Character(c.lowercased())) }
        if name.hasPrefix("Alt-"), let c = name.dropFirst(4).first { return .alt(Character(c.lowercased())) }
        if name.hasPrefix("F"), let n = Int(name.dropFirst()) { return .function(n) }
        return nil
    }
}

/// The Message line is coloured by the message's tone, not by its words.
@Suite struct MessageColourTests {
    /// An unlocked app with one item, and the store, clipboard and clock it uses.
    private func unlockedApp() -> (AppModel, InMemoryStore, FakeClipboard, TestClock) {
        let clock = TestClock()
        let made = makeTestApp(items: [("github.com", "ana", "s3cret")], clock: clock, lockAfter: 0)
        return (made.app, made.store, made.clipboard, clock)
    }

    /// The role of the first cell of `text` on the canvas.
    private func role(of text: String, in canvas: Canvas) -> Role? {
        let needle = Array(text)
        for row in 0..<canvas.rows {
            let line = Array(canvas.line(row))
            guard line.count >= needle.count else { continue }
            for column in 0...(line.count - needle.count) where Array(line[column..<(column + needle.count)]) == needle
            {
                return canvas[row, column].role
            }
        }
        return nil
    }

    @Test func everyRoleHasALookInTheTheme() {
        for role in Role.allCases { #expect(Theme.table[role] != nil, "\(role)") }
    }

    @Test func tonesHaveTheirLooks() {
        #expect(Renderer.role(for: .success) == .info)
        #expect(Renderer.role(for: .info) == .info)
        #expect(Renderer.role(for: .warning) == .warning)
        #expect(Renderer.role(for: .error) == .error)
    }

    @Test func deletedElsewhereIsNotDrawnAsSuccess() throws {
        try #require(unicodeLocale)
        let (app, store, _, clock) = unlockedApp()
        app.send(.openSelected)
        store.externalRemove(ItemKey(service: "github.com", account: "ana"))
        clock.advance(by: 1)
        app.tick()
        #expect(app.mainModel?.form.message.tone == .warning)
        #expect(role(of: "Deleted elsewhere", in: draw(app)) == .warning)
    }

    @Test func clipboardLeftAloneIsNotDrawnAsAnError() throws {
        try #require(unicodeLocale)
        let (app, _, clipboard, clock) = unlockedApp()
        app.send(.copySelected)
        #expect(role(of: "Copied password of", in: draw(app)) == .info)
        clipboard.userCopies("mine")
        clock.advance(by: 45)
        app.tick()
        #expect(app.mainModel?.form.message.tone == .info)
        #expect(role(of: "Clipboard left alone", in: draw(app)) == .info)
    }

    @Test func failuresAreDrawnAsErrors() throws {
        try #require(unicodeLocale)
        let (app, _, clipboard, _) = unlockedApp()
        clipboard.fail(with: .unavailable("none"))
        app.send(.copySelected)
        #expect(role(of: "Copy of the password", in: draw(app)) == .error)
    }

    @Test func theUnlockScreenColoursByToneToo() throws {
        try #require(unicodeLocale)
        let (app, _, _, _) = unlockedApp()
        app.send(.lock)
        #expect(role(of: "Locked", in: draw(app)) == .info)
        app.send(.insert("wrong"))
        app.send(.submit)
        #expect(role(of: "Wrong master password", in: draw(app)) == .error)
    }
}

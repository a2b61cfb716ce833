import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Keys pressed as a user would, each through the key table.
private func press(_ app: AppModel, _ keys: [Key]) {
    for key in keys {
        if let action = KeyMap.action(for: key, in: app) { app.send(action) } else { app.noteInput() }
    }
}

/// Issue 32's safety nets, key by key: Ctrl-Y takes back a Save of any
/// attribute; Ctrl-Q with unsaved edits asks and Esc keeps editing; a new
/// item half typed outlasts the idle lock.
@Suite struct SafetyNetTests {
    static let key = ItemKey(service: "mail", account: "ana")

    /// Each kind of Save (label, URL, notes, kind, password) is undone by
    /// Ctrl-Y from the list: the item is as before, every attribute.
    @Test(arguments: [MainFocus.label, .url, .notes, .password, .kind])
    func ctrlYUndoesASaveOfEachAttribute(field: MainFocus) throws {
        var original = item("mail", "ana", "pw", label: "Old")
        original.url = "https://mail.example"
        original.notes = "first"
        let (app, store, _) = makeTestApp()
        store.externalPut(original)
        app.send(.lock)
        app.send(.insert("pw"))
        app.send(.submit)
        let before = try #require(store.storedItems[Self.key])
        press(app, [.control("e")])
        app.send(.focus(field))
        if field == .kind {
            press(app, [.right])
        } else {
            press(app, [.end, .character("X")])
        }
        press(app, [.control("s")])
        let saved = try #require(store.storedItems[Self.key])
        #expect(saved.revision > before.revision, "\(field): nothing saved")
        #expect(
            saved.label != before.label || saved.url != before.url || saved.notes != before.notes
                || saved.kind != before.kind || saved.secret != before.secret, "\(field)")
        press(app, [.escape, .control("y")])
        let undone = try #require(store.storedItems[Self.key])
        #expect(undone.label == before.label && undone.url == before.url && undone.notes == before.notes, "\(field)")
        #expect(undone.kind == before.kind && undone.secret == before.secret, "\(field)")
        #expect(undone.revision > saved.revision, "\(field): an undo is a new revision")
    }

    /// Ctrl-Q with unsaved edits asks before quitting; Esc keeps editing,
    /// the edits kept; Ctrl-D quits without them.
    @Test func ctrlQWithUnsavedEditsAsks() throws {
        let (app, store, _) = makeTestApp(items: [("mail", "ana", "pw")])
        press(app, [.control("e")])
        app.send(.focus(.label))
        press(app, [.character("W")])
        #expect(app.mainModel?.form.hasUnsavedEdits == true)
        press(app, [.control("q")])
        #expect(!app.shouldQuit)
        guard case .confirm(let dialog) = app.overlay, case .leaveEditor(.quit) = dialog.purpose else {
            Issue.record("Ctrl-Q did not ask: \(String(describing: app.overlay))")
            return
        }
        #expect(!app.shouldQuit)
        press(app, [.escape])
        #expect(!app.shouldQuit && app.overlay == nil)
        #expect(app.mainModel?.form.label.text == "W" && app.mainModel?.form.hasUnsavedEdits == true)
        press(app, [.control("q"), .control("d")])
        #expect(app.shouldQuit)
        #expect(store.storedItems[Self.key]?.label == nil)
    }

    /// A new item half typed (not yet saved) outlasts the idle lock: after
    /// the unlock the editor shows it again, and Save adds it.
    @Test func aNewItemHalfTypedOutlastsTheIdleLock() throws {
        let clock = TestClock()
        let (app, store, _) = makeTestApp(items: [("mail", "ana", "pw")], clock: clock, lockAfter: 10)
        press(app, [.control("o")])
        for c in "bank" { press(app, [.character(c)]) }
        press(app, [.tab])
        for c in "bo" { press(app, [.character(c)]) }
        clock.advance(by: 10)
        app.tick()
        #expect(app.unlockModel != nil)
        #expect(app.unlockModel?.message.text.contains("kept") == true, "\(app.unlockModel?.message.text ?? "")")
        app.send(.insert("pw"))
        app.send(.submit)
        let main = try #require(app.mainModel)
        #expect(main.form.service.text == "bank" && main.form.userID.text == "bo")
        #expect(main.form.hasUnsavedEdits)
        // No password typed: Save asks about the empty one, Enter stores it.
        press(app, [.control("s")])
        guard case .confirm(let dialog) = app.overlay, dialog.purpose == .saveEmptySecret else {
            Issue.record("Save did not ask about the empty password: \(main.form.message.text)")
            return
        }
        press(app, [.enter])
        #expect(store.storedItems[ItemKey(service: "bank", account: "bo")] != nil, "\(main.form.message.text)")
    }
}

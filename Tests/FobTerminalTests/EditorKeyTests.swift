import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The list's keys pressed while the editor has focus: each works there or
/// says why not, and none types into or changes the open item (issue 32:
/// Ctrl-O did nothing in the editor, so the next item went into the open one).
@Suite struct EditorKeyTests {
    /// Presses `key` as the terminal does: through the key map.
    private func press(_ key: Key, _ app: AppModel) {
        if let action = KeyMap.action(for: key, in: app) { app.send(action) }
    }

    /// Types `text` one character at a time, as a user does.
    private func type(_ text: String, _ app: AppModel) {
        for c in text { press(.character(c), app) }
    }

    /// An app showing its one saved item in the editor, focus on `focus`.
    private func editing(_ focus: MainFocus) -> (AppModel, InMemoryStore) {
        let (app, store, _) = makeTestApp(items: [("dropbox", "ana", "Dr0p-pass")])
        press(.control("e"), app)
        app.send(.focus(focus))
        return (app, store)
    }

    /// The user's sequence: save one item, Ctrl-O, type another, Ctrl-S.
    /// Two items; the first unchanged.
    @Test func ctrlOAfterSavingStartsAnotherItem() throws {
        let (app, store, _) = makeTestApp()
        press(.control("o"), app)
        type("dropbox", app)
        press(.tab, app)
        type("ana", app)
        press(.tab, app)
        type("Dr0p-pass", app)
        press(.control("s"), app)
        let saved = try store.item(ItemKey(service: "dropbox", account: "ana"))
        #expect(saved.secret == SecretBytes(utf8: "Dr0p-pass"))
        press(.control("o"), app)
        #expect(app.mainModel?.focus == .service)
        #expect(app.mainModel?.form.service.isEmpty == true)
        type("slack", app)
        press(.tab, app)
        type("ana", app)
        press(.tab, app)
        type("Sl4ck-pass", app)
        press(.control("s"), app)
        let first = try store.item(ItemKey(service: "dropbox", account: "ana"))
        #expect(first.secret == SecretBytes(utf8: "Dr0p-pass"))
        #expect(first.label == saved.label)
        let second = try store.item(ItemKey(service: "slack", account: "ana"))
        #expect(second.secret == SecretBytes(utf8: "Sl4ck-pass"))
    }

    /// Ctrl-O works from every pane: the list, the query and each kind of
    /// editor stop.
    @Test func ctrlOMeansNewItemInEveryPane() {
        for focus: MainFocus in [.service, .password, .notes, .kind, .generator, .saveButton, .accessMode] {
            let (app, _) = editing(focus)
            #expect(KeyMap.action(for: .control("o"), in: app) == .newItem, "\(focus)")
            press(.control("o"), app)
            #expect(app.mainModel?.form.openedKey == nil, "\(focus)")
            #expect(app.mainModel?.focus == .service, "\(focus)")
        }
        let (app, _, _) = makeTestApp(items: [("dropbox", "ana", "pw")])
        app.send(.startFilter)
        #expect(KeyMap.action(for: .control("o"), in: app) == .newItem)
    }

    /// With unsaved edits Ctrl-O asks first (save, discard, keep editing),
    /// as Esc and Ctrl-Q do; keep editing leaves the edits in place.
    @Test func ctrlOWithUnsavedEditsAsksFirst() throws {
        let (app, store) = editing(.label)
        type("X", app)
        press(.control("o"), app)
        guard case .confirm(let dialog) = app.overlay else {
            Issue.record("Ctrl-O with unsaved edits asked nothing")
            return
        }
        #expect(dialog.message.contains("unsaved edits"))
        press(.escape, app)
        #expect(app.mainModel?.form.label.text == "X")
        press(.control("o"), app)
        press(.control("d"), app)
        #expect(app.mainModel?.form.openedKey == nil)
        #expect(app.mainModel?.form.label.isEmpty == true)
        #expect(try store.item(ItemKey(service: "dropbox", account: "ana")).label == nil)
    }

    /// Every key the list binds, pressed in each editor stop, means
    /// something there; those that act on the list's highlight change
    /// nothing in the open item and say that they work on the list.
    @Test func everyListKeyInTheEditorWorksOrSaysWhyNot() throws {
        let listKeys = KeyBindings.table.filter { $0.contexts.contains(.list) }.flatMap { row -> [Key] in
            guard case .these(let keys) = row.keys else { return [] }
            return keys
        }
        for focus: MainFocus in [.service, .kind, .generator, .saveButton] {
            for key in listKeys {
                let (app, _) = editing(focus)
                guard let action = KeyMap.action(for: key, in: app) else {
                    Issue.record("\(key.name) in \(focus) does nothing")
                    continue
                }
                guard case .listKeyInEditor(let name) = action else { continue }
                let before = app.mainModel?.form.service.text
                app.send(action)
                #expect(app.mainModel?.form.service.text == before, "\(key.name) in \(focus)")
                #expect(app.mainModel?.form.hasUnsavedEdits == false, "\(key.name) in \(focus)")
                #expect(app.mainModel?.form.message.text == "\(name) works on the list: Esc goes back to it")
            }
        }
        let (app, _) = editing(.saveButton)
        #expect(KeyMap.action(for: .control("t"), in: app) == .listKeyInEditor("Ctrl-T"))
        #expect(KeyMap.action(for: .control("l"), in: app) == .askLock)
        #expect(KeyMap.action(for: .function(8), in: app) == .logoutWipe(service: nil))
        #expect(KeyMap.action(for: .function(4), in: app) == .showAccessLog)
        #expect(KeyMap.action(for: .function(2), in: app) == .showMessages)
    }
}

import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Four things found by trying the terminal UI by hand (issue 32: no key
/// acts by surprise, every message tells the truth), each pressed through
/// the key map as the terminal does.
@Suite struct HandFoundTests {
    /// Presses `key` as the terminal does: through the key map.
    private func press(_ key: Key, _ app: AppModel) {
        if let action = KeyMap.action(for: key, in: app) { app.send(action) }
    }

    /// Types `text` one character at a time.
    private func type(_ text: String, _ app: AppModel) {
        for c in text { press(.character(c), app) }
    }

    /// After a Save in the editor the status line offers "Ctrl-Y undoes":
    /// Ctrl-Y there undoes that Save (it said "Ctrl-Y works on the list"),
    /// and the editor shows the item as it was.
    @Test func ctrlYUndoesASaveFromTheEditorAsItsMessageOffers() throws {
        let (app, store, _) = makeTestApp(items: [("dropbox", "ana", "Dr0p-pass")])
        press(.control("e"), app)
        app.send(.focus(.password))
        press(.control("u"), app)
        type("N3w-pass", app)
        press(.control("s"), app)
        let key = ItemKey(service: "dropbox", account: "ana")
        #expect(try store.item(key).secret == SecretBytes(utf8: "N3w-pass"))
        #expect(app.mainModel?.form.message.text.contains("Ctrl-Y undoes") == true)
        #expect(KeyMap.action(for: .control("y"), in: app) == .undo)
        press(.control("y"), app)
        #expect(try store.item(key).secret == SecretBytes(utf8: "Dr0p-pass"))
        #expect(app.mainModel?.form.message.text == "Undid the Save of dropbox / ana")
        #expect(app.mainModel?.form.openedKey == key)
        #expect(app.mainModel?.form.hasUnsavedEdits == false)
        #expect(app.mainModel?.focus == .password, "the editor stays open on the item")
    }

    /// A rename saved in the editor and undone there: the editor follows
    /// the item back to its old name, which the list highlights.
    @Test func ctrlYUndoesARenameFromTheEditorAndTheEditorFollows() throws {
        let (app, store, _) = makeTestApp(items: [("dropbox", "ana", "Dr0p-pass")])
        press(.control("e"), app)
        press(.end, app)
        type(".com", app)
        press(.control("s"), app)
        #expect(
            try store.item(ItemKey(service: "dropbox.com", account: "ana")).secret == SecretBytes(utf8: "Dr0p-pass"))
        press(.control("y"), app)
        let old = ItemKey(service: "dropbox", account: "ana")
        #expect(try store.item(old).secret == SecretBytes(utf8: "Dr0p-pass"))
        #expect(app.mainModel?.form.openedKey == old)
        #expect(app.mainModel?.form.service.text == "dropbox")
        #expect(app.mainModel?.list.selectedRow?.service == "dropbox")
    }

    /// Edits typed after the Save are never dropped nor left over a changed
    /// item: Ctrl-Y asks for them to be saved or discarded first, and the
    /// Save stays undoable.
    @Test func ctrlYInTheEditorKeepsEditsTypedSinceTheSave() throws {
        let (app, store, _) = makeTestApp(items: [("dropbox", "ana", "Dr0p-pass")])
        press(.control("e"), app)
        app.send(.focus(.password))
        press(.control("u"), app)
        type("N3w-pass", app)
        press(.control("s"), app)
        app.send(.focus(.label))
        type("x", app)
        press(.control("y"), app)
        let key = ItemKey(service: "dropbox", account: "ana")
        #expect(try store.item(key).secret == SecretBytes(utf8: "N3w-pass"), "nothing undone")
        #expect(app.mainModel?.form.label.text == "x", "the typed edit kept")
        #expect(
            app.mainModel?.form.message.text
                == "Ctrl-Y: your edits are not saved; Ctrl-S saves them, Esc offers to discard them; nothing undone")
        press(.backspace, app)
        press(.control("y"), app)
        #expect(try store.item(key).secret == SecretBytes(utf8: "Dr0p-pass"), "undone once the edit is gone")
    }

    /// The logout review with nothing to tick names only Enter and Esc.
    @Test func anEmptyLogoutReviewsLegendNamesOnlyWhatItOffers() throws {
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.send(.logoutWipe(service: nil))
        #expect(app.overlay == .logoutReview)
        #expect(KeyBindings.legend(for: app) == "Enter lock  Esc cancel")
        // With a token to tick the legend names the ticking and moving keys.
        let (full, store, _) = makeTestApp(items: [("github.com", "ana", "s3cret")])
        store.externalPut(Item(service: "npm", account: "ci", kind: .token, secret: SecretBytes(utf8: "tok")))
        full.tick()
        full.send(.logoutWipe(service: nil))
        #expect(KeyBindings.legend(for: full) == "Up/Down move  Space tick  Enter delete  Esc cancel")
    }

    /// A space typed on the Kind selector (or another choice) changes
    /// nothing: Left/Right change it.
    @Test func aSpaceOnAChoiceChangesNothing() throws {
        let (app, _, _) = makeTestApp(items: [("dropbox", "ana", "Dr0p-pass")])
        press(.control("e"), app)
        app.send(.focus(.kind))
        let kind = app.mainModel?.form.kind
        press(.character(" "), app)
        #expect(app.mainModel?.form.kind == kind)
        #expect(app.mainModel?.form.hasUnsavedEdits == false)
        press(.right, app)
        #expect(app.mainModel?.form.kind != kind)
        press(.left, app)
        #expect(app.mainModel?.form.kind == kind)
        #expect(KeyBindings.legend(for: app).contains("Left/Right change"))
        #expect(!KeyBindings.legend(for: app).contains("Space"))
        for focus: MainFocus in [.fieldHidden, .accessMode, .accessForwarded] {
            app.send(.focus(focus))
            #expect(KeyContext(app) == .choice, "\(focus)")
            #expect(KeyMap.action(for: .character(" "), in: app) == nil, "\(focus)")
        }
    }

    /// "Unlocking…" for a new try does not sit beside the last try's
    /// "Wrong master password".
    @Test func aNewUnlockAttemptClearsTheStaleError() throws {
        try #require(unicodeLocale)
        let app = makeApp(locked: true)
        app.send(.insert("wrong"))
        app.send(.submit)
        #expect(app.unlockModel?.message.text.hasPrefix(UnlockModel.wrongPasswordMessage) == true)
        app.send(.insert("correct horse"))
        var renderer = Renderer(vaultDescription: "~/vault.db")
        renderer.notice = "Unlocking…"
        let text = renderer.render(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        #expect(text.contains("Unlocking…"))
        #expect(!text.contains(UnlockModel.wrongPasswordMessage), "\(text)")
        // Without the notice (the try failed again) the error shows.
        #expect(draw(app, rows: 24, columns: 80).text.contains(UnlockModel.wrongPasswordMessage))
    }
}

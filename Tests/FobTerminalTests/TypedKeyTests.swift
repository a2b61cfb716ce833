import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Keys pressed as the terminal reads them: each mapped by ``KeyMap`` and
/// sent, as the front end does (a key that maps to nothing is input only).
private func press(_ app: AppModel, _ keys: [Key]) {
    for key in keys {
        if let action = KeyMap.action(for: key, in: app) { app.send(action) } else { app.noteInput() }
    }
}

/// `text` typed key by key.
private func type(_ app: AppModel, _ text: String) { press(app, text.map(Key.character)) }

/// Issue 32: the terminal UI never acts by surprise, checked key by key on
/// the view models with the injected clock.
@Suite struct TypedKeyTests {
    private static let items = [
        ("dropbox.com", "ana", "db"), ("github.com", "ana", "gh"), ("netflix.com", "ana", "nf"),
        ("slack.com", "ana", "sl"), ("zoom.us", "", "zm"),
    ]

    /// `dropbox`, `slack`, `netflix` and a master password typed blind (with
    /// Enter) delete, lock, open and rename nothing.
    @Test func typedWordsAndABlindPasswordChangeNothing() {
        let (app, store, _) = makeTestApp(items: Self.items)
        let before = store.storedItems
        for word in ["dropbox", "slack", "netflix", "W", "q", "l", "d", "z", "V", "e", "n", "correct horse battery"] {
            type(app, word)
            press(app, [.enter, .escape])
        }
        #expect(store.storedItems == before)
        #expect(app.mainModel != nil, "still unlocked")
        #expect(!app.shouldQuit)
        #expect(app.overlay == nil)
        #expect(app.mainModel?.form.baseline == nil, "no editor opened")
    }

    /// The query and Enter copy the password: the main job is the query plus one key.
    @Test func theQueryAndEnterCopyThePassword() {
        let (app, _, clipboard) = makeTestApp(items: Self.items)
        type(app, "slack")
        press(app, [.enter])
        #expect(clipboard.contents == "sl")
        #expect(app.mainModel?.form.message == .success("Copied password of slack.com / ana · clears in 45 s"))
    }

    /// Ctrl-F selects the kept query: typing replaces it (`/` appended:
    /// `oauth.e` then `zoom` gave "No matches").
    @Test func ctrlFSelectsTheKeptQuery() throws {
        let (app, _, _) = makeTestApp(items: Self.items)
        type(app, "git")
        press(app, [.control("f")])
        type(app, "zoom")
        let main = try #require(app.mainModel)
        #expect(main.list.filter.text == "zoom")
        #expect(main.list.selectedRow?.service == "zoom.us")
    }

    /// Up on an empty query at the top brings back the earlier queries that
    /// were used (an item found and copied), newest first.
    @Test func upOnAnEmptyQueryRecallsEarlierOnes() throws {
        let (app, _, _) = makeTestApp(items: Self.items)
        let main = try #require(app.mainModel)
        type(app, "git")
        press(app, [.control("b"), .escape])
        type(app, "zoom")
        press(app, [.enter, .escape])
        #expect(main.list.filter.text == "")
        press(app, [.up])
        #expect(main.list.filter.text == "zoom")
        press(app, [.up])
        #expect(main.list.filter.text == "git")
        // Down moves the selection: Up recalls only at the top.
        press(app, [.escape, .down, .up])
        #expect(main.list.filter.text == "")
    }

    /// A master password typed at the list by mistake is not kept in the
    /// query history: cleared with Esc, or with Enter finding nothing, Up
    /// on the empty query does not bring it back. Only a query that found
    /// an item the user then copied or opened is kept.
    @Test func aQueryNotUsedIsNotKept() throws {
        let (app, _, clipboard) = makeTestApp(items: Self.items)
        let main = try #require(app.mainModel)
        type(app, "correct horse battery")
        #expect(main.list.rows.isEmpty)
        press(app, [.enter])
        #expect(clipboard.contents == nil, "nothing found, nothing copied")
        press(app, [.escape])
        type(app, "slack")
        press(app, [.escape])
        #expect(main.list.queryHistory.isEmpty)
        press(app, [.up])
        #expect(main.list.filter.text == "", "nothing to recall")
        type(app, "dropb")
        press(app, [.control("e"), .escape, .escape])
        #expect(main.list.queryHistory == ["dropb"])
        type(app, "correct horse")
        press(app, [.escape, .up])
        #expect(main.list.filter.text == "dropb")
        press(app, [.up])
        #expect(main.list.filter.text == "dropb", "the only query kept")
    }

    /// Delete asks; letters do not answer; Enter deletes; Ctrl-Y puts it back.
    @Test func deleteAsksAndOnlyEnterDeletes() {
        let (app, store, _) = makeTestApp(items: Self.items)
        press(app, [.delete])
        guard case .confirm(let dialog) = app.overlay else {
            Issue.record("Delete did not ask")
            return
        }
        #expect(dialog.message == "Delete dropbox.com / ana? Ctrl-Y undoes it for 10 s.")
        type(app, "yes")
        #expect(store.storedItems.count == 5)
        press(app, [.enter])
        #expect(store.storedItems.count == 4)
        press(app, [.control("y")])
        #expect(store.storedItems.count == 5)
    }

    /// Ctrl-L asks; Enter locks. Ctrl-Q quits at once without an agent, and
    /// asks while the agent keeps the vault unlocked: Ctrl-Q again locks too.
    @Test func lockAndQuitAsk() {
        let (app, store, _) = makeTestApp(items: Self.items)
        press(app, [.control("l")])
        #expect(app.mainModel != nil)
        press(app, [.escape])
        #expect(app.mainModel != nil)
        press(app, [.control("l"), .enter])
        #expect(app.mainModel == nil, "locked")
        let (quitting, agentStore, _) = makeTestApp(items: Self.items)
        agentStore.agentState = .unlocked(locksAt: nil)
        press(quitting, [.control("q")])
        guard case .confirm(let dialog) = quitting.overlay else {
            Issue.record("Ctrl-Q did not say the vault stays unlocked")
            return
        }
        #expect(dialog.message == "The fob agent keeps the vault unlocked after Fob quits.")
        #expect(!quitting.shouldQuit)
        press(quitting, [.control("q")])
        #expect(quitting.shouldQuit)
        #expect(quitting.mainModel == nil, "locked before quitting")
        _ = store
    }

    /// Enter on item 1, Esc, three rows down, Tab: the editor shows the
    /// highlighted item; `X` and Ctrl-S rename it, not item 1.
    @Test func theHighlightedItemIsTheOneEdited() throws {
        let (app, store, _) = makeTestApp(items: Self.items)
        press(app, [.control("e"), .escape, .down, .down, .down, .tab])
        let main = try #require(app.mainModel)
        #expect(main.form.baseline?.key == ItemKey(service: "slack.com", account: "ana"))
        press(app, [.end, .character("X"), .control("s")])
        #expect(store.storedItems[ItemKey(service: "slack.comX", account: "ana")] != nil)
        #expect(store.storedItems[ItemKey(service: "dropbox.com", account: "ana")] != nil)
        // The rename can be undone, by its new key.
        press(app, [.escape, .control("y")])
        #expect(store.storedItems[ItemKey(service: "slack.com", account: "ana")] != nil)
        #expect(store.storedItems[ItemKey(service: "slack.comX", account: "ana")] == nil)
    }

    /// After "No edits to save" the editor has nothing unsaved: no ● and
    /// Esc leaves without asking.
    @Test func noEditsToSaveLeavesNothingUnsaved() throws {
        let (app, _, _) = makeTestApp(items: Self.items)
        press(app, [.control("e"), .end, .character("x"), .backspace, .control("s")])
        let main = try #require(app.mainModel)
        #expect(main.form.message == .info("No edits to save in dropbox.com / ana"))
        #expect(!main.form.hasUnsavedEdits)
        press(app, [.escape])
        #expect(app.overlay == nil)
        #expect(main.focus == .list)
    }

    /// Undo checks the revision: a change made elsewhere after the Save is
    /// asked about, never overwritten silently; Enter puts the item back
    /// over it at a higher revision.
    @Test func undoAsksWhenTheItemChangedSince() throws {
        let (app, store, _) = makeTestApp(items: Self.items)
        let key = ItemKey(service: "dropbox.com", account: "ana")
        press(app, [.control("e"), .tab, .tab, .character("n"), .character("e"), .character("w"), .control("s")])
        #expect(store.storedItems[key]?.secret == SecretBytes(utf8: "new"))
        var changed = try #require(store.storedItems[key])
        changed.secret = SecretBytes(utf8: "later")
        store.externalPut(changed)
        let laterRevision = try #require(store.storedItems[key]?.revision)
        press(app, [.escape, .control("y")])
        guard case .confirm(let dialog) = app.overlay, dialog.purpose == .undoOverChanges else {
            Issue.record("undo did not ask: \(String(describing: app.overlay))")
            return
        }
        #expect(store.storedItems[key]?.secret == SecretBytes(utf8: "later"))
        press(app, [.escape])
        #expect(store.storedItems[key]?.secret == SecretBytes(utf8: "later"))
        _ = laterRevision
    }
}

/// The one-time code the preview shows, without its seconds left.
private func shownCode(_ app: AppModel, _ clock: TestClock) -> String? {
    guard let line = app.mainModel?.preview?.lines(at: clock.now).first(where: { $0.label == "2FA code" }) else {
        return nil
    }
    return line.text.components(separatedBy: " · ").first
}

/// Issue 32's copy messages: nothing copied is never ✓, an expired token
/// is copied with `!`, a one-time code near its end is not copied to die.
@Suite struct CopyMessageTests {
    @Test func anEmptyUserIDIsNotCopied() {
        let (app, _, clipboard) = makeTestApp(items: [("zoom.us", "", "pw")])
        press(app, [.control("b")])
        #expect(clipboard.contents == nil)
        #expect(app.mainModel?.form.message == .warning("zoom.us has no user ID: nothing copied"))
    }

    @Test func anExpiredTokenIsCopiedWithAWarning() {
        let clock = TestClock()
        let (app, store, clipboard) = makeTestApp(clock: clock)
        store.externalPut(
            Item(service: "api", account: "ci", kind: .token, secret: SecretBytes(utf8: jwt(exp: 1_000_000_000))))
        app.tick()
        press(app, [.enter])
        #expect(clipboard.contents == jwt(exp: 1_000_000_000))
        let message = app.mainModel?.form.message
        #expect(message?.tone == .warning)
        #expect(message?.text.hasPrefix("Copied token of api / ci · clears in 45 s; it expired ") == true)
    }

    /// With 3 s left the next code is copied, and cleared when it rolls over
    /// (it stayed 45 s after it died).
    @Test func aCodeNearItsEndCopiesTheNextAndClearsAtRollOver() throws {
        // 2026-01-01 00:00:27 UTC: 3 s before the 30-second step ends.
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_767_225_627))
        let (app, store, clipboard) = makeTestApp(clock: clock)
        var seeded = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "pw"))
        seeded.oneTimePassword = SecretBytes(utf8: "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP")
        store.externalPut(seeded)
        app.tick()
        let dying = try #require(shownCode(app, clock))
        press(app, [.control("t")])
        #expect(clipboard.contents != nil)
        #expect(clipboard.contents != dying.replacingOccurrences(of: " ", with: ""))
        let copied = "Copied next one-time code of mail / ana (valid in 3 s) · clears in 33 s"
        #expect(app.mainModel?.form.message.text == copied)
        // Once the step rolls over, the preview shows the code that was copied.
        clock.advance(by: 3)
        app.tick()
        let next = try #require(shownCode(app, clock))
        #expect(clipboard.contents == next.replacingOccurrences(of: " ", with: ""))
        clock.advance(by: 30)
        app.tick()
        #expect(clipboard.contents == nil)
    }

    /// A note item's copy says it copied the note's text (its secret).
    @Test func aNotesCopySaysWhatItCopied() {
        let (app, store, clipboard) = makeTestApp()
        store.externalPut(Item(service: "wifi", account: "", kind: .note, secret: SecretBytes(utf8: "key: 1234")))
        app.tick()
        press(app, [.enter])
        #expect(clipboard.contents == "key: 1234")
        #expect(app.mainModel?.form.message.text.hasPrefix("Copied note text (the secret) of wifi") == true)
    }
}

/// Issue 32: the header counts down the idle lock's last minute.
@Suite struct IdleCountdownTests {
    @Test func theHeaderCountsDownTheLastMinute() throws {
        try #require(unicodeLocale)
        let clock = TestClock()
        let (app, _, _) = makeTestApp(items: [("mail", "ana", "pw")], clock: clock, lockAfter: 300)
        #expect(!draw(app).line(0).contains("locks in"))
        clock.advance(by: 258)
        app.tick()
        #expect(draw(app).line(0).contains("unlocked · locks in 42 s"))
    }
}

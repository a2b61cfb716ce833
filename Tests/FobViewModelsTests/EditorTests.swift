import FobSessions
import FobStore
import FobTestSupport
import FobTokens
import Foundation
import Testing

@testable import FobViewModels

/// Issue 20's editor defects and rules: each test failed before the fix.
@Suite struct EditorTests {
    static let key = ItemKey(service: "mail", account: "ana")

    /// (a) A typed form naming a stored item, Password empty: Save keeps the secret.
    @Test func typedFormOnAStoredItemKeepsItsSecret() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.newItem, .insert("mail"), .focus(.userID), .insert("ana"), .focus(.label), .insert("Work"), .save)
        let stored = try #require(h.store.storedItems[Self.key])
        #expect(stored.secret == SecretBytes(utf8: "hunter2"))
        #expect(stored.label == "Work")
    }

    /// (a) The same after Retrieve.
    @Test func retrieveThenSaveKeepsTheSecret() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.newItem, .insert("mail"), .focus(.userID), .insert("ana"), .retrieve, .save)
        #expect(h.app.overlay == nil)
        #expect(h.store.storedItems[Self.key]?.secret == SecretBytes(utf8: "hunter2"))
    }

    /// An empty secret for a new item is stored only after the question.
    @Test func newItemWithAnEmptyPasswordAsksFirst() throws {
        let h = try Harness.unlocked()
        h.send(.newItem, .insert("wifi"), .save)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.purpose == .saveEmptySecret)
        #expect(h.store.storedItems.isEmpty)
        h.send(.confirm)
        #expect(h.store.storedItems[ItemKey(service: "wifi", account: "")]?.secret == SecretBytes(utf8: ""))
    }

    /// (b) Save of an opened item that changed elsewhere writes nothing and asks.
    @Test func saveAfterAChangeElsewhereWritesNothingAndAsks() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw", label: "Old")])
        h.send(.editSelected, .focus(.url), .insert("https://mail.example"))
        var other = item("mail", "ana", "pw", label: "New from the CLI", modified: h.app.now)
        other.comment = "set elsewhere"
        h.store.externalPut(other)
        h.send(.save)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.purpose == .saveOverChanges)
        #expect(dialog.message.contains("label, notes"))
        #expect(h.store.storedItems[Self.key]?.url == nil)
        #expect(h.form.url.text == "https://mail.example")
        // Yes: only the user's edit is written over the other writer's.
        h.send(.confirm)
        let stored = try #require(h.store.storedItems[Self.key])
        #expect(stored.url == "https://mail.example")
        #expect(stored.label == "New from the CLI")
        #expect(stored.notes == "set elsewhere")
    }

    /// (b) Without edits of its own, Save does not write back the old label.
    @Test func saveWritesOnlyTheFieldsEdited() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw", label: "Old")])
        h.send(.editSelected, .focus(.url), .insert("u"), .save)
        #expect(h.store.storedItems[Self.key]?.url == "u")
        h.store.externalPut(item("mail", "ana", "pw", label: "Newer", modified: h.app.now.addingTimeInterval(5)))
        h.app.tick()
        h.send(.focus(.notes), .insert("n"), .save)
        if case .confirm = h.app.overlay { h.send(.confirm) }
        #expect(h.store.storedItems[Self.key]?.label == "Newer")
    }

    /// (c) A service with a line break or an escape character is not renamed by a Save without edits.
    @Test func controlCharactersInTheKeyAreNotRenamed() throws {
        let h = try Harness.unlocked(items: [item("we\nird\u{1B}[1m", "ana\u{1B}", "pw")])
        let key = ItemKey(service: "we\nird\u{1B}[1m", account: "ana\u{1B}")
        h.send(.editSelected, .focus(.label), .insert("L"), .save)
        #expect(h.store.storedItems.keys.map { $0 } == [key])
        #expect(h.store.storedItems[key]?.label == "L")
        h.send(.save)
        #expect(h.store.storedItems.keys.map { $0 } == [key])
    }

    /// Enter on the list puts focus on Service, not Password: a habitual `c` does not reach the secret.
    @Test func enterOnTheListDoesNotFocusPassword() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.openSelected)
        #expect(h.main.focus != .password)
        #expect(h.form.editorTitle == "Editing mail / ana")
        h.send(.insert("c"))
        #expect(h.form.password.isEmpty)
        #expect(h.form.editorTitle == "● Editing mail / ana")
    }

    /// An empty user ID is a value; an empty service is refused with the CLI's words.
    @Test func emptyUserIDSavesEmptyServiceIsRefused() throws {
        let h = try Harness.unlocked(items: [item("keepass", "", "pw")])
        h.send(.editSelected, .focus(.label), .insert("imported"), .save)
        #expect(h.store.storedItems[ItemKey(service: "keepass", account: "")]?.label == "imported")
        h.send(.focus(.service), .clearField, .save)
        #expect(h.message == "Service: \(FieldInputError.emptyService.description); nothing saved")
        #expect(h.main.focus == .service)
        #expect(h.store.storedItems.keys.map(\.service) == ["keepass"])
    }

    /// Field names the CLI refuses are refused with its words.
    @Test func fieldNamesFollowTheCLIRules() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        for name in ["totp", "a=b"] {
            h.send(.editSelected, .focus(.fieldName), .insert(name), .focus(.fieldValue), .insert("v"), .save)
            let expected: FieldInputError = name == "totp" ? .reservedName(name) : .badName(name)
            #expect(h.message == "Field name: \(expected.description); nothing saved")
            #expect(h.store.storedItems[Self.key]?.customFields.isEmpty == true)
            h.send(.cancel, .discardEdits)
        }
    }

    /// Kind oauth only for a secret the oauth commands can use.
    @Test func kindOAuthNeedsATokenSet() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.editSelected, .focus(.kind))
        while h.form.kind != .oauth { h.send(.cycleKind(1)) }
        h.send(.save)
        #expect(h.message.hasPrefix("Kind oauth: the secret is not a token set"))
        #expect(h.store.storedItems[Self.key]?.kind == .password)
        let stored = oauthItem("idp", "ana", expiresAt: 2_000_000_000)
        let h2 = try Harness.unlocked(items: [stored])
        h2.send(.editSelected, .focus(.label), .insert("IdP"), .save)
        #expect(h2.store.storedItems[ItemKey(stored)]?.label == "IdP")
    }

    /// The form does not go stale: deleting the item it shows empties it.
    @Test func deletingTheOpenedItemEmptiesTheForm() throws {
        let h = try Harness.unlocked(items: [item("netflix.com", "ana", "pw"), item("zoom.us", "ana", "pw2")])
        h.send(.editSelected, .focus(.list), .moveSelection(1), .deleteSelected)
        #expect(h.form.service.text == "netflix.com")
        h.send(.moveSelection(-1), .deleteSelected)
        #expect(h.form.service.isEmpty)
        #expect(h.form.retrievedPassword == nil)
        #expect(h.form.baseline == nil)
    }

    /// Esc with unsaved edits asks; Discard drops them, Save writes them, n keeps editing.
    @Test func escWithUnsavedEditsAsks() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.editSelected, .focus(.label), .insert("X"), .cancel)
        guard case .confirm(let dialog) = h.app.overlay, case .leaveEditor(.list) = dialog.purpose else {
            Issue.record("no question")
            return
        }
        h.send(.dismiss)
        #expect(h.main.focus == .label)
        #expect(h.form.label.text == "X")
        h.send(.cancel, .confirm)
        #expect(h.store.storedItems[Self.key]?.label == "X")
        #expect(h.main.focus == .list)
        h.send(.editSelected, .focus(.label), .insert("Y"), .cancel, .discardEdits)
        #expect(h.store.storedItems[Self.key]?.label == "X")
        #expect(h.form.label.text == "X")
        #expect(h.main.focus == .list)
    }
    /// Shift-Tab from Service (or Tab from Forwarded, the last stop drawn
    /// while the rule names no program) to the list asks
    /// as Esc does: the edits were left hidden behind the preview, and `q`
    /// then quit without a word.
    @Test func tabbingOutOfTheEditorWithUnsavedEditsAsks() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.editSelected, .insert("-new"), .focusPrevious)
        guard case .confirm(let dialog) = h.app.overlay, case .leaveEditor(.list) = dialog.purpose else {
            Issue.record("no question")
            return
        }
        h.send(.dismiss)
        #expect(h.main.focus == .service)
        #expect(h.form.service.text == "mail-new")
        h.send(.focus(.accessForwarded), .focusNext, .discardEdits)
        #expect(h.main.focus == .list)
        #expect(h.form.service.text == "mail")
        // Without edits Shift-Tab goes straight back to the list.
        h.send(.editSelected, .focusPrevious)
        #expect(h.app.overlay == nil)
        #expect(h.main.focus == .list)
    }
}

/// `d` deletes at once and `z` restores exactly, within 10 s.
@Suite struct UndoTests {
    @Test func deleteThenUndoRestoresTheItemExactly() throws {
        var stored = item("zoom.us", "", "pw")
        stored.customFields = [CustomField(name: "pin", text: "1234", isHidden: true)]
        stored.oneTimePassword = SecretBytes(utf8: ItemEditTests.seed)
        let h = try Harness.unlocked(items: [stored])
        stored = try #require(h.store.storedItems[ItemKey(stored)])
        h.send(.deleteSelected)
        #expect(h.app.overlay == nil)
        #expect(h.message == "Deleted zoom.us — Ctrl-Y undoes (10 s)")
        #expect(h.store.storedItems.isEmpty)
        h.clock.advance(by: 9)
        h.app.tick()
        h.send(.undo)
        #expect(h.message == "Restored zoom.us")
        // Exactly, at the revision after its last: the revision line goes on.
        stored.revision += 1
        #expect(h.store.storedItems[ItemKey(stored)] == stored)
        #expect(h.list.rows.map(\.service) == ["zoom.us"])
    }

    /// `d d` (two quick deletes) lost the first item for good: `z` brought
    /// back only the second. Each delete is undone, newest first.
    @Test func twoQuickDeletesAreBothUndone() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        let stored = h.store.storedItems
        h.send(.deleteSelected, .deleteSelected)
        #expect(h.store.storedItems.isEmpty)
        h.clock.advance(by: 5)
        h.app.tick()
        h.send(.undo)
        #expect(h.message == "Restored zoom.us / bo")
        h.send(.undo)
        #expect(h.message == "Restored mail / ana")
        #expect(
            h.store.storedItems
                == stored.mapValues {
                    var item = $0
                    item.revision += 1
                    return item
                })
        h.send(.undo)
        #expect(h.message == "Nothing to undo")
    }

    /// Typing a word without `/` ("dropbox": d deletes, then o and r only
    /// say they do not apply) pushed the delete's "Ctrl-Y undoes" off the status
    /// line: the seconds left to undo stay in the list's title meanwhile.
    @Test func theUndoOfferStaysInViewWhateverFollows() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        #expect(h.app.mainModel?.undoSecondsLeft == nil)
        h.send(.deleteSelected)
        #expect(h.app.mainModel?.undoSecondsLeft == 10)
        h.send(.copyOneTimeCode)
        #expect(!h.message.contains("Ctrl-Y undoes"), "\(h.message)")
        h.clock.advance(by: 3.5)
        h.app.tick()
        #expect(h.app.mainModel?.undoSecondsLeft == 7)
        h.send(.undo)
        #expect(h.message == "Restored mail / ana")
        #expect(h.app.mainModel?.undoSecondsLeft == nil)
        h.send(.deleteSelected)
        h.clock.advance(by: 10)
        h.app.tick()
        #expect(h.app.mainModel?.undoSecondsLeft == nil)
    }

    /// A restored item started again at revision 1: a writer that had read
    /// it at revision 1 before the delete could then write over it
    /// unnoticed. It comes back at the revision after its last.
    @Test func aRestoredItemKeepsItsRevisionLine() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.store.externalPut(item("mail", "ana", "pw2"))
        h.store.externalPut(item("mail", "ana", "pw3"))
        let key = ItemKey(service: "mail", account: "ana")
        #expect(h.store.storedItems[key]?.revision == 3)
        h.send(.moveSelection(0))
        h.send(.deleteSelected)
        h.send(.undo)
        #expect(h.message == "Restored mail / ana")
        #expect(h.store.storedItems[key]?.revision == 4)
    }

    /// Each change keeps its own 10 s: an older delete is no longer undone
    /// once its own time is up, even while a newer one still is.
    @Test func eachDeleteKeepsItsOwnTenSeconds() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        h.send(.deleteSelected)
        h.clock.advance(by: 6)
        h.app.tick()
        h.send(.deleteSelected)
        h.clock.advance(by: 6)
        h.app.tick()
        h.send(.undo)
        #expect(h.message == "Restored zoom.us / bo")
        h.send(.undo)
        #expect(h.message == "Nothing to undo")
        #expect(h.store.storedItems.keys.map(\.service) == ["zoom.us"])
    }

    @Test func undoEndsAfterTenSeconds() throws {
        let h = try Harness.unlocked(items: [item("zoom.us", "ana", "pw")])
        h.send(.deleteSelected)
        h.clock.advance(by: 10)
        h.app.tick()
        h.send(.undo)
        #expect(h.message == "Nothing to undo")
        #expect(h.store.storedItems.isEmpty)
    }

    @Test func lockWipesTheUndo() throws {
        let h = try Harness.unlocked(items: [item("zoom.us", "ana", "pw")])
        h.send(.deleteSelected, .lock)
        h.unlock()
        h.send(.undo)
        #expect(h.message == "Nothing to undo")
    }

    @Test func undoOfASaveThatReplacedTheSecret() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "old")])
        let before = try #require(h.store.storedItems[ItemKey(service: "mail", account: "ana")])
        h.send(.editSelected, .focus(.password), .insert("new"), .save)
        #expect(h.store.storedItems[ItemKey(before)]?.secret == SecretBytes(utf8: "new"))
        #expect(h.message.hasSuffix("Ctrl-Y undoes (10 s)"))
        h.send(.focus(.list), .undo)
        // The item as it was, at a revision past the Save's (as the vault gives it).
        var restored = try #require(h.store.storedItems[ItemKey(before)])
        #expect(restored.revision == before.revision + 2)
        restored.revision = before.revision
        #expect(restored == before)
        // Undo is a list key: the list keeps focus (it moved into the editor's
        // Service field, where the next c or d was typed as text).
        #expect(h.main.focus == .list)
        #expect(h.message == "Undid the Save of mail / ana")
    }

    @Test func undoOfADeleteKeepsTheListFocused() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        h.send(.editSelected, .cancel, .moveSelection(1), .deleteSelected, .undo)
        #expect(h.main.focus == .list)
        #expect(h.main.list.selectedRow?.key == ItemKey(service: "zoom.us", account: "bo"))
    }
}

/// Issue 20: `l` and the idle lock lock every process of the session; an
/// agent that stops is not a lock made elsewhere; the header's lock state.
@Suite struct LockMeansLockedTests {
    @Test func lAndTheIdleLockLockTheSession() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")], lockAfter: 60)
        h.send(.lock)
        #expect(h.store.calls["lockSession"] == 1)
        #expect(h.store.isLocked)
        h.unlock()
        h.clock.advance(by: 60)
        h.app.tick()
        #expect(h.app.unlockModel != nil)
        #expect(h.store.calls["lockSession"] == 2)
    }

    @Test func aStoppedAgentIsNotALockElsewhere() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.store.agentState = .stopped
        h.store.externalLock()
        h.app.tick()
        #expect(h.app.unlockModel?.message.text.hasPrefix("The agent stopped") == true)
        #expect(h.store.calls["lockSession"] == nil)
        let other = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        other.store.agentState = .locked
        other.store.externalLock()
        other.app.tick()
        #expect(other.app.unlockModel?.message.text == "Locked elsewhere")
    }

    @Test func theHeaderSaysWhenTheVaultLocks() throws {
        let h = try Harness.unlocked(lockAfter: 300)
        #expect(h.app.lockState.unlocked)
        #expect(h.app.lockState.locksAt == h.clock.now.addingTimeInterval(300))
        h.store.agentState = .unlocked(locksAt: h.clock.now.addingTimeInterval(120))
        #expect(h.app.lockState.locksAt == h.clock.now.addingTimeInterval(120))
        #expect(h.app.lockStateText.hasPrefix("unlocked · locks "))
        h.send(.lock)
        #expect(h.app.lockStateText == "locked")
    }
}

/// Issue 20 (b): the editor follows a change made elsewhere while nothing is typed.
@Suite struct EditorFollowsTests {
    @Test func anUneditedFormShowsTheItemAsStoredNow() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw", label: "Old")])
        h.send(.editSelected)
        h.store.externalPut(item("mail", "ana", "pw", label: "New", modified: h.clock.now))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.form.label.text == "New")
        #expect(h.message == "mail / ana changed elsewhere: the editor shows it as stored now")
        #expect(h.main.focus == .service)
    }

    @Test func unsavedEditsAreKept() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw", label: "Old")])
        h.send(.editSelected, .focus(.url), .insert("u"))
        h.store.externalPut(item("mail", "ana", "pw", label: "New", modified: h.clock.now))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.form.url.text == "u")
        #expect(h.form.label.text == "Old")
        #expect(h.message == "mail / ana changed elsewhere; your edits are kept and Save will ask")
    }
}

/// Found by hand at 80×24: `z` on the list left focus in the editor, so the next key typed into Service.
@Suite struct UndoKeepsFocusTests {
    @Test func undoFromTheListKeepsFocusOnTheList() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "", "x")])
        h.send(.editSelected, .cancel, .moveSelection(1), .deleteSelected, .undo)
        #expect(h.main.focus == .list)
        #expect(h.form.editorTitle == "Editing mail / ana")
        h.send(.openSelected)
        #expect(h.form.editorTitle == "Editing zoom.us")
    }
}

/// `q` with unsaved edits asks first: y saves then quits, d quits without them.
@Suite struct QuitWithUnsavedEditsTests {
    @Test func quitAsksFirst() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.editSelected, .focus(.label), .insert("L"), .focus(.list), .quit)
        #expect(!h.app.shouldQuit)
        guard case .confirm(let dialog) = h.app.overlay, case .leaveEditor(.quit) = dialog.purpose else {
            Issue.record("no question")
            return
        }
        h.send(.confirm)
        #expect(h.store.storedItems[EditorTests.key]?.label == "L")
        #expect(h.app.shouldQuit)
        let other = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        other.send(.editSelected, .focus(.label), .insert("L"), .focus(.list), .quit, .discardEdits)
        #expect(other.app.shouldQuit)
        #expect(other.store.storedItems[EditorTests.key]?.label == nil)
    }
}

/// Save is a conditional write on the revision it read: another process
/// writing between that read and the write is refused, never overwritten.
@Suite struct SaveRaceTests {
    static let key = ItemKey(service: "mail", account: "ana")

    /// Another write lands after Save read the item and before it wrote.
    @Test func aWriteBetweenReadAndWriteIsNotOverwritten() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw", label: "Old")])
        h.send(.editSelected, .focus(.label), .clearField, .insert("Mine"))
        let store = h.store
        store.beforeWrite = {
            store.beforeWrite = nil
            store.externalPut(item("mail", "ana", "pw2", label: "From the CLI"))
        }
        h.send(.save)
        let stored = try #require(h.store.storedItems[Self.key])
        #expect(stored.label == "From the CLI")
        #expect(stored.secret == SecretBytes(utf8: "pw2"))
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.purpose == .saveOverChanges)
        #expect(dialog.message.hasPrefix("Another process wrote mail / ana as you saved; nothing was written."))
        #expect(h.message == "mail / ana changed elsewhere: nothing saved; your edits are kept")
        #expect(h.form.label.text == "Mine")
        // r: the item as stored now, the edits dropped.
        h.send(.discardEdits)
        #expect(h.app.overlay == nil)
        #expect(h.form.label.text == "From the CLI")
        #expect(h.message == "Reloaded mail / ana as stored now; your edits were dropped")
    }

    /// Keep editing, then y: only the user's edit is written over the other writer's.
    @Test func keepThenWriteOverWritesOnlyTheEdit() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw", label: "Old")])
        h.send(.editSelected, .focus(.url), .insert("https://mail.example"))
        let store = h.store
        store.beforeWrite = {
            store.beforeWrite = nil
            store.externalPut(item("mail", "ana", "pw", label: "From the CLI"))
        }
        h.send(.save, .dismiss)
        #expect(h.app.overlay == nil)
        #expect(h.form.url.text == "https://mail.example")
        #expect(h.store.storedItems[Self.key]?.url == nil)
        h.send(.save)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.message.hasPrefix("Another process changed the label of mail / ana since you opened it."))
        h.send(.confirm)
        let stored = try #require(h.store.storedItems[Self.key])
        #expect(stored.url == "https://mail.example")
        #expect(stored.label == "From the CLI")
    }

    /// A new item typed while another process adds one at the same key.
    @Test func aNewItemAddedElsewhereMeanwhileIsNotOverwritten() throws {
        let h = try Harness.unlocked()
        h.send(.newItem, .insert("mail"), .focus(.userID), .insert("ana"), .focus(.password), .insert("mine"))
        let store = h.store
        store.beforeWrite = {
            store.beforeWrite = nil
            store.externalPut(item("mail", "ana", "theirs"))
        }
        h.send(.save)
        #expect(h.store.storedItems[Self.key]?.secret == SecretBytes(utf8: "theirs"))
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.purpose == .saveOverChanges)
    }

    /// "Changed elsewhere" is decided by revision, not by modification date.
    @Test func changedElsewhereComparesRevisions() {
        let date = Date(timeIntervalSince1970: 1_000_000)
        var opened = item("mail", "ana", "pw", modified: date)
        opened.revision = 3
        var rewritten = opened
        rewritten.revision = 4
        #expect(Editor.changedElsewhere(opened: opened, current: rewritten) == ["other attributes"])
        var sameRevision = opened
        sameRevision.modified = date.addingTimeInterval(60)
        #expect(Editor.changedElsewhere(opened: opened, current: sameRevision).isEmpty)
    }
}

/// Issue 30: a Save asks the store for the item once and writes once; the
/// list and the editor follow from the write, with no full reload.
@Suite struct SaveRequestCountTests {
    @Test func aSaveMakesAtMostTwoRequestsAndNoReload() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "old"), item("web", "bo", "pw")])
        h.send(.editSelected, .focus(.label), .insert("Work"), .focus(.password), .insert("new"))
        let before = h.store.calls
        h.send(.save)
        let after = h.store.calls
        func delta(_ name: String) -> Int { (after[name] ?? 0) - (before[name] ?? 0) }
        #expect(h.message.hasPrefix("Saved (replaced the password of mail / ana)"))
        #expect(delta("allItems") == 0, "no full reload")
        #expect(delta("item") + delta("update") + delta("save") <= 2, "\(after) after \(before)")
        // The update's own lookup inside the store is the only other call.
        #expect(delta("items") <= delta("update"))
        let stored = try #require(h.store.storedItems[ItemKey(service: "mail", account: "ana")])
        #expect(stored.label == "Work")
        #expect(h.list.allRows.first { $0.key == ItemKey(stored) }?.revision == stored.revision)
        #expect(h.list.allRows.first { $0.key == ItemKey(stored) }?.label == "Work")
        #expect(h.form.baseline?.item.revision == stored.revision)
        #expect(!h.form.hasUnsavedEdits)
    }

    @Test func aNewItemIsSavedWithTwoRequestsAndNoReload() throws {
        let h = try Harness.unlocked(items: [item("web", "bo", "pw")])
        h.send(.newItem, .insert("mail"), .focus(.userID), .insert("ana"), .focus(.password), .insert("pw2"))
        let before = h.store.calls
        h.send(.save)
        let after = h.store.calls
        func delta(_ name: String) -> Int { (after[name] ?? 0) - (before[name] ?? 0) }
        #expect(h.message == "Saved (new item)")
        #expect(delta("allItems") == 0)
        #expect(delta("item") + delta("save") <= 2)
        #expect(h.list.allRows.map(\.service) == ["mail", "web"])
    }
}

import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@Suite struct HomeFormTests {
    @Test func saveAddsThenUpdates() throws {
        let h = try Harness.unlocked()
        h.send(.newItem)
        #expect(h.main.focus == .service)
        h.send(.insert("mail"), .submit, .insert("ana"), .submit, .insert("pw1"), .submit)
        #expect(h.main.focus == .saveButton)
        h.send(.submit)
        #expect(h.message == "Saved (new item)")
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "pw1"))
        #expect(h.form.password.isEmpty)
        #expect(h.list.selectedRow?.account == "ana")
        h.send(.focus(.password), .insert("pw2"), .save)
        #expect(h.message == #"Saved (replaced the password of mail / ana) — Ctrl-Y undoes (10 s)"#)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "pw2"))
        #expect(h.list.rows.count == 1)
    }

    /// Issue 20: an empty user ID is a value, as in the Keychain (was refused).
    @Test func emptyUserIDIsAValue() throws {
        let h = try Harness.unlocked()
        h.send(.focus(.service), .insert("mail"), .focus(.password), .insert("pw"), .save)
        #expect(h.message == "Saved (new item)")
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "")]?.secret == SecretBytes(utf8: "pw"))
    }

    @Test func saveErrorInItsOwnWords() throws {
        let h = try Harness.unlocked()
        h.send(.focus(.userID), .insert("ana"))
        h.store.failure = .param("secret larger than 1 MiB")
        h.send(.save)
        #expect(h.message == KeychainError.param("secret larger than 1 MiB").description)
    }

    @Test func retrieveFillsMaskedValuesAndRevealToggles() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.focus(.service), .insert("mail"), .focus(.userID), .insert("ana"), .focus(.retrieveButton), .submit)
        #expect(h.message == "Retrieved")
        #expect(h.form.retrievedID == "ana")
        // Issue 20: a fixed-width mask, so a 7-character secret's length cannot be counted.
        #expect(h.form.retrievedPasswordText == "••••••••")
        h.send(.toggleReveal)
        #expect(h.form.retrievedPasswordText == "hunter2")
        h.send(.toggleReveal)
        #expect(h.form.retrievedPasswordText == "••••••••")
    }

    @Test func revealOnPasswordFieldTogglesTheField() throws {
        let h = try Harness.unlocked()
        h.send(.focus(.password), .insert("abc"), .toggleReveal)
        #expect(h.form.password.isRevealed && h.form.password.text == "abc")
        h.send(.toggleReveal)
        #expect(!h.form.password.isRevealed && h.form.password.count == 3)
    }

    @Test func retrieveMissingSaysNoItem() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(.focus(.service), .insert("mail"), .focus(.userID), .insert("bob"), .retrieve)
        #expect(h.message == #"No item for mail / bob"#)
        #expect(h.form.retrievedID == "")
        #expect(h.form.retrievedPassword == nil)
    }

    @Test func retrieveOtherErrorInItsOwnWords() throws {
        let h = try Harness.unlocked()
        h.store.failure = .decode("tampered")
        h.send(.retrieve)
        #expect(h.message == KeychainError.decode("tampered").description)
    }

    @Test func binarySecretIsNotShownAsText() throws {
        var binary = item("bin", "x")
        binary.secret = SecretBytes([0xff, 0xfe, 0x00])
        let h = try Harness.unlocked(items: [binary])
        h.send(.openSelected, .toggleReveal)
        #expect(h.form.retrievedPasswordText == "(3 bytes, not text)")
    }

    @Test func saveOverAnExistingItemSaysItReplacedThePassword() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "old")])
        h.send(.newItem, .insert("mail"), .submit, .insert("ana"), .submit, .insert("new"), .save)
        #expect(h.message == #"Saved (replaced the password of mail / ana) — Ctrl-Y undoes (10 s)"#)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "new"))
        h.send(.newItem, .insert("mail"), .submit, .insert("bob"), .submit, .insert("pw"), .save)
        #expect(h.message == "Saved (new item)")
    }

    @Test func deleteButtonAsksFirstNamingTheItem() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(.focus(.service), .insert("mail"), .focus(.userID), .insert("ana"), .focus(.deleteButton), .submit)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no dialog")
            return
        }
        #expect(dialog.message == "Delete mail / ana? Ctrl-Y undoes it for 10 s.")
        #expect(h.store.storedItems.count == 1)
        h.send(.dismiss)
        #expect(h.message == "Cancelled")
        #expect(h.store.storedItems.count == 1)
        h.send(.submit)
        #expect(h.app.overlay != nil)
        h.send(.confirm)
        #expect(h.app.overlay == nil)
        #expect(h.store.storedItems.isEmpty)
    }

    @Test func deleteFromFormAndMissing() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(
            .focus(.service), .insert("mail"), .focus(.userID), .insert("ana"), .focus(.deleteButton), .submit, .confirm
        )
        #expect(h.message == "Deleted mail / ana — Ctrl-Y undoes (10 s)")
        #expect(h.store.storedItems.isEmpty)
        #expect(h.list.rows.isEmpty)
        // The form no longer shows the deleted item.
        #expect(h.form.service.isEmpty)
        h.send(.focus(.service), .insert("mail"), .focus(.userID), .insert("ana"), .delete)
        #expect(h.app.overlay == nil)
        #expect(h.message == #"No item for mail / ana"#)
        h.store.failure = .io("read-only")
        h.send(.delete)
        #expect(h.message == KeychainError.io("read-only").description)
    }

    @Test func deletingTheShownItemFromTheFormClearsTheRetrievedValues() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2"), item("web", "x")])
        h.send(.openSelected)
        #expect(h.form.retrievedID == "ana")
        h.send(.focus(.deleteButton), .submit, .confirm)
        #expect(h.form.retrievedID == "")
        #expect(h.form.retrievedPassword == nil)
        #expect(h.form.retrievedKey == nil)
        #expect(h.form.service.isEmpty)
        #expect(h.message == "Deleted mail / ana — Ctrl-Y undoes (10 s)")
    }

    @Test func deletingTheShownItemFromTheListClearsTheRetrievedValues() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2"), item("web", "x")])
        h.send(.openSelected, .cancel, .deleteSelected)
        #expect(h.form.retrievedPassword == nil)
        #expect(h.message == "Deleted mail / ana — Ctrl-Y undoes (10 s)")
        // Deleting another item leaves the shown values alone.
        h.send(.openSelected, .cancel)
        #expect(h.form.retrievedID == "x")
        h.store.externalPut(item("zzz", "y"))
        h.clock.advance(by: 1)
        h.app.tick()
        h.send(.moveSelection(1), .deleteSelected)
        #expect(h.message == "Deleted zzz / y — Ctrl-Y undoes (10 s)")
        #expect(h.form.retrievedID == "x")
    }

    @Test func theShownItemDeletedElsewhereClearsTheRetrievedValues() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.openSelected)
        h.store.externalRemove(ItemKey(service: "mail", account: "ana"))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.form.retrievedPassword == nil)
        #expect(h.form.retrievedID == "")
        // The editor is open on it, nothing typed: the whole form is emptied.
        #expect(h.message == #"Deleted elsewhere: mail / ana; the form is emptied"#)
    }

    @Test func revealRightAfterOpeningShowsTheRetrievedPassword() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "hunter2")])
        h.send(.openSelected, .focus(.password))
        h.send(.toggleReveal)
        #expect(h.form.retrievedPasswordText == "hunter2")
        h.send(.toggleReveal)
        #expect(h.form.retrievedPasswordText == "••••••••")
        // With text typed, Ctrl-R in the Password field is about that text.
        h.send(.insert("new"), .toggleReveal)
        #expect(h.form.password.isRevealed && h.form.password.text == "new")
        #expect(h.form.retrievedPasswordText == "••••••••")
    }

    /// Tab follows the screen: the buttons are drawn under Password, so they come after it.
    @Test func tabOrderCyclesAndEscapeReturnsToList() throws {
        let h = try Harness.unlocked()
        var seen: [MainFocus] = []
        for _ in 0..<18 {
            h.send(.focusNext)
            seen.append(h.main.focus)
        }
        #expect(
            seen == [
                .service, .userID, .password, .saveButton, .retrieveButton, .deleteButton, .kind, .label, .url,
                .notes, .oneTimeSeed, .generator, .fieldName, .fieldValue, .fieldHidden, .accessMode,
                .accessForwarded, .list,
            ])
        h.send(.focusPrevious)
        #expect(h.main.focus == .accessForwarded)
        h.send(.cancel)
        #expect(h.main.focus == .list)
    }

    /// Shift-Tab from the first button goes back up to Password, the field drawn above the buttons,
    /// and Enter in a one-line field goes where Tab goes.
    @Test func shiftTabFromSaveAndEnterFollowTheScreen() throws {
        let h = try Harness.unlocked()
        h.send(.focus(.saveButton), .focusPrevious)
        #expect(h.main.focus == .password)
        h.send(.focus(.kind), .focusPrevious)
        #expect(h.main.focus == .deleteButton)
        let oneLine: [MainFocus] = [.service, .userID, .password, .label, .url, .oneTimeSeed, .fieldName, .fieldValue]
        for field in oneLine {
            h.send(.focus(field), .focusNext)
            let tab = h.main.focus
            h.send(.focus(field), .submit)
            #expect(h.main.focus == tab, "Enter on \(field)")
        }
    }

    @Test func newItemClearsTheForm() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(.openSelected)
        #expect(h.form.service.text == "mail")
        h.send(.newItem)
        #expect(h.form.service.isEmpty)
        #expect(h.form.userID.isEmpty)
        #expect(h.form.retrievedPassword == nil)
        #expect(h.message == "New item")
    }

    @Test func editingInFormFields() throws {
        let h = try Harness.unlocked()
        h.send(
            .focus(.service), .insert("mial"), .moveCursor(.left), .moveCursor(.left), .deleteBackward,
            .moveCursor(.right), .insert("i"), .moveCursor(.end), .insert("!"), .deleteBackward)
        #expect(h.form.service.text == "mail")
        h.send(.moveCursor(.home), .deleteForward, .clearField)
        #expect(h.form.service.isEmpty)
    }
}

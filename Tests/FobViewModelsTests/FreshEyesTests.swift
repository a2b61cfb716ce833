import FobSessions
import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobViewModels

/// Issue 20, found by fresh eyes at 80×24: each test failed before its fix.
@Suite struct FreshEyesTests {
    /// `y` in the logout review with nothing ticked says why nothing happens.
    @Test func yWithNothingTickedSaysSo() throws {
        let h = try Harness.unlocked(items: [item("api", "t1", "tok", kind: .token)])
        h.send(.logoutWipe(service: nil), .confirm)
        #expect(h.app.overlay == .logoutReview)
        #expect(h.message == "Nothing ticked, so nothing deleted: Space ticks an item; Esc cancels")
    }

    /// A new item saved while a filter hides it is the one highlighted.
    @Test func aNewItemSavedUnderAFilterIsHighlighted() throws {
        let h = try Harness.unlocked(items: [item("github.com", "ana", "pw"), item("gitlab.com", "bo", "pw")])
        h.send(.startFilter, .insert("git"), .submit)
        h.send(.moveSelection(1), .newItem, .insert("slack.com"), .focus(.password), .insert("pw"), .save)
        #expect(h.list.selectedRow?.key == ItemKey(service: "slack.com", account: ""))
        #expect(h.list.filter.isEmpty)
        #expect(h.message == "Saved (new item; filter cleared to show it)")
    }

    /// The undo offer leaves the message once its 10 s are up.
    @Test func theUndoOfferLeavesTheMessageWhenItEnds() throws {
        let h = try Harness.unlocked(items: [item("zoom.us", "", "pw"), item("mail", "ana", "pw")])
        h.send(.moveSelection(1), .deleteSelected)
        #expect(h.message == "Deleted zoom.us — Ctrl-Y undoes (10 s)")
        h.clock.advance(by: 9)
        h.app.tick()
        #expect(h.message == "Deleted zoom.us — Ctrl-Y undoes (10 s)")
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.message == "Deleted zoom.us")
        #expect(h.form.message.tone == .success)
    }

    /// After a lock, `m` says the lock cleared the earlier messages.
    @Test func messagesAfterALockSayTheLockClearedThem() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.copySelected, .lock)
        h.unlock()
        #expect(h.main.messages.entries.map(\.line.text) == ["Locking cleared the earlier messages"])
    }

    /// `d` deletes the item as read: a write in between is not deleted (nor lost to `z`).
    @Test func deleteRefusesAnItemChangedMeanwhile() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        let store = h.store
        store.beforeWrite = {
            store.beforeWrite = nil
            store.externalPut(item("mail", "ana", "newer"))
        }
        h.send(.deleteSelected)
        #expect(h.store.storedItems[ItemKey(service: "mail", account: "ana")]?.secret == SecretBytes(utf8: "newer"))
        #expect(h.message == "mail / ana changed elsewhere as you deleted it; nothing deleted")
    }
}

@Suite struct FreshEyesListTests {
    /// `ghub` ranks github.com, where the match starts the name, above api.github.com.
    @Test func earlierMatchesRankFirst() throws {
        let h = try Harness.unlocked(items: [item("api.github.com", "ci"), item("github.com", "ana")])
        h.send(.startFilter, .insert("ghub"))
        #expect(h.list.rows.map(\.service) == ["github.com", "api.github.com"])
        #expect(h.list.selectedRow?.service == "github.com")
    }

    /// Unlocking goes back to the item highlighted before the lock.
    @Test func theSelectionSurvivesALock() throws {
        let h = try Harness.unlocked(items: [item("a", "1"), item("b", "2"), item("c", "3")])
        h.send(.moveSelection(2), .lock)
        h.unlock()
        #expect(h.list.selectedRow?.service == "c")
        #expect(h.main.preview?.key == ItemKey(service: "c", account: "3"))
    }
}

@Suite struct FreshEyesRevealTests {
    /// After Ctrl-R shows a generated password, the message no longer offers Ctrl-R to show it.
    @Test func theGeneratedPasswordMessageFollowsCtrlR() throws {
        let h = try Harness.unlocked()
        h.send(.newItem, .focus(.password), .generatePassword)
        #expect(h.message.hasSuffix("; Ctrl-R shows it"))
        h.send(.toggleReveal)
        #expect(h.form.password.isRevealed)
        #expect(h.message.hasSuffix("; Ctrl-R hides it"))
        h.send(.toggleReveal)
        #expect(h.message.hasSuffix("; Ctrl-R shows it"))
    }
}

@Suite struct FreshEyesEditorHintTests {
    /// Esc back to the list drops the editor's "Esc goes back" hint.
    @Test func escDropsTheEditorsHint() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.editSelected)
        #expect(h.message == "Editing mail / ana: Ctrl-S saves, Esc goes back")
        h.send(.cancel)
        #expect(h.main.focus == .list)
        #expect(h.message == "")
    }
}

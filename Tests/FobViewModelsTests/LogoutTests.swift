import FobSessions
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@Suite struct LogoutWipeTests {
    private let items = [
        item("mail", "ana", "pw"), item("api", "t1", "tok", kind: .token), item("api", "t2", "tok", kind: .token),
        item("idp", "ana", "{}", kind: .oauth), item("notes", "n", "x", kind: .note),
    ]

    /// Issue 20: `W` lists every item in two groups, session tokens ticked
    /// and tokens with no expiry not; Space ticks; the question repeats the count.
    @Test func reviewGroupsTicksAndRepeatsTheCount() throws {
        let h = try Harness.unlocked(items: items + [item("gh", "s", jwt(exp: 2_000_000_000), kind: .token)])
        let main = h.main
        h.send(.copySelected, .openSelected)
        h.send(.logoutWipe(service: nil))
        #expect(h.app.overlay == .logoutReview)
        let review = try #require(main.logoutReview)
        #expect(review.rows.map(\.key.service) == ["gh", "idp", "api", "api"])
        #expect(review.rows.map(\.selected) == [true, true, false, false])
        #expect(review.heading(before: 0) == "Session tokens (2): deleted unless unticked")
        #expect(review.heading(before: 1) == nil)
        #expect(review.heading(before: 2) == "Tokens with no expiry (2): kept unless ticked")
        #expect(review.question == "Delete 2 items, clear the clipboard and lock? Enter deletes")
        h.send(.moveSelection(2), .cycleKind(1))
        #expect(review.question == "Delete 3 items, clear the clipboard and lock? Enter deletes")
        h.send(.confirm)
        #expect(h.store.storedItems.count == 3)
        #expect(h.store.storedItems[ItemKey(service: "api", account: "t2")] != nil)
        #expect(h.store.storedItems[ItemKey(service: "api", account: "t1")] == nil)
        #expect(h.clipboard.contents == nil)
        #expect(h.store.isLocked)
        #expect(h.app.unlockModel?.message.text == "Logged out: deleted 3 token/OAuth items")
        #expect(main.form.retrievedPassword == nil)
        #expect(main.list.rows.isEmpty)
    }

    @Test func oneService() throws {
        let h = try Harness.unlocked(items: items)
        h.send(.logoutWipe(service: "idp"))
        #expect(h.main.logoutReview?.rows.map(\.key.service) == ["idp"])
        h.send(.confirm)
        #expect(h.store.storedItems.count == 4)
        #expect(h.app.unlockModel?.message.text == "Logged out: deleted 1 token/OAuth item")
    }

    @Test func nothingTickedDeletesNothing() throws {
        let h = try Harness.unlocked(items: [item("api", "t1", "tok", kind: .token)])
        h.send(.logoutWipe(service: nil))
        #expect(h.main.logoutReview?.question == "Nothing ticked: Space ticks an item; Esc cancels")
        h.send(.confirm)
        #expect(h.app.overlay == .logoutReview)
        #expect(h.store.storedItems.count == 1)
    }

    /// Issue 32: with no token or OAuth item, F8 only said so and neither
    /// locked nor cleared the clipboard. The review opens (saying there is
    /// nothing to delete) and Enter clears the clipboard and locks.
    @Test func nothingToDeleteStillClearsTheClipboardAndLocks() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(.copySelected)
        #expect(h.clipboard.contents != nil)
        h.send(.logoutWipe(service: nil))
        #expect(h.app.overlay == .logoutReview)
        #expect(h.message == "")
        #expect(
            h.main.logoutReview?.question == "Nothing to delete: clear the clipboard and lock? Enter locks, Esc cancels"
        )
        h.send(.confirm)
        #expect(h.clipboard.contents == nil)
        #expect(h.store.isLocked)
        #expect(h.store.storedItems.count == 1)
        #expect(
            h.app.unlockModel?.message.text
                == "Logged out: nothing to delete; vault locked; the clipboard cleared if it still held Fob's copy")
    }

    /// The message said "clipboard cleared" whatever the clipboard held:
    /// with nothing of Fob's on it, nothing is cleared and it says so.
    @Test func nothingCopiedLeavesTheClipboardAloneAndSaysSo() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.clipboard.userCopies("a note of the user's")
        h.send(.logoutWipe(service: nil), .confirm)
        #expect(h.store.isLocked)
        #expect(h.clipboard.contents == "a note of the user's")
        #expect(
            h.app.unlockModel?.message.text
                == "Logged out: nothing to delete; vault locked; no copy of Fob's to clear from the clipboard")
    }

    /// Fob's copy replaced by the user's own text since: that text stays, and
    /// the message claims no clear it did not make.
    @Test func textCopiedSinceIsLeftAloneAndTheMessageStaysTrue() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(.copySelected)
        h.clipboard.userCopies("copied since")
        h.send(.logoutWipe(service: nil), .confirm)
        #expect(h.clipboard.contents == "copied since")
        #expect(
            h.app.unlockModel?.message.text
                == "Logged out: nothing to delete; vault locked; the clipboard cleared if it still held Fob's copy")
    }

    /// Issue 32: the review opened while the status line still spoke of
    /// something past (`! No token or OAuth items to delete`).
    @Test func theReviewOpensOnAClearStatusLine() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana"), item("api", "t1", "tok", kind: .token)])
        h.send(.logoutWipe(service: nil), .dismiss)
        #expect(h.message == "Logout cancelled: nothing deleted")
        h.send(.logoutWipe(service: nil))
        #expect(h.app.overlay == .logoutReview)
        #expect(h.message == "")
        h.send(.dismiss, .askLock)
        #expect(h.message == "")
    }

    @Test func declinedDeletesNothing() throws {
        let h = try Harness.unlocked(items: items)
        h.send(.logoutWipe(service: nil), .dismiss)
        #expect(h.store.storedItems.count == 5)
        #expect(h.app.mainModel != nil)
    }

    @Test func aFailedDeleteIsReportedNotSuccess() throws {
        let h = try Harness.unlocked(items: items)
        h.store.failingDeletes = [ItemKey(service: "idp", account: "ana")]
        h.send(.copySelected)
        h.send(.logoutWipe(service: nil), .confirm)
        let main = try #require(h.app.mainModel)
        // One transaction: all or nothing.
        #expect(main.form.message.text.hasPrefix("Logout failed: nothing was deleted; "))
        #expect(main.form.message.text.contains("service \"idp\", account \"ana\""))
        #expect(!main.form.message.text.contains("Logged out"))
        #expect(h.clipboard.contents == nil)
        #expect(h.store.storedItems.count == 5)
    }

    /// Another process holding the vault: the wipe does not freeze the
    /// screen; it says it is waiting and finishes from the timer once free.
    @Test func aBusyVaultIsRetriedFromTheTick() throws {
        let h = try Harness.unlocked(items: items)
        h.send(.logoutWipe(service: nil))
        h.store.failure = .io("vault busy: database is locked")
        h.send(.confirm)
        let main = try #require(h.app.mainModel)
        #expect(
            main.form.message.text == "Vault busy: another fob process is writing; logging out as soon as it is done")
        #expect(h.store.storedItems.count == 5)
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.app.mainModel != nil)
        #expect(h.store.storedItems.count == 5)
        h.store.failure = nil
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.store.storedItems.count == 4)
        #expect(h.store.isLocked)
        #expect(h.app.unlockModel?.message.text == "Logged out: deleted 1 token/OAuth item")
    }

    @Test func reportFromTheSharedFunction() throws {
        let store = InMemoryStore(password: "pw")
        for i in items { store.externalPut(i) }
        try store.unlock(password: .text("pw"))
        #expect(try LogoutWipe.sessionItems(in: store).count == 3)
        #expect(try LogoutWipe.candidates(in: store).map(\.group) == [.session, .longLived, .longLived])
        // By default the tokens with no expiry stay.
        #expect(try LogoutWipe.run(in: store, service: "api").deleted == 0)
        let report = try LogoutWipe.run(in: store, service: "api", includeLongLived: true)
        #expect(report == LogoutWipe.Report(found: 2, deleted: 2, failures: []))
        #expect(report.succeeded)
        #expect(try LogoutWipe.run(in: store).summary == "Logged out: deleted 1 token/OAuth item")
        #expect(try LogoutWipe.run(in: store).summary == "Logged out: deleted 0 token/OAuth items")
    }

    @Test func listingFailureIsShown() throws {
        let h = try Harness.unlocked(items: items)
        h.store.failure = .decode("bad")
        h.send(.logoutWipe(service: nil))
        #expect(h.message == KeychainError.decode("bad").description)
        #expect(h.app.overlay == nil)
    }
}

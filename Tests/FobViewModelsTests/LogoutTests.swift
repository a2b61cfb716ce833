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

    @Test func confirmationSaysHowManyThenWipesClearsAndLocks() throws {
        let h = try Harness.unlocked(items: items)
        let main = h.main
        h.send(.copySelected, .openSelected)
        h.send(.logoutWipe(service: nil))
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no dialog")
            return
        }
        #expect(
            dialog.message == #"Delete 3 token/OAuth items (service "api", user ID "t1"; service "api", user ID "t2"; "#
                + #"service "idp", user ID "ana"), clear the clipboard and lock? (y/n)"#)
        h.send(.confirm)
        #expect(h.store.storedItems.keys.map(\.service).sorted() == ["mail", "notes"])
        #expect(h.clipboard.contents == nil)
        #expect(h.store.isLocked)
        #expect(h.app.unlockModel?.message.text == "Logged out: deleted 3 token/OAuth items")
        #expect(main.form.retrievedPassword == nil)
        #expect(main.list.rows.isEmpty)
    }

    @Test func oneService() throws {
        let h = try Harness.unlocked(items: items)
        h.send(.logoutWipe(service: "idp"))
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no dialog")
            return
        }
        #expect(
            dialog.message
                == #"Delete 1 token/OAuth item of service "idp" (service "idp", user ID "ana"), clear the clipboard and lock? (y/n)"#
        )
        h.send(.confirm)
        #expect(h.store.storedItems.count == 4)
        #expect(h.app.unlockModel?.message.text == "Logged out: deleted 1 token/OAuth item")
    }

    @Test func confirmationNamesThreeItemsThenCountsTheRest() throws {
        let tokens = (1...5).map { item("api", "t\($0)", "tok", kind: .token) }
        let h = try Harness.unlocked(items: tokens)
        h.send(.logoutWipe(service: nil))
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no dialog")
            return
        }
        #expect(
            dialog.message == #"Delete 5 token/OAuth items (service "api", user ID "t1"; service "api", user ID "t2"; "#
                + #"service "api", user ID "t3"; and 2 more), clear the clipboard and lock? (y/n)"#)
    }

    @Test func nothingToDelete() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana")])
        h.send(.logoutWipe(service: nil))
        #expect(h.app.overlay == nil)
        #expect(h.message == "No token or OAuth items to delete")
    }

    @Test func declinedDeletesNothing() throws {
        let h = try Harness.unlocked(items: items)
        h.send(.logoutWipe(service: nil), .dismiss)
        #expect(h.store.storedItems.count == 5)
        #expect(h.app.mainModel != nil)
    }

    @Test func aFailedDeleteIsReportedNotSuccess() throws {
        let h = try Harness.unlocked(items: items)
        h.store.failingDeletes = [ItemKey(service: "api", account: "t2")]
        h.send(.copySelected)
        h.send(.logoutWipe(service: nil), .confirm)
        let main = try #require(h.app.mainModel)
        // One transaction: all or nothing.
        #expect(main.form.message.text.hasPrefix("Logout failed: nothing was deleted; "))
        #expect(main.form.message.text.contains("service \"api\", account \"t2\""))
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
        #expect(h.store.storedItems.count == 2)
        #expect(h.store.isLocked)
        #expect(h.app.unlockModel?.message.text == "Logged out: deleted 3 token/OAuth items")
    }

    @Test func reportFromTheSharedFunction() throws {
        let store = InMemoryStore(password: "pw")
        for i in items { store.externalPut(i) }
        try store.unlock(password: .text("pw"))
        #expect(try LogoutWipe.sessionItems(in: store).count == 3)
        let report = try LogoutWipe.run(in: store, service: "api")
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

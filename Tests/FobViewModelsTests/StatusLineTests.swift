import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// Each kind of message carries the tone it was made with.
@Suite struct StatusLineToneTests {
    @Test func savedIsSuccess() throws {
        let h = try Harness.unlocked()
        h.send(
            .focus(.service), .insert("mail"), .focus(.userID), .insert("ana"), .focus(.password), .insert("pw"), .save)
        #expect(h.form.message == .success("Saved (new item)"))
    }

    @Test func retrievedIsSuccessAndNotFoundIsAWarning() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.newItem, .insert("mail"), .focus(.userID), .insert("ana"), .retrieve)
        #expect(h.form.message == .success("Retrieved"))
        h.send(.focus(.userID), .clearField, .insert("bob"), .retrieve)
        #expect(h.form.message == .warning(#"No item for mail / bob"#))
    }

    @Test func deletedIsSuccess() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.deleteSelected)
        #expect(h.form.message == .success("Deleted mail / ana — Ctrl-Y undoes (10 s)"))
    }

    @Test func deletedElsewhereIsAWarning() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.openSelected)
        h.store.externalRemove(ItemKey(service: "mail", account: "ana"))
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.form.message.tone == .warning)
        #expect(h.message.hasPrefix("Deleted elsewhere: "))
    }

    @Test func clipboardLeftAloneIsInformation() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.copySelected)
        #expect(h.form.message.tone == .success)
        h.clipboard.userCopies("mine")
        h.clock.advance(by: 45)
        h.app.tick()
        #expect(h.form.message == .info("Clipboard left alone: it holds other text now"))
    }

    @Test func copyFailedIsAnError() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.clipboard.fail(with: .unavailable("none"))
        h.send(.copySelected)
        #expect(
            h.form.message == .error("Copy of the password of mail / ana failed: \(ClipboardError.unavailable("none"))")
        )
    }

    @Test func lockedIsInformation() throws {
        let h = try Harness.unlocked(lockAfter: 60)
        h.send(.lock)
        #expect(h.app.unlockModel?.message == .info("Locked"))
        h.unlock()
        h.clock.advance(by: 60)
        h.app.tick()
        #expect(h.app.unlockModel?.message == .info("Locked after 60 s without input"))
    }

    @Test func emptySelectionIsAWarningAndCancelIsInformation() throws {
        let h = try Harness.unlocked()
        h.send(.copySelected)
        #expect(h.form.message == .warning("No item selected"))
        h.send(.newItem)
        #expect(h.form.message == .info("New item"))
    }

    @Test func wrongMasterPasswordIsAnError() {
        let h = Harness()
        h.unlock("wrong")
        #expect(h.app.unlockModel?.message.tone == .error)
    }
}

/// The idle-lock policy on its own, driven by a test clock.
@Suite struct IdleLockPolicyTests {
    @Test func dueOnlyOnceTheIdleTimeHasPassed() {
        let clock = TestClock()
        let lock = IdleLock(lockAfter: 300, now: clock.now)
        #expect(lock.deadline == clock.now.addingTimeInterval(300))
        clock.advance(by: 299)
        #expect(!lock.isDue(clock.now))
        clock.advance(by: 1)
        #expect(lock.isDue(clock.now))
    }

    @Test func inputStartsTheTimerAgain() {
        let clock = TestClock()
        var lock = IdleLock(lockAfter: 60, now: clock.now)
        clock.advance(by: 50)
        lock.noteInput(clock.now)
        #expect(lock.lastInput == clock.now)
        clock.advance(by: 50)
        #expect(!lock.isDue(clock.now))
        #expect(lock.deadline == clock.now.addingTimeInterval(10))
        clock.advance(by: 10)
        #expect(lock.isDue(clock.now))
    }

    @Test func zeroNeverLocks() {
        let clock = TestClock()
        let lock = IdleLock(lockAfter: 0, now: clock.now)
        #expect(lock.deadline == nil)
        clock.advance(by: 1_000_000)
        #expect(!lock.isDue(clock.now))
    }
}

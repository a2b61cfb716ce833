import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// A clock the test moves; stands for `CLOCK_BOOTTIME`, which keeps running in suspend.
final class ManualAgentClock: AgentClock, @unchecked Sendable {
    private let lock = NSLock()
    private var value: Double = 1_000
    var seconds: Double { lock.withLock { value } }
    func advance(_ by: Double) { lock.withLock { value += by } }
}

private func unlocked(_ v: TestVault, _ core: AgentCore, idle: UInt32 = 900, max: UInt32 = 28_800) throws {
    guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: idle, maxSeconds: max)) else {
        Issue.record("unlock failed")
        return
    }
}

private func secret(_ response: AgentResponse) -> String? {
    response.onlyItem?.secret?.unsafeString
}

private func failure(_ response: AgentResponse) -> KeychainError? {
    guard case .failure(let error) = response else { return nil }
    return error
}

@Suite struct AgentCoreTests {
    func makeVault() throws -> TestVault {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", secret: .text("when")))
        var item = Item(service: "wifi", account: "home", secret: .text("after"))
        item.accessible = .afterFirstUnlock
        try v.vault.add(item)
        v.vault.lock()
        return v
    }

    @Test func startsLockedAndServesAfterUnlock() throws {
        let v = try makeVault()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        #expect(core.state == .locked)
        if case .interactionNotAllowed? = failure(core.handle(.get(service: "mail", account: "ana"))) {
        } else {
            Issue.record("a locked agent must answer interactionNotAllowed")
        }
        #expect(failure(core.handle(.unlock(password: .text("wrong"), idleSeconds: 9, maxSeconds: 9))) == .authFailed)
        try unlocked(v, core)
        #expect(secret(core.handle(.get(service: "mail", account: "ana"))) == "when")
        if case .itemNotFound? = failure(core.handle(.get(service: "x", account: "y"))) {
        } else {
            Issue.record("a missing item is itemNotFound, as without the agent")
        }
        #expect(core.handle(.lock).isOK)
        #expect(core.state == .locked)
    }

    @Test func idleTimeoutKeepsAfterFirstUnlockItemsOnly() throws {
        let v = try makeVault()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        try unlocked(v, core, idle: 60, max: 0)
        clock.advance(59)
        _ = core.handle(.get(service: "mail", account: "ana")) // activity restarts the idle timer
        clock.advance(59)
        #expect(core.state == .unlocked)
        clock.advance(2)
        #expect(core.state == .afterFirstUnlock)
        #expect(secret(core.handle(.get(service: "wifi", account: "home"))) == "after")
        if case .interactionNotAllowed? = failure(core.handle(.get(service: "mail", account: "ana"))) {
        } else {
            Issue.record("a whenUnlocked item must not be readable after the idle timeout")
        }
        // fob lock drops the afterFirstUnlock keys too.
        _ = core.handle(.lock)
        #expect(failure(core.handle(.get(service: "wifi", account: "home"))) != nil)
    }

    @Test func statusIsNotActivity() throws {
        let v = try makeVault()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        try unlocked(v, core, idle: 10, max: 0)
        for _ in 0..<11 {
            _ = core.handle(.status)
            clock.advance(1)
        }
        #expect(core.state == .afterFirstUnlock)
    }

    @Test func maxTimeoutLocksDespiteActivity() throws {
        let v = try makeVault()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        try unlocked(v, core, idle: 100, max: 30)
        for _ in 0..<29 {
            clock.advance(1)
            #expect(secret(core.handle(.get(service: "mail", account: "ana"))) == "when")
        }
        clock.advance(1)
        guard case .status(let status) = core.handle(.status) else {
            Issue.record("no status")
            return
        }
        #expect(status.state == .afterFirstUnlock)
    }

    /// A suspend: no request, no tick while asleep; the clock (CLOCK_BOOTTIME)
    /// jumps past the deadline, and the first thing after waking is locked.
    @Test func suspendPastTheDeadlineWakesLocked() throws {
        let v = try makeVault()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        try unlocked(v, core, idle: 900, max: 28_800)
        clock.advance(3_600)
        if case .interactionNotAllowed? = failure(core.handle(.get(service: "mail", account: "ana"))) {
        } else {
            Issue.record("the first request after a long suspend must find the vault locked")
        }
    }

    @Test func statusCountsDown() throws {
        let v = try makeVault()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        try unlocked(v, core, idle: 100, max: 1000)
        clock.advance(40)
        guard case .status(let status) = core.handle(.status) else {
            Issue.record("no status")
            return
        }
        #expect(status.state == .unlocked)
        #expect(status.idleSecondsLeft == 60)
        #expect(status.maxSecondsLeft == 960)
        #expect(status.pid == getpid())
    }

    @Test func aReplacedFileLocks() throws {
        let v = try makeVault()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        try unlocked(v, core)
        let copy = v.directory.file("copy.db")
        try FileManager.default.copyItem(at: v.vault.url, to: copy)
        #expect(rename(copy.path, v.vault.url.path) == 0)
        if case .interactionNotAllowed? = failure(core.handle(.get(service: "mail", account: "ana"))) {
        } else {
            Issue.record("a replaced file must lock the agent")
        }
        #expect(core.state == .locked)
    }

    @Test func aPasswordChangeElsewhereLocks() throws {
        let v = try makeVault()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        try unlocked(v, core)
        let other = try Vault(url: v.vault.url)
        try other.unlock(password: v.password)
        try other.changePassword(to: .text("new password"))
        other.lock()
        #expect(failure(core.handle(.get(service: "mail", account: "ana"))) != nil)
        #expect(core.state == .locked)
        #expect(failure(core.handle(.unlock(password: v.password, idleSeconds: 1, maxSeconds: 1))) == .authFailed)
        #expect(core.handle(.unlock(password: .text("new password"), idleSeconds: 9, maxSeconds: 9)).isOK)
        #expect(secret(core.handle(.get(service: "mail", account: "ana"))) == "when")
    }
}

extension AgentResponse {
    var isOK: Bool { if case .ok = self { return true } else { return false } }
    /// How many items a write answer says it changed; `nil` for another answer.
    var writtenCount: Int? { if case .written(let count, _) = self { return count } else { return nil } }
}

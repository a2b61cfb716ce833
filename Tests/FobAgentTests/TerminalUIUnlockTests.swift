import FobSSH
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobAgent

private final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}

private final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: AccessOutcome?
    private var unlocked: Bool?
    func set(_ outcome: AccessOutcome) { lock.withLock { value = outcome } }
    func set(unlocked: Bool) { lock.withLock { self.unlocked = unlocked } }
    var outcome: AccessOutcome? { lock.withLock { value } }
    var didUnlock: Bool? { lock.withLock { unlocked } }
}

/// An open terminal UI is the first channel to unlock a locked vault for an
/// SSH signature: the question reaches its lock screen, unlocking there
/// answers it, a terminal UI that subscribes meanwhile is told of it, and
/// the master password is then not asked anywhere else.
@Suite struct TerminalUIUnlockTests {
    private let question = AccessQuestion(
        context: AccessContext(
            requester: Requester(pid: 77, uid: getuid(), executable: "/usr/bin/ssh", identity: nil), channel: .ssh),
        item: "SSH key work (SHA256:x) to log in to h (verified)", reason: VaultSSHApproval.lockedReason)

    private func event(_ subscribers: AgentSubscribers, _ id: Int) -> AgentEvent? {
        for _ in 0..<100 {
            if let first = subscribers.next(id, timeout: 0.05)?.first { return first }
        }
        return nil
    }

    @Test func unlockingAnswersTheQuestionAndADenialRefuses() throws {
        let subscribers = AgentSubscribers()
        let asker = TerminalUIAsker(subscribers: subscribers)
        #expect(asker.askUnlock(question, timeout: 5) { false } == .unreachable)
        let ui = try #require(subscribers.add(terminalUI: true))
        let unlocked = Flag()
        let box = OutcomeBox()
        Thread { box.set(asker.askUnlock(question, timeout: 30) { unlocked.isSet }) }.start()
        let asked = try #require(event(subscribers, ui))
        #expect(asked.kind == .question && asked.prompt?.reason == VaultSSHApproval.lockedReason)
        unlocked.set()
        #expect(event(subscribers, ui)?.kind == .settled)
        while box.outcome == nil { usleep(10_000) }
        #expect(box.outcome == .answered(.once))

        let refused = OutcomeBox()
        Thread { refused.set(asker.askUnlock(question, timeout: 30) { false }) }.start()
        let second = try #require(event(subscribers, ui)?.prompt)
        #expect(asker.settle(second.id, with: .deny))
        while refused.outcome == nil { usleep(10_000) }
        #expect(refused.outcome == .answered(.deny))
        #expect(asker.askUnlock(question, timeout: 0.2) { false } == .unanswered)
    }

    @Test func aLockedVaultIsUnlockedFromTheTerminalUIAndNoPasswordIsAsked() throws {
        let f = try OneKeyVault()
        let (v, key, core) = (f.vault, f.key, f.core)
        let asked = Flag()
        let approval = VaultSSHApproval(core: core) { _ in
            asked.set()
            return nil
        }
        let sign = SSHSignContext(
            key: key.publicKey, comment: "me@work", itemName: "work", destination: .unverified, confirm: false,
            peerPID: 77, isUserAuthentication: true, requester: question.context.requester)
        // No terminal UI: the password channels are asked.
        #expect(!approval.unlock(for: sign))
        #expect(asked.isSet)
        // The UI subscribes after the question was put: it is told of it.
        let box = OutcomeBox()
        let password = Flag()
        let withUI = VaultSSHApproval(core: core) { _ in
            password.set()
            return nil
        }
        let early = try #require(core.subscribe(terminalUI: true))
        Thread { box.set(unlocked: withUI.unlock(for: sign)) }.start()
        #expect(event(core.subscribers, early)?.kind == .question)
        let late = try #require(core.subscribe(terminalUI: true))
        let told = try #require(event(core.subscribers, late))
        #expect(told.kind == .question && told.prompt?.item.hasPrefix("SSH key work") == true)
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)).isOK)
        while box.didUnlock == nil { usleep(10_000) }
        #expect(box.didUnlock == true)
        #expect(!password.isSet)
    }

    @Test func aTerminalUISubscribingOnceTheVaultIsUnlockedIsNotToldOfTheRequestToUnlock() throws {
        let v = try TestVault()
        v.vault.lock()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)).isOK)
        // A request to unlock whose question has not yet seen the unlock (it
        // looks every 0.1 s), and a consent question.
        let ui = try #require(core.subscribe(terminalUI: true))
        let unlockBox = OutcomeBox()
        Thread { unlockBox.set(core.terminalUI.askUnlock(question, timeout: 30) { false }) }.start()
        func asked(on id: Int) -> AccessPrompt? {
            for _ in 0..<100 {
                let events = core.subscribers.next(id, timeout: 0.05) ?? []
                if let asked = events.first(where: { $0.kind == .question }) { return asked.prompt }
            }
            return nil
        }
        let request = try #require(asked(on: ui))
        var consent = question
        consent.reason = "the vault's default rule is 'ask'"
        let consentBox = OutcomeBox()
        Thread { [consent] in consentBox.set(core.terminalUI.ask(consent, timeout: 30)) }.start()
        #expect(asked(on: ui)?.id == request.id + 1)
        // The UI that unlocked subscribes: only the consent question.
        let late = try #require(core.subscribe(terminalUI: true))
        let told = try #require(core.subscribers.next(late, timeout: 1))
        #expect(told.filter { $0.kind == .question }.map(\.prompt?.id) == [request.id + 1])
        #expect(core.terminalUI.settle(request.id, with: .deny) && core.terminalUI.settle(request.id + 1, with: .once))
        while unlockBox.outcome == nil || consentBox.outcome == nil { usleep(10_000) }
        #expect(consentBox.outcome == .answered(.once))
    }
}

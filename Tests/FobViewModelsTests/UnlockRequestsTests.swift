import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobViewModels

/// The unlock screen names the agent's requests waiting for the unlock (an
/// SSH signature that found the vault locked), from the agent's feed, and
/// forgets each once the agent settles it.
@Suite struct UnlockRequestsTests {
    private func prompt(_ id: UInt64, pid: Int32 = 77) -> AccessPrompt {
        AccessPrompt(
            id: id, pid: pid, program: "/usr/bin/ssh", parents: "bash[12]", workingDirectory: "/home/ana",
            terminal: "/dev/pts/3", item: "SSH key work (SHA256:abc) to log in to [h]:22 (verified)",
            channel: "SSH agent", reason: "the vault is locked: unlock it to sign", leaseSeconds: 900)
    }

    @Test func theLockScreenListensToTheAgentAndShowsWhoWaitsUntilSettled() throws {
        let h = Harness()
        #expect(h.app.unlockModel != nil)
        h.app.tick()
        #expect(h.store.agentWatches == 1)
        let model = try #require(h.app.unlockModel)
        #expect(model.requests.line == nil)
        h.store.agentSends(AgentEvent(question: prompt(1), settled: false))
        h.store.agentSends(AgentEvent(question: prompt(2, pid: 78), settled: false))
        h.app.tick()
        #expect(
            model.requests.line
                == "? ssh[77] waits for SSH key work (SHA256:abc) to log in to [h]:22 (verified) · unlock to go on · +1 more"
        )
        h.store.agentSends(AgentEvent(question: prompt(1), settled: true))
        h.store.agentSends(AgentEvent(question: prompt(2, pid: 78), settled: true))
        h.app.tick()
        #expect(model.requests.line == nil)
        // Unlocked here, the store reads the vault itself (no change feed):
        // the main screen still hears the agent's consent questions.
        h.unlock()
        h.app.tick()
        #expect(h.store.agentWatches == 2)
        var consent = prompt(3)
        consent.reason = "the vault's default rule is 'ask'"
        h.store.agentSends(AgentEvent(question: consent, settled: false))
        h.app.tick()
        #expect(h.main.consent.bar?.hasPrefix("? ssh[77] asks for SSH key work (SHA256:abc)") == true)
        #expect(model.requests.requests.isEmpty)
    }

    @Test func theRequestToUnlockStillOpenAfterAnUnlockHereIsNotTakenForTheSignaturesQuestion() throws {
        let h = Harness()
        h.app.tick()
        h.store.agentSends(AgentEvent(question: prompt(1), settled: false))
        h.app.tick()
        h.unlock()
        // The main screen subscribes while the agent has not yet seen the
        // unlock: it is told of the request to unlock still open, then asked
        // the signature's consent, then the request is settled.
        h.store.agentSends(AgentEvent(question: prompt(1), settled: false))
        h.app.tick()
        #expect(h.main.consent.bar == nil)
        var consent = prompt(2)
        consent.reason = "the vault's default rule is 'ask'"
        h.store.agentSends(AgentEvent(question: consent, settled: false))
        h.app.tick()
        #expect(
            h.main.consent.bar
                == "? ssh[77] asks for SSH key work (SHA256:abc) to log in to [h]:22 (verified) (SSH agent) · F3 answer"
        )
        h.app.send(.openRequest)
        #expect(h.main.consent.dialog?.id == 2)
        h.store.agentSends(AgentEvent(question: prompt(1), settled: true))
        h.app.tick()
        #expect(h.main.consent.dialog?.id == 2 && h.main.consent.questions.map(\.id) == [2])
    }

    @Test func aConsentQuestionHeardWhileLockedIsLeftToTheNextChannel() throws {
        let h = Harness()
        h.app.tick()
        #expect(h.store.agentWatchIsActive)
        let model = try #require(h.app.unlockModel)
        var consent = prompt(4)
        consent.reason = "the vault's default rule is 'ask'"
        h.store.agentSends(AgentEvent(question: consent, settled: false))
        h.app.tick()
        #expect(model.requests.line == nil)
        #expect(!h.store.agentWatchIsActive)
        // It listens again a moment later, for requests to unlock.
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.store.agentWatches == 2 && h.store.agentWatchIsActive)
    }
}

import FobAgent
import FobStore
import Foundation
import Testing

@testable import FobViewModels

private func prompt(_ id: UInt64, item: String = "github.com / ana") -> AccessPrompt {
    AccessPrompt(
        id: id, pid: 4242, program: "/usr/bin/git", parents: "bash[12]", workingDirectory: "/home/ana",
        terminal: "", item: item, channel: "fob get", reason: "the vault's default rule is 'ask'", leaseSeconds: 900)
}

/// The request bar and dialog: questions come from the feed, F3 opens the
/// oldest, an answer goes to the agent once, and a question settled
/// elsewhere leaves the bar and closes its dialog.
@Suite struct ConsentDeskTests {
    private final class Replies {
        var sent: [(UInt64, AccessAnswer)] = []
        var failure: KeychainError?
    }

    private func desk() -> (ConsentDesk, MainModel, Replies) {
        let model = MainModel(generatorSettings: .init())
        let replies = Replies()
        let desk = ConsentDesk(model: model, inbox: ConsentInbox()) { (id, answer) throws(KeychainError) in
            if let failure = replies.failure { throw failure }
            replies.sent.append((id, answer))
        }
        return (desk, model, replies)
    }

    @Test func theBarNamesTheOldestRequestAndCountsTheOthers() {
        let (desk, model, _) = desk()
        #expect(model.consent.bar == nil)
        desk.inbox.post(AgentEvent(question: prompt(1), settled: false))
        desk.inbox.post(AgentEvent(question: prompt(2, item: "npm / ci"), settled: false))
        desk.poll()
        #expect(model.consent.bar == "? git[4242] asks for github.com / ana (fob get) · F3 answer · +1 more")
    }

    @Test func aMinutesAnswerSendsTheLeaseOnceAndSaysSo() {
        let (desk, model, replies) = desk()
        desk.inbox.post(AgentEvent(question: prompt(7), settled: false))
        desk.poll()
        guard case .show(.consent) = desk.open() else {
            Issue.record("F3 did not open the dialog")
            return
        }
        #expect(!desk.handle(.answerRequest(.minutes)))
        #expect(replies.sent.count == 1 && replies.sent[0].0 == 7 && replies.sent[0].1 == .lease(seconds: 900))
        #expect(model.consent.questions.isEmpty && model.consent.bar == nil)
        #expect(model.form.message == .success("Allowed git[4242] to read github.com / ana for 15 min"))
    }

    @Test func escLeavesTheRequestInTheBar() {
        let (desk, model, replies) = desk()
        desk.inbox.post(AgentEvent(question: prompt(3), settled: false))
        desk.poll()
        _ = desk.open()
        #expect(!desk.handle(.dismiss))
        #expect(replies.sent.isEmpty && model.consent.dialog == nil && model.consent.questions.count == 1)
    }

    @Test func aRequestSettledElsewhereClosesItsDialog() {
        let (desk, model, _) = desk()
        desk.inbox.post(AgentEvent(question: prompt(5), settled: false))
        desk.poll()
        _ = desk.open()
        desk.inbox.post(AgentEvent(question: prompt(5), settled: true))
        #expect(desk.poll())
        #expect(model.consent.dialog == nil && model.consent.bar == nil)
    }

    @Test func anAnswerTooLateSaysTheRequestWasSettled() {
        let (desk, model, replies) = desk()
        replies.failure = .itemNotFound("question 4 is no longer open")
        desk.inbox.post(AgentEvent(question: prompt(4), settled: false))
        desk.poll()
        _ = desk.open()
        _ = desk.handle(.answerRequest(.deny))
        #expect(model.form.message == .warning("The request of git[4242] for github.com / ana was already settled"))
    }

    @Test func f3WithNothingWaitingSaysSo() {
        let (desk, model, _) = desk()
        guard case .stay = desk.open() else {
            Issue.record("F3 opened something")
            return
        }
        #expect(model.form.message == .info("No request waits for an answer"))
    }
}

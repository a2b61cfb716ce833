import FobStore
import FobSystem
import Foundation
import Testing

@testable import FobAgent

private let question = AccessQuestion(
    context: AccessContext(
        requester: Requester(
            pid: 77, uid: 1000, executable: "/usr/bin/git", identity: nil, workingDirectory: "/home/ana/src",
            parents: [ProcessSummary(pid: 12, executable: "/bin/bash", name: "bash")], terminal: nil,
            via: ProcessSummary(pid: 78, executable: "/usr/bin/fob", name: "fob")),
        channel: .command("get")),
    item: "github.com / ana", reason: "the vault's default rule is 'ask'")

/// An answer handed from the asking thread to the test.
private final class AnswerBox: @unchecked Sendable {
    private let lock = NSLock()
    private var answer: AccessOutcome?
    func set(_ value: AccessOutcome) { lock.withLock { answer = value } }
    func get() -> AccessOutcome? { lock.withLock { answer } }
}

/// The terminal UI as the first channel: a question reaches only the
/// subscribers that are terminal UIs, the first answer wins, and with no UI
/// (or none answering in time) the next channel asks.
@Suite struct TerminalUIAskerTests {
    /// The first question event `id` hears, waiting at most 2 s.
    private func firstQuestion(_ subscribers: AgentSubscribers, _ id: Int) -> AgentEvent? {
        for _ in 0..<40 {
            if let event = subscribers.next(id, timeout: 0.05)?.first { return event }
        }
        return nil
    }

    @Test func withNoTerminalUIOpenItDoesNotAsk() {
        let subscribers = AgentSubscribers()
        let plain = subscribers.add()
        let asker = TerminalUIAsker(subscribers: subscribers)
        #expect(asker.ask(question, timeout: 5) == .unreachable)
        #expect(subscribers.next(plain!, timeout: 0) == [])
    }

    @Test func theFirstAnswerWinsAndEveryUIHearsItSettled() throws {
        let subscribers = AgentSubscribers()
        let ui1 = try #require(subscribers.add(terminalUI: true))
        let ui2 = try #require(subscribers.add(terminalUI: true))
        let other = try #require(subscribers.add())
        let asker = TerminalUIAsker(subscribers: subscribers)
        let result = AnswerBox()
        let thread = Thread { result.set(asker.ask(question, timeout: 30)) }
        thread.start()
        let asked = try #require(firstQuestion(subscribers, ui1))
        #expect(asked.kind == .question)
        let prompt = try #require(asked.prompt)
        #expect(prompt.item == "github.com / ana")
        #expect(prompt.channel == "fob get")
        #expect(prompt.parents == "bash[12]")
        #expect(prompt.terminal == "")
        #expect(firstQuestion(subscribers, ui2)?.prompt?.id == prompt.id)
        #expect(asker.settle(prompt.id, with: .lease(seconds: 600)))
        #expect(!asker.settle(prompt.id, with: .deny))
        let settled = try #require(firstQuestion(subscribers, ui2))
        #expect(settled.kind == .settled && settled.prompt?.id == prompt.id)
        while result.get() == nil { _ = subscribers.next(ui1, timeout: 0.01) }
        #expect(result.get() == .answered(.lease(seconds: 600)))
        #expect(subscribers.next(other, timeout: 0) == [])
    }

    @Test func noAnswerInTimeGoesToTheNextChannel() throws {
        let subscribers = AgentSubscribers()
        let ui = try #require(subscribers.add(terminalUI: true))
        let asker = TerminalUIAsker(subscribers: subscribers)
        #expect(asker.ask(question, timeout: 0.1) == .unanswered)
        let events = subscribers.next(ui, timeout: 0) ?? []
        #expect(events.map(\.kind) == [.question, .settled])
        #expect(!asker.settle(events[0].prompt!.id, with: .once))
    }

    @Test func aQuestionAndItsAnswerSurviveTheWire() throws {
        let prompt = AccessPrompt(question, id: 9, leaseSeconds: 900)
        let event = AgentEvent(question: prompt, settled: false)
        let bytes = event.encoded()
        let decoded = try bytes.withUnsafeBytes { try AgentEvent(MessageReader($0)) }
        #expect(decoded == event)
        for answer in [AccessAnswer.once, .lease(seconds: 900), .untilLock, .always, .deny] {
            let request = AgentRequest.answer(question: 9, answer).encoded()
            guard case .answer(9, let back) = try request.withUnsafeBytes({ try AgentRequest.decode($0) }) else {
                Issue.record("not an answer")
                continue
            }
            #expect(back == answer)
        }
        #expect(throws: AgentProtocolError.badField("an answer")) {
            try [UInt8]([9]).withUnsafeBytes { try AccessAnswer(wire: $0) }
        }
    }
}

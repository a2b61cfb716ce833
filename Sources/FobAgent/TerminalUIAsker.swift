import FobStore
import FobSystem
import FoundationEssentials

/// Asks in the open terminal UIs of this vault, the first channel: the
/// question goes to every subscriber that is Fob's own terminal UI (an
/// ``AgentEvent/Kind/question`` event), and the first answer that comes
/// back from a terminal UI's connection (``AgentRequest/answer(question:_:)``)
/// settles it; then every UI hears ``AgentEvent/Kind/settled`` and drops
/// the question. With no terminal UI open, or none answering within the
/// timeout, the next channel asks.
public final class TerminalUIAsker: AccessAsker, @unchecked Sendable {
    private let condition = Condition()
    private var open: [UInt64: AccessAnswer?] = [:]
    private var lastID: UInt64 = 0
    private let subscribers: AgentSubscribers
    /// The length of the "minutes" answer's lease, in seconds (15 minutes).
    public var leaseSeconds: Double = 900

    init(subscribers: AgentSubscribers) {
        self.subscribers = subscribers
    }

    /// - Returns: the answer; ``AccessOutcome/unreachable`` with no terminal
    ///   UI open, or when the last one went away before answering;
    ///   ``AccessOutcome/unanswered`` when none answered within `timeout`.
    public func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        guard subscribers.hasTerminalUI else { return .unreachable }
        condition.lock()
        lastID += 1
        let id = lastID
        open[id] = .some(nil)
        condition.unlock()
        let prompt = AccessPrompt(question, id: id, leaseSeconds: leaseSeconds)
        subscribers.publish([AgentEvent(question: prompt, settled: false)], toTerminalUIsOnly: true)
        condition.lock()
        let until = Date(timeIntervalSinceNow: timeout)
        while case .some(nil) = open[id], subscribers.hasTerminalUI {
            if !condition.wait(until: until) { break }
        }
        let answer = open.removeValue(forKey: id) ?? nil
        let stillOpen = subscribers.hasTerminalUI
        condition.unlock()
        subscribers.publish([AgentEvent(question: prompt, settled: true)], toTerminalUIsOnly: true)
        if let answer { return .answered(answer) }
        return stillOpen ? .unanswered : .unreachable
    }

    /// Settles question `id` with `answer`, when it still waits.
    /// - Returns: `false` when no such question waits (answered already
    ///   from another UI, timed out, or never asked).
    public func settle(_ id: UInt64, with answer: AccessAnswer) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard case .some(nil) = open[id] else { return false }
        open[id] = .some(answer)
        condition.broadcast()
        return true
    }

    /// Wakes a waiting question when the last terminal UI goes away.
    func subscribersChanged() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}

import FobStore
import FobSystem
import FoundationEssentials

/// Asks in the open terminal UIs of this vault, the first channel: the
/// question goes to every subscriber that is Fob's own terminal UI (an
/// ``AgentEvent/Kind/question`` event), and the first answer that comes
/// back from a terminal UI's connection (``AgentRequest/answer(question:_:)``)
/// settles it; then every UI hears ``AgentEvent/Kind/settled`` and drops
/// the question. A requester with a terminal of its own is told there
/// that the question waits in the terminal UI. With no terminal UI open,
/// or none answering within the timeout, the next channel asks.
public final class TerminalUIAsker: AccessAsker, @unchecked Sendable {
    private let condition = Condition()
    private var open: [UInt64: AccessAnswer?] = [:]
    /// The questions of ``open``, for a terminal UI that subscribes while they wait.
    private var prompts: [UInt64: AccessPrompt] = [:]
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
        let prompt = put(question)
        TerminalAsker.tell(
            question.context.requester,
            "\nfob: asking in Fob's terminal UI (F3 there answers) for up to \(Int(timeout.rounded())) s\n")
        condition.lock()
        let until = Date(timeIntervalSinceNow: timeout)
        let id = prompt.id
        while case .some(nil) = open[id], subscribers.hasTerminalUI {
            if !condition.wait(until: until) { break }
        }
        let answer = open.removeValue(forKey: id) ?? nil
        prompts[id] = nil
        let stillOpen = subscribers.hasTerminalUI
        condition.unlock()
        subscribers.publish([AgentEvent(question: prompt, settled: true)], toTerminalUIsOnly: true)
        if let answer { return .answered(answer) }
        return stillOpen ? .unanswered : .unreachable
    }

    /// Asks the open terminal UIs to unlock the vault for a request that
    /// found it locked (an SSH signature): the question goes to them as a
    /// ``AgentEvent/Kind/question`` event, which a UI on its lock screen
    /// shows above its master password field; the person answers by
    /// unlocking there (the UI hands the vault to the agent). A deny
    /// answer (``settle(_:with:)`` from a UI's dialog) refuses.
    /// - Parameters:
    ///   - question: who asks, for what; its reason says the vault is locked.
    ///   - timeout: how long to wait, in seconds.
    ///   - isUnlocked: whether the agent holds the vault unlocked now, checked
    ///     every ``unlockPollSeconds`` seconds.
    /// - Returns: ``AccessOutcome/answered(_:)`` `.once` when the vault was
    ///   unlocked, `.deny` when a UI refused; ``AccessOutcome/unreachable``
    ///   with no terminal UI open (or when the last went away);
    ///   ``AccessOutcome/unanswered`` when none unlocked in time.
    public func askUnlock(_ question: AccessQuestion, timeout: Double, isUnlocked: () -> Bool) -> AccessOutcome {
        guard subscribers.hasTerminalUI else { return .unreachable }
        let prompt = put(question)
        TerminalAsker.tell(
            question.context.requester,
            "\nfob: asking in Fob's terminal UI (F3 there answers) for up to \(Int(timeout.rounded())) s\n")
        let id = prompt.id
        let until = Date(timeIntervalSinceNow: timeout)
        var unlocked = isUnlocked()
        condition.lock()
        while !unlocked, case .some(nil) = open[id], subscribers.hasTerminalUI, Date() < until {
            _ = condition.wait(until: min(until, Date(timeIntervalSinceNow: TerminalUIAsker.unlockPollSeconds)))
            condition.unlock()
            unlocked = isUnlocked()
            condition.lock()
        }
        let answer = open.removeValue(forKey: id) ?? nil
        prompts[id] = nil
        let stillOpen = subscribers.hasTerminalUI
        condition.unlock()
        subscribers.publish([AgentEvent(question: prompt, settled: true)], toTerminalUIsOnly: true)
        if unlocked { return .answered(.once) }
        if answer == .deny { return .answered(.deny) }
        return stillOpen ? .unanswered : .unreachable
    }

    /// Numbers `question`, keeps it open and puts it to every terminal UI.
    private func put(_ question: AccessQuestion) -> AccessPrompt {
        condition.lock()
        lastID += 1
        let prompt = AccessPrompt(question, id: lastID, leaseSeconds: leaseSeconds)
        open[prompt.id] = .some(nil)
        prompts[prompt.id] = prompt
        condition.unlock()
        subscribers.publish([AgentEvent(question: prompt, settled: false)], toTerminalUIsOnly: true)
        return prompt
    }

    /// The questions waiting now, oldest first, as events: what a terminal
    /// UI that subscribes meanwhile is told (one that unlocked the vault a
    /// moment ago is asked the signature's consent this way).
    /// - Parameter unlockRequests: whether requests to unlock
    ///   (``VaultSSHApproval/lockedReason``) are told too: not once the vault
    ///   is unlocked, which answers them (``askUnlock(_:timeout:isUnlocked:)``
    ///   sees it within ``unlockPollSeconds``); a UI that just unlocked
    ///   would else take one for the consent question that follows.
    func waitingQuestions(unlockRequests: Bool = true) -> [AgentEvent] {
        condition.lock()
        defer { condition.unlock() }
        return prompts.keys.sorted().compactMap { id in
            guard let prompt = prompts[id], unlockRequests || prompt.reason != VaultSSHApproval.lockedReason else {
                return nil
            }
            return AgentEvent(question: prompt, settled: false)
        }
    }

    /// How often ``askUnlock(_:timeout:isUnlocked:)`` looks whether the vault was unlocked, in seconds.
    static let unlockPollSeconds = 0.1

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

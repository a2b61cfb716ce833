import FobStore
import FobSystem
import FoundationEssentials

/// What a person answered to an access question.
public enum AccessAnswer: Sendable, Equatable {
    /// This one request.
    case once
    /// This program, for this item, for so many seconds (a lease).
    case lease(seconds: Double)
    /// This program, for this item, until the vault locks.
    case untilLock
    /// This program, for this item, always: written into the item's rule.
    case always
    /// Refused.
    case deny
}

/// How asking ended: an answer, or why there is none. The access log
/// keeps the two failures apart (``AccessDecision/noChannel``,
/// ``AccessDecision/timedOut``); both fail the request with
/// errSecInteractionNotAllowed.
public enum AccessOutcome: Sendable, Equatable {
    /// The person answered.
    case answered(AccessAnswer)
    /// No one could be asked: the channel does not exist for this requester
    /// (no terminal UI open, no terminal, no pinentry), could not be opened,
    /// or the program asked too often.
    case unreachable
    /// The question was put, and no one answered before the timeout.
    case unanswered

    /// The answer, or `nil` for either failure.
    public var answer: AccessAnswer? {
        if case .answered(let answer) = self { return answer }
        return nil
    }
}

/// One question for a person: who asks for which item, through what, and why.
public struct AccessQuestion: Sendable {
    /// Who asks and how.
    public var context: AccessContext
    /// The item's name (``Item/displayName``).
    public var item: String
    /// Why the rules did not settle it (the first item's reason, for many).
    public var reason: String
    /// How many items the one request reads (a bulk read is one question).
    public var itemCount: Int

    /// - Parameters: as the properties.
    public init(context: AccessContext, item: String, reason: String, itemCount: Int = 1) {
        self.context = context
        self.item = item
        self.reason = reason
        self.itemCount = itemCount
    }

    /// What a question asks for: "the secret of NAME", or for many items
    /// "the secrets of 12 items: NAME, NAME, NAME, …".
    public var subject: String {
        itemCount == 1 ? "the secret of \(item)" : "the secrets of \(item)"
    }

    /// The items' names for a question: one name alone; for many, how many
    /// and the first three, with `…` when there are more.
    /// - Parameter names: each item's ``Item/displayName``.
    public static func naming(_ names: [String]) -> String {
        guard names.count > 1 else { return names.first ?? "" }
        let shown = names.prefix(3).joined(separator: "; ")
        return "\(names.count) items: \(shown)\(names.count > 3 ? "; …" : "")"
    }
}

/// A way to ask a person (the requester's terminal, pinentry, the terminal UI).
public protocol AccessAsker: Sendable {
    /// Asks, waiting at most `timeout` seconds.
    /// - Returns: the answer; ``AccessOutcome/unreachable`` when this
    ///   channel cannot reach anyone (no terminal); ``AccessOutcome/unanswered``
    ///   when the question was put and nobody answered in time.
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome
}

/// What the agent records of every read, refusal, question, lease and rule
/// change: the vault's access log (``AccessLogRecorder``) in the agent.
public protocol AccessRecorder: Sendable {
    /// Records one entry; never blocks on the disk, never throws to the caller.
    /// - Important: an entry names items and programs, never a secret's bytes.
    func record(_ entry: AccessLogEntry)
}

/// A recorder that keeps nothing.
public struct NoAccessRecord: AccessRecorder {
    public init() {}
    public func record(_ entry: AccessLogEntry) {}
}

/// The agent's consent state: leases (which die at lock), questions in
/// flight (one per program and item, however many requests wait on it),
/// and how many questions each program started lately.
public final class AccessGate: @unchecked Sendable {
    private let lock = Lock()
    private var leases: [LeaseKey: Double] = [:]
    private var pending: [QuestionKey: PendingQuestion] = [:]
    private var asked: [ProgramKey: [Double]] = [:]
    private let clock: any AgentClock
    /// The channels, best first.
    public var askers: [any AccessAsker]
    /// Where events go.
    public var recorder: any AccessRecorder
    /// How long a question waits for an answer, in seconds.
    public var timeout: Double = 60
    /// The most questions one program may start in ``rateWindow`` seconds.
    public var rateLimit = 3
    /// The window of ``rateLimit``, in seconds.
    public var rateWindow: Double = 60

    /// - Parameters:
    ///   - clock: the agent's clock (leases are counted on it).
    ///   - askers: the channels, best first.
    ///   - recorder: where events go.
    public init(clock: any AgentClock, askers: [any AccessAsker], recorder: any AccessRecorder = NoAccessRecord()) {
        self.clock = clock
        self.askers = askers
        self.recorder = recorder
    }

    struct LeaseKey: Hashable {
        var program: ProgramKey
        var item: UUID
    }

    /// A question's key: the program and every item it asks about.
    struct QuestionKey: Hashable {
        var program: ProgramKey
        var items: [UUID]
    }

    /// A question in flight: later requests for the same program and item
    /// wait for its answer instead of asking again.
    final class PendingQuestion: @unchecked Sendable {
        private let condition = Condition()
        private var outcome: AccessOutcome?

        /// Waits for ``finish(_:)``.
        func wait() -> AccessOutcome {
            condition.lock()
            defer { condition.unlock() }
            while outcome == nil { condition.wait() }
            return outcome ?? .unreachable
        }

        /// Gives every waiter the outcome.
        func finish(_ value: AccessOutcome) {
            condition.lock()
            outcome = value
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Whether a lease lets this program read this item now (an expired one is dropped).
    public func hasLease(_ context: AccessContext, item: UUID) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let until = leases[LeaseKey(program: context.program, item: item)] else { return false }
        if until >= clock.seconds { return true }
        leases[LeaseKey(program: context.program, item: item)] = nil
        return false
    }

    /// Why `outcome` holds no answer, as the log and the error say it: "no
    /// one could be asked", or "no one answered within 60 s" (``timeout``).
    public func failure(_ outcome: AccessOutcome) -> String {
        outcome == .unanswered ? AccessPolicy.unansweredPhrase + "\(Int(timeout)) s" : "no one could be asked"
    }

    /// Ends every lease (at lock).
    public func endLeases() {
        lock.lock()
        defer { lock.unlock() }
        leases.removeAll()
    }

    /// Asks about one item on the best channel, once per program and item
    /// however many requests wait; grants the lease an answer gives.
    /// - Returns: as ``ask(_:items:)``.
    public func ask(_ question: AccessQuestion, item: UUID) -> AccessOutcome {
        ask(question, items: [item])
    }

    /// Asks one question about every item of one request (a bulk read is
    /// one question, counted once by the rate limit), once per program and
    /// set of items however many requests wait; a lease an answer gives
    /// covers each item.
    /// Each channel is tried in turn until one answers.
    /// - Returns: the answer; ``AccessOutcome/unanswered`` when some channel
    ///   put the question and no one answered in time;
    ///   ``AccessOutcome/unreachable`` when no channel reached anyone, or
    ///   the program asked more than ``rateLimit`` times in ``rateWindow``.
    public func ask(_ question: AccessQuestion, items: [UUID]) -> AccessOutcome {
        let key = QuestionKey(program: question.context.program, items: items.sorted { $0.uuidString < $1.uuidString })
        lock.lock()
        if let waiting = pending[key] {
            lock.unlock()
            return waiting.wait()
        }
        let now = clock.seconds
        var recent = (asked[key.program] ?? []).filter { now - $0 < rateWindow }
        guard recent.count < rateLimit else {
            lock.unlock()
            return .unreachable
        }
        recent.append(now)
        asked[key.program] = recent
        let question0 = PendingQuestion()
        pending[key] = question0
        lock.unlock()
        var outcome = AccessOutcome.unreachable
        for asker in askers {
            switch asker.ask(question, timeout: timeout) {
            case .answered(let answer): outcome = .answered(answer)
            case .unanswered: outcome = .unanswered
            case .unreachable: continue
            }
            if case .answered = outcome { break }
        }
        lock.lock()
        let until: Double?
        switch outcome.answer {
        case .lease(let seconds)?: until = clock.seconds + seconds
        case .untilLock?: until = .infinity
        default: until = nil
        }
        if let until { for item in items { leases[LeaseKey(program: key.program, item: item)] = until } }
        pending[key] = nil
        lock.unlock()
        question0.finish(outcome)
        return outcome
    }
}

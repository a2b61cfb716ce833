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
    /// - Returns: the answer, or `nil` when this channel cannot reach anyone
    ///   (no terminal) or nobody answered in time.
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessAnswer?
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
        private var answer: AccessAnswer??

        /// Waits for ``finish(_:)``.
        func wait() -> AccessAnswer? {
            condition.lock()
            defer { condition.unlock() }
            while answer == nil { condition.wait() }
            return answer ?? nil
        }

        /// Gives every waiter the answer.
        func finish(_ value: AccessAnswer?) {
            condition.lock()
            answer = .some(value)
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

    /// Ends every lease (at lock).
    public func endLeases() {
        lock.lock()
        defer { lock.unlock() }
        leases.removeAll()
    }

    /// Asks about one item on the best channel, once per program and item
    /// however many requests wait; grants the lease an answer gives.
    /// - Returns: the answer, or `nil` when no channel reached anyone in time
    ///   or the program asked too often.
    public func ask(_ question: AccessQuestion, item: UUID) -> AccessAnswer? {
        ask(question, items: [item])
    }

    /// Asks one question about every item of one request (a bulk read is
    /// one question, counted once by the rate limit), once per program and
    /// set of items however many requests wait; a lease an answer gives
    /// covers each item.
    /// - Returns: the answer, or `nil` when no channel reached anyone in time
    ///   or the program asked too often.
    public func ask(_ question: AccessQuestion, items: [UUID]) -> AccessAnswer? {
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
            return nil
        }
        recent.append(now)
        asked[key.program] = recent
        let question0 = PendingQuestion()
        pending[key] = question0
        lock.unlock()
        var answer: AccessAnswer?
        for asker in askers {
            answer = asker.ask(question, timeout: timeout)
            if answer != nil { break }
        }
        lock.lock()
        let until: Double?
        switch answer {
        case .lease(let seconds)?: until = clock.seconds + seconds
        case .untilLock?: until = .infinity
        default: until = nil
        }
        if let until { for item in items { leases[LeaseKey(program: key.program, item: item)] = until } }
        pending[key] = nil
        lock.unlock()
        question0.finish(answer)
        return answer
    }
}

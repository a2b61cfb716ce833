import FobAccess
import FobAgent
import FobStore
import FoundationEssentials

/// One consent question of the agent as the UI shows it (from the feed's
/// ``AccessPrompt``; every text already safe to show).
public struct ConsentQuestion: Sendable, Equatable {
    /// The question's number (the agent's).
    public let id: UInt64
    /// The requester's process id.
    public let pid: Int32
    /// The requester's executable path, and its last component.
    public let program: String, programName: String
    /// The parent chain, shortened; empty when unknown.
    public let parents: String
    /// The requester's working directory.
    public let workingDirectory: String
    /// The controlling terminal; empty when it has none.
    public let terminal: String
    /// The item (`service / account`).
    public let item: String
    /// The channel (`fob get`, `Secret Service`, `git`, …).
    public let channel: String
    /// The lease answer's length in words (`15 minutes`, `1 minute 30 seconds`).
    public var leaseText: String { AccessPrompt.leaseText(seconds: leaseSeconds) }
    /// The lease answer's length, abbreviated for a key legend (`15 min`, `1 min 30 s`).
    public var leaseShortText: String { AccessPrompt.leaseText(seconds: leaseSeconds, short: true) }
    let leaseSeconds: Double

    init(_ prompt: AccessPrompt) {
        self.init(
            id: prompt.id, pid: prompt.pid, program: prompt.program, parents: prompt.parents,
            workingDirectory: prompt.workingDirectory, terminal: prompt.terminal, item: prompt.item,
            channel: prompt.channel, leaseSeconds: prompt.leaseSeconds)
    }

    /// - Parameters: as the properties; `leaseSeconds` at least 60.
    init(
        id: UInt64, pid: Int32, program: String, parents: String, workingDirectory: String, terminal: String,
        item: String, channel: String, leaseSeconds: UInt32
    ) {
        self.id = id
        self.pid = pid
        self.program = program
        programName = String(program.split(separator: "/").last ?? Substring(program))
        self.parents = parents
        self.workingDirectory = workingDirectory
        self.terminal = terminal
        self.item = item
        self.channel = channel
        self.leaseSeconds = Double(max(60, leaseSeconds))
    }
}

/// The answers the dialog offers (``Action/answerRequest(_:)``).
public enum ConsentAnswer: Sendable, Equatable {
    /// This program, for this item, until the vault locks.
    case untilLock
    /// This one read.
    case once
    /// This program, for this item, for the question's lease minutes.
    case minutes
    /// This program, for this item, always (written into the item's rule).
    case always
    /// Refused.
    case deny
}

/// The agent's consent questions as the main screen shows them: the
/// request bar (one line above the status line, taking no keys) and the
/// dialog that F3 opens on the oldest question.
public struct ConsentModel: Sendable, Equatable {
    /// The questions waiting, oldest first.
    public internal(set) var questions: [ConsentQuestion] = []
    /// The question the dialog shows (``Overlay/consent``), or `nil`.
    public internal(set) var dialog: ConsentQuestion?

    /// The request bar's text, or `nil` with no question waiting:
    /// `? git[77] asks for github.com / ana (fob get) · F3 answer`, with
    /// `+N more` when several wait.
    public var bar: String? { barParts.map { $0.question + $0.answer } }

    /// The request bar in two parts: the question, which a narrow screen
    /// shortens, and how to answer it (` · F3 answer`, with ` · +N more`),
    /// which it keeps whole; `nil` while no question waits.
    public var barParts: (question: String, answer: String)? {
        guard let first = questions.first else { return nil }
        let question = "? \(first.programName)[\(first.pid)] asks for \(first.item) (\(first.channel))"
        var answer = " · F3 answer"
        if questions.count > 1 { answer += " · +\(questions.count - 1) more" }
        return (question, answer)
    }
}

/// Questions heard on the change feed's thread, handed to the UI thread.
final class ConsentInbox: @unchecked Sendable {
    private let lock = Lock()
    private var events: [AgentEvent] = []

    /// Keeps a ``AgentEvent/Kind/question`` or ``AgentEvent/Kind/settled`` event.
    func post(_ event: AgentEvent) { lock.withLock { events.append(event) } }

    /// The events kept since the last call.
    func take() -> [AgentEvent] {
        lock.withLock {
            defer { events = [] }
            return events
        }
    }
}

/// Owns the consent questions of the main screen (``MainModel/consent``):
/// keeps them from the feed, opens the dialog, and sends the person's answer
/// to the agent (the first answer of any open UI wins; a question settled
/// elsewhere goes away here).
final class ConsentDesk {
    private let model: MainModel
    /// Sends an answer to the agent (the store's ``KeychainStore/answer(question:_:)``).
    private let reply: (UInt64, AccessAnswer) throws(KeychainError) -> Void
    /// Where the feed's thread leaves questions (``ItemRefresh`` posts them).
    let inbox: ConsentInbox

    /// - Parameters:
    ///   - model: the screen's state (``MainModel/consent``).
    ///   - inbox: where the feed's questions arrive.
    ///   - reply: sends an answer (the store's).
    init(
        model: MainModel, inbox: ConsentInbox, reply: @escaping (UInt64, AccessAnswer) throws(KeychainError) -> Void
    ) {
        self.model = model
        self.inbox = inbox
        self.reply = reply
    }

    /// Takes in the questions asked and settled since the last tick.
    ///
    /// A request to unlock (``VaultSSHApproval/lockedReason``) is not a
    /// consent question: the vault this screen shows is unlocked, which
    /// answers it, and the agent settles it within a moment. It is heard
    /// here when this UI subscribes just after unlocking (the agent tells a
    /// new subscriber every question still open); shown, it would take F3's
    /// answer while the signature's own question waited unanswered.
    /// - Returns: whether the question the dialog showed was settled elsewhere.
    @discardableResult
    func poll() -> Bool {
        var closed = false
        for event in inbox.take() {
            guard let prompt = event.prompt else { continue }
            switch event.kind {
            case .question where prompt.reason == VaultSSHApproval.lockedReason:
                continue
            case .question:
                if !model.consent.questions.contains(where: { $0.id == prompt.id }) {
                    model.consent.questions.append(ConsentQuestion(prompt))
                }
            case .settled:
                model.consent.questions.removeAll { $0.id == prompt.id }
                if model.consent.dialog?.id == prompt.id {
                    model.consent.dialog = nil
                    closed = true
                }
            default: continue
            }
        }
        return closed
    }

    /// F3: the dialog on the oldest question, or a message when none waits.
    func open() -> Transition {
        guard let first = model.consent.questions.first else {
            model.form.message = .info("No request waits for an answer")
            return .stay
        }
        model.consent.dialog = first
        return .show(.consent)
    }

    /// A key in the dialog: an answer (sent to the agent), or Esc (the
    /// dialog closes, the question stays in the bar).
    /// - Returns: whether the dialog stays open.
    func handle(_ action: Action) -> Bool {
        guard let prompt = model.consent.dialog else { return false }
        switch action {
        case .answerRequest(let answer):
            send(answer, to: prompt)
            return false
        case .dismiss, .cancel:
            model.consent.dialog = nil
            return false
        default:
            return true
        }
    }

    private func send(_ choice: ConsentAnswer, to prompt: ConsentQuestion) {
        let answer: AccessAnswer
        switch choice {
        case .untilLock: answer = .untilLock
        case .once: answer = .once
        case .minutes: answer = .lease(seconds: prompt.leaseSeconds)
        case .always: answer = .always
        case .deny: answer = .deny
        }
        model.consent.dialog = nil
        model.consent.questions.removeAll { $0.id == prompt.id }
        let who = "\(prompt.programName)[\(prompt.pid)]"
        do {
            try reply(prompt.id, answer)
            model.form.message = ConsentDesk.said(answer, who: who, item: prompt.item)
        } catch .itemNotFound {
            model.form.message = .warning("The request of \(who) for \(prompt.item) was already settled")
        } catch {
            model.form.message = .error("The answer did not reach the agent: \(error.description)")
        }
    }

    /// The status line after an answer.
    static func said(_ answer: AccessAnswer, who: String, item: String) -> StatusLine {
        switch answer {
        case .once: return .success("Allowed \(who) to read \(item) once")
        case .lease(let seconds): return .success("Allowed \(who) to read \(item) for \(Int(seconds / 60)) min")
        case .untilLock: return .success("Allowed \(who) to read \(item) until the vault locks")
        case .always: return .success("Always allowed \(who) to read \(item)")
        case .deny: return .info("Denied \(who) the secret of \(item)")
        }
    }
}

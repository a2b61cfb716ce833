import FobAccess
import FobAgent
import FobStore
import FoundationEssentials

/// What the unlock screen shows of the agent's requests to unlock (an SSH
/// signature that found the vault locked): the requests waiting, oldest
/// first, and the line above the master password field. Unlocking answers
/// them all: the agent, which waits, sees the vault unlocked.
public struct UnlockRequestsModel: Sendable, Equatable {
    /// One request: who waits for what.
    public struct Request: Sendable, Equatable {
        /// The agent's number of the question.
        public let id: UInt64
        /// The requester's program name and pid.
        public let programName: String, pid: Int32
        /// What it waits for (`SSH key work (SHA256:…) to log in to github.com (verified)`).
        public let item: String
    }

    /// The requests waiting, oldest first.
    public internal(set) var requests: [Request] = []

    /// The line to show, or `nil` with none waiting:
    /// `? ssh[77] waits for SSH key work (…) to log in to … · unlock to go on`,
    /// with `+N more` when several wait.
    public var line: String? {
        guard let first = requests.first else { return nil }
        var text = "? \(first.programName)[\(first.pid)] waits for \(first.item) · unlock to go on"
        if requests.count > 1 { text += " · +\(requests.count - 1) more" }
        return text
    }

    /// Takes in a ``AgentEvent/Kind/question`` or ``AgentEvent/Kind/settled`` event.
    mutating func apply(_ event: AgentEvent) {
        guard let prompt = event.prompt else { return }
        switch event.kind {
        case .question where !requests.contains(where: { $0.id == prompt.id }):
            requests.append(Request(id: prompt.id, programName: prompt.programName, pid: prompt.pid, item: prompt.item))
        case .settled:
            requests.removeAll { $0.id == prompt.id }
        default:
            break
        }
    }
}

/// Listens to the agent while the unlock screen shows (``KeychainStore/watchAgent(_:)``),
/// and hands its requests to the screen's ``UnlockModel/requests`` at each
/// tick. Asks the agent again now and then when no agent ran, or its feed ended.
final class UnlockRequestFeed {
    private let store: any KeychainStore
    private let inbox = ConsentInbox()
    private var watch: (any StoreWatch)?
    private var lastTry: Date = .distantPast

    /// How long to wait before listening again when no agent answered, in seconds.
    static let retrySeconds: TimeInterval = 1

    init(store: any KeychainStore) { self.store = store }

    deinit { watch?.cancel() }

    /// Listens (again, when needed) and moves what arrived into `model`.
    ///
    /// A consent question (one that is not a request to unlock) means the
    /// vault was unlocked elsewhere while this screen stayed locked: it
    /// cannot be answered here, so the feed stops listening for a while and
    /// the agent, which no longer counts this UI, asks on its next channel.
    func tick(_ model: UnlockModel, now: Date) {
        if watch?.isActive != true, now.timeIntervalSince(lastTry) >= UnlockRequestFeed.retrySeconds {
            lastTry = now
            watch?.cancel()
            watch = store.watchAgent { [inbox] event in
                if event.kind == .question || event.kind == .settled { inbox.post(event) }
            }
        }
        for event in inbox.take() {
            if event.kind == .question, event.prompt?.reason != VaultSSHApproval.lockedReason {
                watch?.cancel()
                watch = nil
                lastTry = now
                continue
            }
            model.requests.apply(event)
        }
    }
}

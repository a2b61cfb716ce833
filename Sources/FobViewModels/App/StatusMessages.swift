import FobStore
import FoundationEssentials

/// The last messages the status line showed, newest last, for the message
/// history (F2). Holds names of items, never a secret.
public struct MessageLog: Sendable, Equatable {
    /// One message and when it was shown.
    public struct Entry: Sendable, Equatable {
        /// When the message was shown.
        public var time: Date
        /// The message.
        public var line: StatusLine
    }

    /// How many messages the log keeps: 20.
    public static let capacity = 20

    /// The messages, oldest first, at most ``capacity``.
    public private(set) var entries: [Entry] = []

    /// An empty log.
    public init() {}

    /// Adds `line` shown at `time`, dropping the oldest beyond ``capacity``.
    mutating func append(_ line: StatusLine, at time: Date) {
        guard !line.isEmpty else { return }
        entries.append(Entry(time: time, line: line))
        if entries.count > MessageLog.capacity { entries.removeFirst(entries.count - MessageLog.capacity) }
    }

    /// Forgets every message.
    mutating func removeAll() { entries = [] }
}

extension StatusLine.Tone {
    /// The symbol that marks a message of this tone besides its colour:
    /// `✓` success, `·` news, `!` warning, `✗` error (ASCII: `+`, `-`, `!`, `x`).
    public func symbol(unicode: Bool) -> String {
        switch self {
        case .success: return unicode ? "✓" : "+"
        case .info: return unicode ? "·" : "-"
        case .warning: return "!"
        case .error: return unicode ? "✗" : "x"
        }
    }
}

extension ItemKey {
    /// `slack.com / ana` (`slack.com` without a user ID), control characters
    /// written out: how the status line names an item.
    public var shortName: String {
        account.isEmpty ? displaySafe(service) : "\(displaySafe(service)) / \(displaySafe(account))"
    }
}

extension ItemKind {
    /// What the secret of an item of this kind is called in messages:
    /// password, token or note.
    var secretName: String {
        switch self {
        case .password: return "password"
        case .token, .oauth: return "token"
        case .note: return "note"
        case .sshKey: return "SSH key"
        }
    }
}

import FobAccess
import FobStore

/// What the terminal UI has said once about a vault and must not say
/// again: each notice by a name, such as ``AccessDefaultNotice/name``.
public protocol NoticeMemory: AnyObject {
    /// Whether the notice `name` was shown before.
    func hasShown(_ name: String) -> Bool
    /// Keeps that the notice `name` was shown (best effort: a memory that
    /// cannot be written shows it again next time, never loses a secret).
    func remember(_ name: String)
}

/// A ``NoticeMemory`` that lasts while the process runs (tests, and a UI
/// with nowhere to keep state).
public final class SessionNoticeMemory: NoticeMemory {
    private var shown: Set<String> = []

    public init() {}

    public func hasShown(_ name: String) -> Bool { shown.contains(name) }

    public func remember(_ name: String) { shown.insert(name) }
}

/// The one-time notice of a vault whose access default is still `any` (one
/// made before access rules): every program of the user reads its items
/// without being asked until `fob access default ask`, which the notice
/// names. Shown on the status line (and so in F2's history) the first time
/// the vault opens in the terminal UI, then never again for that vault.
public enum AccessDefaultNotice {
    /// The notice's name in a ``NoticeMemory``.
    public static let name = "access-default-ask"

    /// The notice's words.
    public static let text =
        "Any program of yours reads this vault's items without asking (access default 'any'); "
        + "'fob access default ask' makes Fob ask first"

    /// The notice for `store`, once: `nil` when its default is not `any`,
    /// when it cannot be read, or when `memory` has shown it already (the
    /// notice is then kept as shown).
    static func take(_ store: any KeychainStore, _ memory: any NoticeMemory) -> StatusLine? {
        guard !memory.hasShown(name), (try? store.accessDefault()) == .any else { return nil }
        memory.remember(name)
        return .info(text)
    }
}

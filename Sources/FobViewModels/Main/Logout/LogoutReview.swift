import FobSessions
import FobStore
import FoundationEssentials

/// The logout review (F8): every item a logout may delete, in a list that
/// scrolls, in two groups: session tokens (selected) and tokens with no
/// expiry (not selected). Space toggles the row under the cursor; Enter
/// deletes the selected ones, clears the clipboard and locks.
public final class LogoutReviewModel {
    /// One row: an item and whether it will be deleted.
    public struct Row: Sendable, Equatable {
        /// The item's key.
        public var key: ItemKey
        /// Its kind (`token` or `oauth`).
        public var kind: ItemKind
        /// Its group.
        public var group: LogoutGroup
        /// When a session token expires, if known.
        public var expires: Date?
        /// Whether Enter deletes it.
        public internal(set) var selected: Bool
    }

    /// The rows: session tokens first, then tokens with no expiry.
    public private(set) var rows: [Row]
    /// The row under the cursor.
    public private(set) var cursor = 0
    /// The service the review is limited to, or `nil` for all.
    public let service: String?

    init(candidates: [LogoutCandidate], service: String?) {
        self.service = service
        rows = candidates.map {
            Row(
                key: ItemKey($0.item), kind: $0.item.kind, group: $0.group, expires: $0.expires,
                selected: $0.group == .session)
        }
    }

    /// The group headings: `Session tokens (N)` before the first row of
    /// that group, `Tokens with no expiry (N)` before the other's.
    public func heading(before index: Int) -> String? {
        guard rows.indices.contains(index) else { return nil }
        let group = rows[index].group
        guard index == 0 || rows[index - 1].group != group else { return nil }
        let count = rows.filter { $0.group == group }.count
        return group == .session
            ? "Session tokens (\(count)): deleted unless unticked"
            : "Tokens with no expiry (\(count)): kept unless ticked"
    }

    /// How many rows Enter deletes.
    public var selectedCount: Int { rows.filter(\.selected).count }

    /// The question, repeating the final count.
    public var question: String {
        let n = selectedCount
        guard n > 0 else {
            guard rows.isEmpty else { return "Nothing ticked: Space ticks an item; Esc cancels" }
            return "Nothing to delete: clear the clipboard and lock? Enter locks, Esc cancels"
        }
        return "Delete \(n) item\(n == 1 ? "" : "s"), clear the clipboard and lock? Enter deletes"
    }

    /// Moves the cursor by `delta` rows, stopping at the ends.
    func move(by delta: Int) {
        guard !rows.isEmpty else { return }
        let target = Int64(cursor) + Int64(delta)
        cursor = Int(max(0, min(Int64(rows.count - 1), target)))
    }

    /// Space: ticks or unticks the row under the cursor.
    func toggle() {
        guard rows.indices.contains(cursor) else { return }
        rows[cursor].selected.toggle()
    }

    /// The keys Enter deletes.
    var selectedKeys: Set<ItemKey> { Set(rows.filter(\.selected).map(\.key)) }
}

import FobStore
import FoundationEssentials

/// The changes undo (Ctrl-Y) can take back, each kept for ``lifetime``
/// seconds from when it was made: a deleted item, or the item as it was
/// before a Save (a rename, a new secret, any attribute). Undo takes the
/// newest first, so two quick deletes are both undone by two undos and
/// neither is lost.
///
/// The items are held whole, their secret, one-time seed and custom field
/// values in ``SecretBytes`` (freed, and so wiped, when dropped); a change is
/// dropped when its time is up, when it is undone, and all of them on lock.
final class UndoBuffer {
    /// What can be undone.
    enum Entry {
        /// This item was deleted: undo adds it back exactly.
        case deleted(Item)
        /// A Save changed the item now stored under `now` (renamed, or not)
        /// and left it at `revision` (0 when the store keeps none); `before`
        /// is the item as it was. Undo puts `before` back only over that
        /// revision: a later change made elsewhere is asked about first.
        case saved(before: Item, now: ItemKey, revision: UInt64)

        /// The change as messages name it: `the delete of github.com / ana`,
        /// `the Save of …`, `the rename of … to …`.
        var what: String {
            switch self {
            case .deleted(let item): return "the delete of \(ItemKey(item).shortName)"
            case .saved(let before, let now, _):
                let was = ItemKey(before)
                return was == now
                    ? "the Save of \(now.shortName)" : "the rename of \(was.shortName) to \(now.shortName)"
            }
        }

        /// The item's name as messages give it (`github.com / ana`).
        var name: String {
            switch self {
            case .deleted(let item): return ItemKey(item).shortName
            case .saved(_, let now, _): return now.shortName
            }
        }
    }

    /// How long a change stays undoable, in seconds.
    static let lifetime: TimeInterval = 10
    /// ``lifetime`` as messages say it.
    static let secondsText = "\(Int(lifetime)) s"

    /// The kept changes, oldest first, each with the time its undo ends.
    private var entries: [(entry: Entry, deadline: Date)] = []

    /// Keeps `entry` until `now` + ``lifetime``, after the changes already kept.
    func record(_ entry: Entry, at now: Date) {
        entries.append((entry, now.addingTimeInterval(UndoBuffer.lifetime)))
    }

    /// This UI put `key` back at `revision` exactly as it was at `previous`
    /// (an undo): the kept Saves that left it at `previous` now expect
    /// `revision`, so that undoing them asks only about changes made elsewhere.
    func follow(_ key: ItemKey, from previous: UInt64, to revision: UInt64) {
        guard previous > 0 else { return }
        for index in entries.indices {
            guard case .saved(let before, let now, let expected) = entries[index].entry, now == key,
                expected == previous
            else { continue }
            entries[index].entry = .saved(before: before, now: now, revision: revision)
        }
    }

    /// Whole seconds (rounded up) until the newest kept change can no
    /// longer be undone, or `nil` when none is kept.
    func secondsLeft(at now: Date) -> Int? {
        expire(at: now)
        guard let newest = entries.last else { return nil }
        return Int(newest.deadline.timeIntervalSince(now).rounded(.up))
    }

    /// The newest kept change, removed from the buffer; `nil` when none is
    /// left or their time is up.
    func take(at now: Date) -> Entry? {
        expire(at: now)
        return entries.popLast()?.entry
    }

    /// The newest kept change, left in the buffer; `nil` when none is left
    /// or their time is up.
    func newest(at now: Date) -> Entry? {
        expire(at: now)
        return entries.last?.entry
    }

    /// Drops the changes whose time is up.
    /// - Returns: whether the newest change was dropped now (the one whose
    ///   message offers Ctrl-Y).
    @discardableResult
    func expire(at now: Date) -> Bool {
        guard let newest = entries.last else { return false }
        entries.removeAll { now >= $0.deadline }
        return now >= newest.deadline
    }

    /// What messages about an undoable change end with: `— Ctrl-Y undoes (10 s)`.
    static let hint = " — Ctrl-Y undoes (\(secondsText))"

    /// Drops every change (their secrets are wiped as they are freed).
    func wipe() {
        entries.removeAll()
    }
}

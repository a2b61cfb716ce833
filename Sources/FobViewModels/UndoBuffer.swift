import FobStore
import FoundationEssentials

/// The last change `z` can undo, kept for ``lifetime`` seconds: a deleted
/// item, or the item as it was before a Save replaced its secret.
///
/// The items are held whole, their secret, one-time seed and custom field
/// values in ``SecretBytes`` (freed, and so wiped, when dropped); the
/// buffer is emptied when its time is up, on the next undoable change and on lock.
final class UndoBuffer {
    /// What can be undone.
    enum Entry {
        /// This item was deleted: undo adds it back exactly.
        case deleted(Item)
        /// A Save replaced the secret of the item now stored under `now`;
        /// `before` is the item as it was.
        case replaced(before: Item, now: ItemKey)
    }

    /// How long a change stays undoable, in seconds.
    static let lifetime: TimeInterval = 10
    /// ``lifetime`` as messages say it.
    static let secondsText = "\(Int(lifetime)) s"

    private var entry: Entry?
    private var deadline: Date?

    /// Keeps `entry` (dropping the one before) until `now` + ``lifetime``.
    func record(_ entry: Entry, at now: Date) {
        self.entry = entry
        deadline = now.addingTimeInterval(UndoBuffer.lifetime)
    }

    /// Whether a change is kept for undo at `now`.
    func canUndo(at now: Date) -> Bool {
        expire(at: now)
        return entry != nil
    }

    /// The kept change, removed from the buffer; `nil` when none or its time is up.
    func take(at now: Date) -> Entry? {
        expire(at: now)
        defer { wipe() }
        return entry
    }

    /// Drops the change once its time is up.
    /// - Returns: whether a change was dropped now.
    @discardableResult
    func expire(at now: Date) -> Bool {
        guard let deadline, now >= deadline else { return false }
        wipe()
        return true
    }

    /// What messages about an undoable change end with: `— z undoes (10 s)`.
    static let hint = " — z undoes (\(secondsText))"

    /// Drops the change (its secrets are wiped as they are freed).
    func wipe() {
        entry = nil
        deadline = nil
    }
}

import FobAccess
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// What a lock carries from one main screen to the next: the generator's
/// settings, the item highlighted, the editor's unsaved edits (an
/// ``EditorDraft`` in wiped memory) or the name of an item whose edits the
/// lock wiped, and whether the message history was wiped (so that the next
/// screen can say so).
struct LockCarryOver {
    /// The password generator's settings, kept for the UI's run.
    private(set) var generatorSettings = PasswordPolicy()
    /// The item highlighted when the screen locked.
    private var selection: ItemKey?
    /// The short name of the item whose unsaved edits the lock wiped.
    private var discardedEdits: String?
    /// Whether a lock wiped a main screen's message history.
    private var messagesWiped = false
    /// The editor's unsaved edits, kept for the unlock.
    private var draft: EditorDraft?

    /// The short name of the item whose edits are kept, or `nil` with none.
    var keptEdits: String? { draft?.name }

    /// The message history's first line after a lock wiped the earlier ones.
    static let messagesWipedNote = "Locking cleared the earlier messages"

    /// Takes what outlasts the lock from `main`, before it is wiped.
    /// - Parameter keepEdits: whether the editor's unsaved edits are kept
    ///   (a lock this UI made) or wiped (a lock made elsewhere, a logout).
    mutating func capture(from main: MainScreen, keepEdits: Bool) {
        generatorSettings = main.model.generatorSettings
        selection = main.model.list.selectedRow?.key
        let form = main.model.form
        dropEdits()
        if keepEdits {
            draft = EditorDraft(form, focus: main.model.focus)
        } else if form.hasUnsavedEdits {
            discardedEdits = form.openedKey.map(\.shortName) ?? "a new item"
        }
        messagesWiped = true
    }

    /// Wipes kept edits unread (the keys were dropped elsewhere); the next
    /// screen says they were discarded.
    mutating func dropEdits() {
        guard let draft else { return }
        discardedEdits = draft.name
        draft.wipe()
        self.draft = nil
    }

    /// Gives the new screen what the last lock carried: the selection
    /// again, and the notes of what was wiped (once).
    mutating func restore(into main: MainScreen, now: Date) {
        if messagesWiped { main.model.messages.append(.info(LockCarryOver.messagesWipedNote), at: now) }
        if let name = discardedEdits {
            main.model.form.message = .warning("Locking discarded the unsaved edits of \(name)")
        }
        discardedEdits = nil
        if let draft {
            draft.restore(into: main.editor)
            main.model.form.message = .info("Your unsaved edits of \(draft.name) are back from before the lock")
            self.draft = nil
        }
        if let key = selection {
            main.model.list.select(key)
            main.preview.sync()
        }
        selection = nil
    }
}

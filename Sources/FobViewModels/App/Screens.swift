import FobStore

/// The screen on show. Each case carries its view model.
public enum Screen {
    /// No vault yet: `New master password` and `Confirm`.
    case createVault(CreateVaultModel)
    /// The vault is locked: `Master password`.
    case unlock(UnlockModel)
    /// Unlocked: the item list and the Home form.
    case main(MainModel)
}

/// A confirmation dialog: a title, a question, and what Enter does.
public struct ConfirmDialog: Sendable, Equatable {
    /// What confirming does.
    public enum Purpose: Sendable, Equatable {
        /// Delete this item.
        case deleteItem(ItemKey)
        /// Save the form, storing an empty secret (a new item's, or in place of the opened item's).
        case saveEmptySecret
        /// Save the editor's edits over an item another process changed since
        /// it was opened; ``Action/discardEdits`` (Ctrl-D) reloads the item as
        /// stored now, Esc keeps editing.
        case saveOverChanges
        /// The editor holds unsaved edits: Enter saves, ``Action/discardEdits``
        /// (Ctrl-D) drops them, Esc keeps editing; then go to `then`.
        case leaveEditor(then: EditorExit)
        /// Settle the item's sync conflict: Enter keeps this vault's version,
        /// ``Action/keepOtherVersion`` (Ctrl-O) the other one, Esc neither.
        case resolveConflict(ItemKey)
        /// Lock the vault for every process (Ctrl-L asks; Enter or Ctrl-L again locks).
        case lock
        /// Quit while the agent keeps the vault unlocked: Enter quits,
        /// ``Action/lockAndQuit`` (Ctrl-Q again) locks and quits.
        case quitLeavingUnlocked
        /// Undo found the item changed elsewhere after the Save it undoes:
        /// Enter puts the item back over that change, Esc keeps it.
        case undoOverChanges
    }
    /// The dialog's title.
    public var title: String
    /// The question.
    public var message: String
    /// What Enter does.
    public var purpose: ConfirmDialog.Purpose

    /// A dialog asking `message` under `title`; its answers follow from `purpose`.
    public init(title: String, message: String, purpose: ConfirmDialog.Purpose) {
        self.title = title
        self.message = message
        self.purpose = purpose
    }

    /// The answers, each its key and what it does (`Enter Delete`), as the
    /// dialog's buttons and the legend name them. No answer is a key a
    /// typed word can give: Enter, Esc, or a Ctrl- key.
    public var answers: [String] {
        switch purpose {
        case .deleteItem: return ["Enter Delete", "Esc Keep it"]
        case .saveEmptySecret: return ["Enter Save", "Esc Cancel"]
        case .saveOverChanges: return ["Enter Write over", "Ctrl-D Reload", "Esc Keep editing"]
        case .leaveEditor: return ["Enter Save", "Ctrl-D Discard", "Esc Keep editing"]
        case .resolveConflict: return ["Enter This vault's", "Ctrl-O The other", "Esc Cancel"]
        case .lock: return ["Enter Lock", "Esc Cancel"]
        case .quitLeavingUnlocked: return ["Enter Quit", "Ctrl-Q Lock and quit", "Esc Stay"]
        case .undoOverChanges: return ["Enter Put back", "Esc Keep the change"]
        }
    }
}

/// Where the editor goes once its unsaved edits are saved or discarded.
public enum EditorExit: Sendable, Equatable {
    /// Back to the list (Esc).
    case list
    /// Open this item (Ctrl-E on another item, or Tab into the editor).
    case open(ItemKey)
    /// An empty editor (Ctrl-O).
    case newItem
    /// Quit Fob (Ctrl-Q or F10).
    case quit
}

/// Something drawn over the current screen.
public enum Overlay: Sendable, Equatable {
    /// A yes/no question; ``Action/confirm`` or ``Action/dismiss`` answers it.
    case confirm(ConfirmDialog)
    /// The key help; any action closes it.
    case help
    /// The password generator dialog; its state is
    /// ``MainModel/generatorDialog``.
    case generator
    /// The last messages of the status line (``MainModel/messages``); any key closes it.
    case messages
    /// The logout review; its state is ``MainModel/logoutReview``.
    case logoutReview
    /// A consent question of the agent; its state is ``MainModel/consent``.
    case consent
    /// The vault's access log; its state is ``MainModel/accessLog``.
    case accessLog

    /// Whether it is a dialog that asks something (a question, the logout
    /// review, a consent question), not a view.
    public var isDialog: Bool {
        switch self {
        case .confirm, .logoutReview, .consent: return true
        case .help, .generator, .messages, .accessLog: return false
        }
    }
}

/// What a screen's intent asks of the ``AppModel`` that routes it.
enum Transition {
    /// Nothing beyond the screen's own state.
    case stay
    /// Draw this overlay over the screen.
    case show(Overlay)
    /// Lock the vault and show the unlock screen with this message; the
    /// editor's unsaved edits are kept for the unlock.
    case lock(StatusLine)
    /// Lock as ``lock(_:)`` does, wiping the editor's unsaved edits too (the logout wipe).
    case lockWiping(StatusLine)
    /// The vault was created or unlocked: show the main screen.
    case openVault
    /// Quit the app.
    case quit
    /// Lock the vault for every process, then quit.
    case lockAndQuit
}

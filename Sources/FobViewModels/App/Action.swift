import FobStore

/// Everything the user can ask for. The front end maps keys to these (which
/// key depends on the screen and ``MainFocus``) and passes them to
/// ``AppModel/send(_:)``; every action counts as input for the idle lock.
public enum Action: Sendable, Equatable {
    // MARK: Text editing (the focused field)
    /// Insert typed or pasted text at the cursor.
    case insert(String)
    /// Delete the whole character before the cursor (Backspace).
    case deleteBackward
    /// Delete the whole character after the cursor (Delete).
    case deleteForward
    /// Move the cursor in the focused field.
    case moveCursor(CursorMove)
    /// Empty the focused field.
    case clearField
    /// `Ctrl-R`: show or hide the focused master-password field; on the
    /// main screen, the Retrieved Password, except in the Password field
    /// while it holds text, where it is that field (or that field when
    /// nothing was retrieved).
    case toggleReveal

    // MARK: Focus and generic keys
    /// Next field or button (Tab).
    case focusNext
    /// Previous field or button (Shift-Tab).
    case focusPrevious
    /// Focus a given part of the main screen.
    case focus(MainFocus)
    /// Enter: submit the screen, press the focused button, open the selected item, keep the filter.
    case submit
    /// Esc: close a dialog, clear the filter, or go back to the list.
    case cancel

    // MARK: Vault setup
    /// The KDF preset for a new vault.
    case setKDFPreset(KDFParameters.Preset)

    // MARK: Item list
    /// Move the selection by this many rows (Up = -1, Down = +1).
    case moveSelection(Int)
    /// Highlight the shown row at this index (a click on it).
    case selectRow(Int)
    /// Scroll the preview of the highlighted item so that its row `to`
    /// (0 the first) is the first in view (Shift-Up/Down, Shift-PgUp/PgDn).
    case scrollPreview(to: Int)
    /// Start typing a filter; in the help, open its search field (`/`).
    case startFilter
    /// In the help: go to the next match of its search (`n`: 1) or the
    /// previous one (`N`: -1), round the ends (``HelpModel``).
    case nextMatch(Int)
    /// Put the selected item in the form (no key of its own: Ctrl-E on the list is ``editSelected``).
    case openSelected
    /// Start a new item: empty form, focus on Service (Ctrl-O).
    case newItem
    /// Copy the selected item's secret to the clipboard (Enter on the list).
    case copySelected
    /// Copy the selected item's user ID (account) to the clipboard (Ctrl-B).
    case copyUserID
    /// Copy the selected item's current one-time code to the clipboard (Ctrl-T).
    case copyOneTimeCode
    /// Put the selected item in the form to edit every attribute, focus on Service (Ctrl-E).
    case editSelected
    /// Refresh the selected OAuth item's access token (F5).
    case refreshSelected
    /// Delete the selected item at once, undoable for 10 s (after the question ``askDeleteSelected`` asks).
    case deleteSelected
    /// Ask whether to delete the selected item (Delete); Enter deletes it.
    case askDeleteSelected
    /// Undo the last delete, rename or Save, within 10 s (Ctrl-Y).
    case undo
    /// Ask which version of the selected item to keep after a sync conflict (F6).
    case resolveSelected
    /// In the resolve dialog: keep the other device's version (Ctrl-O, as
    /// `fob resolve --keep remote`); Enter keeps this vault's.
    case keepOtherVersion
    /// Lock now (after the question ``askLock`` asks).
    case lock
    /// Ask whether to lock (Ctrl-L); Enter or Ctrl-L again locks.
    case askLock
    /// Ctrl-Q: quit; when the agent keeps the vault unlocked, say so and
    /// ask first (Enter quits, Ctrl-Q again locks and quits).
    case askQuit
    /// Lock the vault for every process and quit (Ctrl-Q on the quit question).
    case lockAndQuit
    /// Ctrl-F: select the kept query, so that typing replaces it.
    case selectQuery
    /// Ask to delete every token and OAuth item (of one service, or all) and lock (F8).
    case logoutWipe(service: String?)
    /// Show the help overlay (F1).
    case showHelp
    /// Show the last messages of the status line (F2).
    case showMessages
    /// Open the dialog of the oldest consent question (F3).
    case openRequest
    /// Answer the consent question the dialog shows.
    case answerRequest(ConsentAnswer)
    /// Open the vault's access log (F4); in the log, close it.
    case showAccessLog
    /// A key that acts on the list's highlighted item, pressed in the
    /// editor: changes nothing and says that the key (named as the legend
    /// names it, such as `Ctrl-T`) works on the list.
    case listKeyInEditor(String)
    /// On the editor's Programs row: remove the selected program from the
    /// item's access rule (written by Save).
    case removeProgram
    /// Quit (Ctrl-Q or F10 on a screen too small to draw; Esc or Ctrl-Q on
    /// the unlock and create screens; the main screen's Ctrl-Q is ``askQuit``).
    case quit

    // MARK: Home form buttons
    /// Save (add or update) Service / User ID / Password.
    case save
    /// Retrieve the item named by Service / User ID.
    case retrieve
    /// Delete the item named by Service / User ID.
    case delete
    /// Fill the Password field with a generated password (Ctrl-G there); on
    /// the Generator row, open the generator dialog; in the dialog, make a
    /// new preview.
    case generatePassword
    /// Open the password generator dialog (Alt-G; Enter on the Generator row).
    case openGenerator
    /// Choose the next (`+1`) or previous (`-1`) kind in the Kind field
    /// (on Field hidden: switch between hidden and visible; in the generator
    /// dialog: switch the mode or the class with focus).
    case cycleKind(Int)

    // MARK: Dialogs
    /// Answer yes to the open confirmation (Enter).
    case confirm
    /// Answer no / close the overlay (Esc).
    case dismiss
    /// In the unsaved-edits question: drop the edits and go on (Ctrl-D); in
    /// the changed-elsewhere question: reload the item as stored now.
    case discardEdits
}

/// What has focus on the main screen.
public enum MainFocus: Sendable, Equatable, CaseIterable {
    /// The item list (single-key commands).
    case list
    /// The filter line (typing filters).
    case filter
    /// The Service field.
    case service
    /// The User ID field.
    case userID
    /// The Password field (masked).
    case password
    /// The Kind choice (password, token, oauth, note).
    case kind
    /// The Label field.
    case label
    /// The URL field.
    case url
    /// The Notes field (several lines; Enter adds a line).
    case notes
    /// The One-time seed field (masked: an `otpauth://` URI or base32).
    case oneTimeSeed
    /// The Generator row (read only): a summary of what Ctrl-G makes;
    /// Enter opens the generator dialog.
    case generator
    /// The Field name field: the custom field Save sets or removes.
    case fieldName
    /// The Field value field (masked): the custom field's new value; empty removes the field.
    case fieldValue
    /// The Field hidden choice: whether the custom field's value is a secret.
    case fieldHidden
    /// The Access choice: the item's access rule's mode (the vault's
    /// default, any, ask, deny).
    case accessMode
    /// The Forwarded choice: what the rule does with a request that has no
    /// controlling terminal of this machine (as others, ask, deny).
    case accessForwarded
    /// The Programs rows: the rule's trusted and denied programs, one selected.
    case accessPrograms
    /// The Save button.
    case saveButton
    /// The Retrieve button.
    case retrieveButton
    /// The Delete button.
    case deleteButton

    /// The Tab order: the list, then the editor's stops in the order they are drawn (the
    /// buttons under Password, the other fields below them).
    static let tabOrder: [MainFocus] = [
        .list, .service, .userID, .password, .saveButton, .retrieveButton, .deleteButton,
        .kind, .label, .url, .notes, .oneTimeSeed, .generator,
        .fieldName, .fieldValue, .fieldHidden,
        .accessMode, .accessForwarded, .accessPrograms,
    ]
}

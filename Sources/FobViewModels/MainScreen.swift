import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// The main screen's intents over its ``MainModel``: focus and the list's
/// keys, the form's buttons (save, retrieve, delete), opening and copying
/// the selected item, the delete and logout confirmations, and the
/// messages clipboard events leave on the form.
final class MainScreen {
    /// The state drawn.
    let model: MainModel
    let store: any KeychainStore
    let clipboard: ClipboardController
    let clock: any WallClock
    /// How `r` reaches an OAuth provider.
    let transport: any HTTPTransport
    /// Keeps the list in step with the store.
    let refresh: ItemRefresh
    /// Where sync's conflicts are read and settled (`V`), or `nil` without sync.
    let sync: (any SyncConflictSource)?
    /// A confirmed logout wipe waiting for another process to release the
    /// vault: the keys to delete, retried on each tick.
    var pendingWipe: Set<ItemKey>?
    /// Where background work (`r`) reaches the store on the UI thread.
    let mailbox: UIThreadMailbox
    /// What the clipboard is copying, as the status line names it
    /// (`password of slack.com / ana`), until its outcome is shown.
    var copying: String?
    /// The `r` refresh running in the background and the item it refreshes;
    /// its message is shown at the tick after it ends.
    var pendingRefresh: (key: ItemKey, job: BackgroundJob<StatusLine>)?
    /// The `V` resolve running in the background and the item it settles;
    /// its message is shown at the tick after it ends.
    var pendingResolve: (key: ItemKey, job: BackgroundJob<StatusLine>)?
    /// The last delete or secret replacement, undoable with `z` for 10 s.
    let undo = UndoBuffer()
    /// The list generation the editor last compared its item with.
    var followedGeneration = 0

    /// Appended to a message when the form's retrieved values were dropped.
    static let retrievedClearedNote = "; Retrieved ID and Password cleared"

    /// Builds the screen and loads the list from the unlocked `store`.
    /// - Parameters:
    ///   - generatorSettings: the generator's settings kept from before a lock.
    ///   - mailbox: what the app model drains on each tick, for background work.
    ///   - sync: where sync's conflicts are read and settled, or `nil` without sync.
    init(
        store: any KeychainStore, clipboard: ClipboardController, clock: any WallClock,
        transport: any HTTPTransport = HelperHTTPTransport(), generatorSettings: PasswordPolicy = PasswordPolicy(),
        mailbox: UIThreadMailbox = UIThreadMailbox(), sync: (any SyncConflictSource)? = nil
    ) {
        model = MainModel(generatorSettings: generatorSettings)
        self.mailbox = mailbox
        self.transport = transport
        self.store = store
        self.clipboard = clipboard
        self.clock = clock
        self.sync = sync
        refresh = ItemRefresh(store: store, sync: sync, mailbox: mailbox)
        model.form.messageObserver = { [weak model] line in model?.messages.append(line, at: clock.now) }
        refresh.reload(model, now: clock.now)
        syncPreview()
    }

    /// Reloads the list from the store.
    /// - Returns: whether the form's retrieved values were cleared.
    @discardableResult
    func reloadItems() -> Bool { refresh.reload(model, now: clock.now) }

    /// Performs `action` on the main screen: Ctrl-R, then the focused text
    /// field's editing keys, then the screen's commands.
    func handle(_ action: Action) -> Transition {
        if case .toggleReveal = action {
            toggleReveal()
            return .stay
        }
        if editFocusedField(action) { return .stay }
        return command(action)
    }

    /// Ctrl-R: on the list, the preview's secret and hidden fields; in a
    /// Password, One-time seed or Field value field holding text, that
    /// field; elsewhere the Retrieved Password (and one-time code).
    private func toggleReveal() {
        let form = model.form
        if model.focus == .list || model.focus == .filter {
            togglePreviewReveal()
            return
        }
        let own: TextFieldState? =
            switch model.focus {
            case .password: form.password
            case .oneTimeSeed: form.oneTimeSeed
            case .fieldValue: form.fieldValue
            default: nil
            }
        if let own, !own.isEmpty {
            own.toggleReveal()
            if own === form.password { noteGeneratedPasswordShown(own.isRevealed) }
        } else if form.retrievedPassword != nil {
            form.isRetrievedPasswordRevealed.toggle()
        } else if model.focus == .password {
            form.password.toggleReveal()
        }
    }

    /// After Ctrl-R in the Password field: a message offering Ctrl-R to show
    /// a generated password says what Ctrl-R does now.
    private func noteGeneratedPasswordShown(_ shown: Bool) {
        let message = model.form.message
        let from = shown ? MainScreen.showsHint : MainScreen.hidesHint
        let to = shown ? MainScreen.hidesHint : MainScreen.showsHint
        guard message.text.hasSuffix(from) else { return }
        model.form.message = StatusLine(message.tone, String(message.text.dropLast(from.count)) + to)
    }

    /// The end of the message of a generated password, hidden and shown.
    static let showsHint = "; Ctrl-R shows it"
    static let hidesHint = "; Ctrl-R hides it"

    /// An editing key in the focused text field (the filter included).
    /// - Returns: whether the field took it.
    private func editFocusedField(_ action: Action) -> Bool {
        let form = model.form
        guard let field = model.focusedField, field.apply(action) else { return false }
        if model.focus == .filter { model.list.filterChanged() }
        switch action {
        case .insert, .deleteBackward, .deleteForward, .clearField:
            if model.focus == .password { form.passwordEdited = true }
            if model.focus == .oneTimeSeed { form.seedEdited = true }
        default: break
        }
        if let note = TextFieldState.droppedNote(field.takeDroppedLineBreaks()) { form.message = note }
        return true
    }

    /// Tab and Shift-Tab: the next or previous stop of ``MainFocus/tabOrder``;
    /// leaving the editor with unsaved edits asks first.
    private func moveFocus(forward: Bool) -> Transition {
        let order = MainFocus.tabOrder
        let current = order.firstIndex(of: model.focus == .filter ? .list : model.focus) ?? 0
        let next = order[(current + (forward ? 1 : order.count - 1)) % order.count]
        if next == .list, model.focus != .list, model.focus != .filter, model.form.hasUnsavedEdits {
            return askLeaveEditor(then: .list)
        }
        model.focus = next
        return .stay
    }

    /// Esc: leaves the editor (unsaved edits ask first) or clears the filter.
    private func cancel() -> Transition {
        let editing = model.focus != .list && model.focus != .filter
        if editing && model.form.hasUnsavedEdits { return askLeaveEditor(then: .list) }
        // The editor's "Esc goes back" hint is done with once back on the list.
        if editing, model.form.message.text.hasSuffix(MainScreen.editingHint) { model.form.message = .empty }
        if model.focus == .filter || (model.focus == .list && !model.list.filter.isEmpty) {
            model.list.filter.clear()
            model.list.applyFilter()
        }
        model.focus = .list
        return .stay
    }

    /// The screen's commands: focus, the list's item keys, the editor's buttons.
    private func command(_ action: Action) -> Transition {
        switch action {
        case .focusNext: return moveFocus(forward: true)
        case .focusPrevious: return moveFocus(forward: false)
        case .focus(let focus): model.focus = focus
        case .submit: return submit()
        case .cancel: return cancel()
        case .moveSelection(let delta): model.list.moveSelection(by: delta)
        case .startFilter: model.focus = .filter
        case .openSelected, .editSelected: return editSelected()
        case .newItem:
            if model.form.hasUnsavedEdits { return askLeaveEditor(then: .newItem) }
            startNewItem()
        case .copySelected: copySelected()
        case .copyUserID: copyUserID()
        case .copyOneTimeCode: copyOneTimeCode()
        case .refreshSelected: refreshSelected()
        case .generatePassword:
            if model.focus == .generator { return openGenerator() }
            generatePassword()
        case .openGenerator: return openGenerator()
        case .cycleKind(let step): cycleKind(step)
        case .deleteSelected: deleteSelectedWithUndo()
        case .resolveSelected: return askResolveSelected()
        case .undo: undoLast()
        case .lock: return .lock(.info("Locked"))
        case .logoutWipe(let service): return openLogoutReview(service: service)
        case .showHelp: return .show(.help)
        case .showMessages: return .show(.messages)
        case .quit:
            // Edits typed in the editor are not dropped without asking.
            if model.form.hasUnsavedEdits { return askLeaveEditor(then: .quit) }
            return .quit
        case .save: return save()
        case .retrieve: retrieve()
        case .delete: return askDeleteFromForm()
        case .insert, .deleteBackward, .deleteForward, .moveCursor, .clearField, .toggleReveal,
            .setKDFPreset, .confirm, .dismiss, .discardEdits, .keepOtherVersion:
            break
        }
        return .stay
    }

    /// Enter: opens the selected item, keeps the filter, moves to the next
    /// field, or presses the focused button.
    private func submit() -> Transition {
        switch model.focus {
        case .list: return editSelected()
        case .filter: model.focus = .list
        case .service: model.focus = .userID
        case .userID: model.focus = .password
        case .password: model.focus = .saveButton
        case .saveButton: return save()
        case .kind: cycleKind(1)
        case .label: model.focus = .url
        case .url: model.focus = .notes
        case .notes: model.form.notes.insert("\n")
        case .oneTimeSeed: model.focus = .generator
        case .generator: return openGenerator()
        case .fieldName: model.focus = .fieldValue
        case .fieldValue: model.focus = .fieldHidden
        case .fieldHidden: model.form.fieldHidden.toggle()
        case .retrieveButton: retrieve()
        case .deleteButton: return askDeleteFromForm()
        }
        return .stay
    }

    /// Wipes everything the screen holds.
    func wipe() {
        undo.wipe()
        model.undoSecondsLeft = nil
        model.wipe()
    }
}

import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// A question or request raised over the main screen by something other
/// than a key (the agent's change feed): while one is up, it takes every
/// action before the screen does.
protocol MainModal: AnyObject {
    /// Takes `action`.
    /// - Returns: what the app does next, and whether the modal stays up.
    func handle(_ action: Action) -> (Transition, open: Bool)
    /// Wipes what it holds (on lock and quit).
    func wipe()
}

/// The main screen: a router from each intent to the type that owns the
/// state it changes. ``ListSearch`` and ``ItemRefresh`` own the list,
/// ``PreviewSource`` the preview, ``EditorSession`` the editor,
/// ``ItemActions`` copying, deleting and undo, ``ConflictDesk`` sync
/// conflicts, ``LogoutFlow`` the logout wipe and ``GeneratorFlow`` the
/// password generator. The screen itself keeps only focus and the modal
/// slot (``modal``).
final class MainScreen {
    /// The state drawn.
    let model: MainModel
    /// The store, asked whether the agent keeps the vault unlocked (quit).
    let store: any KeychainStore
    /// Keeps the list in step with the store.
    let refresh: ItemRefresh
    let preview: PreviewSource
    let editor: EditorSession
    let actions: ItemActions
    let conflicts: ConflictDesk
    let logout: LogoutFlow
    let generator: GeneratorFlow
    let consent: ConsentDesk
    let accessLog: AccessLogDesk
    /// A request raised over the screen (``raise(_:)``), taking every action
    /// until it closes; `nil` when none is up.
    private(set) var modal: (any MainModal)?

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
        let model = MainModel(generatorSettings: generatorSettings)
        let inbox = ConsentInbox()
        let refresh = ItemRefresh(store: store, sync: sync, mailbox: mailbox, consent: inbox)
        let screen = ScreenContext(
            model: model, store: store, clock: clock, clipboard: clipboard, mailbox: mailbox, refresh: refresh,
            undo: UndoBuffer())
        let preview = PreviewSource(model: model, store: store, clock: clock)
        let editor = EditorSession(screen)
        self.model = model
        self.store = store
        self.refresh = refresh
        self.preview = preview
        self.editor = editor
        actions = ItemActions(screen, transport: transport, editor: editor)
        conflicts = ConflictDesk(screen, sync: sync, preview: preview)
        logout = LogoutFlow(screen)
        generator = GeneratorFlow(model: model)
        consent = ConsentDesk(model: model, inbox: inbox) { [weak store] (id, answer) throws(KeychainError) in
            guard let store else { throw .param("the vault is closed") }
            try store.answer(question: id, answer)
        }
        accessLog = AccessLogDesk(model: model, store: store)
        model.form.messageObserver = { [weak model] line in model?.messages.append(line, at: clock.now) }
        refresh.reload(model, now: clock.now)
        preview.sync()
    }

    /// Puts `modal` over the screen (the agent's feed raises requests so).
    func raise(_ modal: any MainModal) {
        self.modal?.wipe()
        self.modal = modal
    }

    /// Performs `action` on the main screen: a raised modal first, then
    /// Ctrl-R, then the focused text field's editing keys, then the
    /// screen's commands.
    func handle(_ action: Action) -> Transition {
        if let modal {
            let (transition, open) = modal.handle(action)
            if !open { self.modal = nil }
            return transition
        }
        if case .toggleReveal = action {
            toggleReveal()
            return .stay
        }
        if case .moveCursor(let move) = action, move == .lineUp || move == .lineDown {
            // Up/Down: in Notes the line above or below; from its first or
            // last line, and in any other field, the previous or next field.
            if model.focusedField?.moveLine(move == .lineDown ? 1 : -1) == true { return .stay }
            return moveFocus(forward: move == .lineDown)
        }
        if editFocusedField(action) { return .stay }
        return command(action)
    }

    /// The timer step of everything on the screen that waits or follows
    /// the store: background work's outcomes, undo's time, the list and
    /// the preview, the opened item.
    func tick(now: Date) {
        actions.finishRefresh()
        conflicts.finishResolve()
        actions.expireUndo()
        refresh.poll(model, now: now)
        consent.poll()
        preview.sync()
        editor.followOpenedItem()
    }

    /// Carries out a confirmed dialog's purpose.
    func perform(_ purpose: ConfirmDialog.Purpose) -> Transition {
        switch purpose {
        case .deleteItem(let key):
            actions.deleteWithUndo(key)
            return .stay
        case .saveEmptySecret: return editor.save(allowEmptySecret: true)
        case .saveOverChanges: return editor.save(overwriteChanges: true)
        case .leaveEditor(let exit): return editor.saveAndLeave(then: exit)
        case .resolveConflict(let key):
            conflicts.closed()
            return conflicts.resolve(key, keepRemote: false)
        case .lock: return .lock(.info("Locked"))
        case .quitLeavingUnlocked: return .quit
        case .undoOverChanges: return actions.undoOverChanges()
        }
    }

    /// Esc (or No) on a dialog: what it held for its answer is dropped.
    func dismissed(_ purpose: ConfirmDialog.Purpose) {
        if purpose == .undoOverChanges { actions.dropAskedUndo() }
        conflicts.closed()
        model.form.message = .info("Cancelled")
    }

    /// Ctrl-R in a dialog: the resolve dialog reveals or hides both
    /// versions' secrets; other dialogs have nothing to reveal.
    func toggleReveal(in purpose: ConfirmDialog.Purpose) {
        if case .resolveConflict(let key) = purpose { conflicts.toggleReveal(key) }
    }

    /// The second answer of a dialog that has three (Ctrl-D, Ctrl-O): drops the
    /// edits and goes on, reloads the item as stored now, or keeps the
    /// other device's version.
    /// - Returns: the transition, or `nil` when the dialog has no such answer.
    func performAlternative(_ purpose: ConfirmDialog.Purpose, _ action: Action) -> Transition? {
        switch (purpose, action) {
        case (.leaveEditor(let exit), .discardEdits): return editor.discardAndLeave(then: exit)
        case (.saveOverChanges, .discardEdits): return editor.reloadDroppingEdits()
        case (.resolveConflict(let key), .keepOtherVersion):
            conflicts.closed()
            return conflicts.resolve(key, keepRemote: true)
        default: return nil
        }
    }

    /// Background work that writes the store and has not ended: a token
    /// refresh, else a conflict resolve. A screen lock keeps the store open
    /// for it until it ends.
    var unfinishedStoreWork: BackgroundJob<StatusLine>? {
        if let job = actions.pendingRefresh?.job, job.finished == nil { return job }
        if let job = conflicts.pendingResolve?.job, job.finished == nil { return job }
        return nil
    }

    /// Ctrl-R: on the list, the preview's secret and hidden fields; in a
    /// Password, One-time seed or Field value field holding text, that
    /// field; elsewhere the Retrieved Password (and one-time code).
    private func toggleReveal() {
        let form = model.form
        if model.focus == .list || model.focus == .filter {
            preview.toggleReveal()
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
        let from = shown ? GeneratorFlow.showsHint : GeneratorFlow.hidesHint
        let to = shown ? GeneratorFlow.hidesHint : GeneratorFlow.showsHint
        guard message.text.hasSuffix(from) else { return }
        model.form.message = StatusLine(message.tone, String(message.text.dropLast(from.count)) + to)
    }

    /// An editing key in the focused text field (the filter included).
    /// - Returns: whether the field took it.
    private func editFocusedField(_ action: Action) -> Bool {
        let form = model.form
        guard let field = model.focusedField, field.apply(action) else { return false }
        switch action {
        case .insert, .deleteBackward, .deleteForward, .clearField:
            if model.focus == .list || model.focus == .filter { model.list.filterChanged() }
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
        // The Programs rows are a stop only while the rule names a program.
        let order = MainFocus.tabOrder.filter { $0 != .accessPrograms || !model.form.access.programs.isEmpty }
        let current = order.firstIndex(of: model.focus == .filter ? .list : model.focus) ?? 0
        let next = order[(current + (forward ? 1 : order.count - 1)) % order.count]
        let onList = model.focus == .list || model.focus == .filter
        if next == .list, !onList, model.form.hasUnsavedEdits {
            return editor.askLeaveEditor(then: .list)
        }
        if onList, next != .list {
            // With no highlighted item (no match) no item opens: the form may hold one the list no
            // longer shows. An empty form (or a new item's draft) acts on no item and may show.
            guard model.list.selectedRow != nil || model.form.baseline == nil else {
                model.form.message = StatusLine.noSelection
                return .stay
            }
            if let question = editor.followHighlight() { return question }
        }
        model.focus = next
        return .stay
    }

    /// Esc: leaves the editor (unsaved edits ask first) or clears the filter.
    private func cancel() -> Transition {
        let editing = model.focus != .list && model.focus != .filter
        if editing && model.form.hasUnsavedEdits { return editor.askLeaveEditor(then: .list) }
        // The editor's "Esc goes back" hint is done with once back on the list.
        if editing, model.form.message.text.hasSuffix(EditorSession.editingHint) { model.form.message = .empty }
        if model.focus == .filter || (model.focus == .list && !model.list.filter.isEmpty) {
            // A query cleared unused is not kept: a master password typed here by mistake is gone with it.
            model.list.armRecall()
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
        case .moveSelection(let delta) where model.focus == .accessPrograms:
            if !editor.moveProgramSelection(by: delta) { return moveFocus(forward: delta > 0) }
        case .removeProgram: editor.removeProgram()
        case .showAccessLog: return accessLog.open()
        case .moveSelection(let delta):
            if delta == -1, model.focus == .list, model.list.recallQuery() { break }
            model.list.moveSelection(by: delta)
        case .scrollPreview(let offset): model.scrollPreview(to: offset)
        case .selectRow(let index):
            model.list.moveSelection(by: index - (model.list.selectedIndex ?? 0))
        case .startFilter: model.focus = .filter
        case .selectQuery:
            model.focus = .list
            model.list.filter.selectAll()
        case .openSelected, .editSelected:
            model.list.rememberQuery()
            return editor.editSelected()
        case .newItem:
            if model.form.hasUnsavedEdits { return editor.askLeaveEditor(then: .newItem) }
            editor.startNewItem()
        case .copySelected, .copyUserID, .copyOneTimeCode:
            model.list.rememberQuery()
            actions.copy(action)
        case .refreshSelected: actions.refreshSelected()
        case .generatePassword:
            if model.focus == .generator { return generator.openGenerator() }
            generator.generatePassword()
        case .openGenerator: return generator.openGenerator()
        case .cycleKind(let step): editor.cycleKind(step)
        case .deleteSelected: actions.deleteSelectedWithUndo()
        case .askDeleteSelected: return actions.askDeleteSelected()
        case .resolveSelected: return conflicts.askResolveSelected()
        case .undo: return actions.undoLast()
        case .lock: return .lock(.info("Locked"))
        case .askLock: return .show(.confirm(MainScreen.lockDialog))
        case .askQuit: return askQuit()
        case .lockAndQuit: return .lockAndQuit
        case .logoutWipe(let service): return logout.openLogoutReview(service: service)
        case .showHelp: return .show(.help)
        case .showMessages: return .show(.messages)
        case .openRequest: return consent.open()
        case .listKeyInEditor(let key):
            model.form.message = .info("\(key) works on the list: Esc goes back to it")
        case .quit:
            // Edits typed in the editor are not dropped without asking.
            if model.form.hasUnsavedEdits { return editor.askLeaveEditor(then: .quit) }
            return .quit
        case .save: return editor.save()
        case .retrieve: editor.retrieve()
        case .delete: return actions.askDeleteFromForm()
        case .insert, .deleteBackward, .deleteForward, .moveCursor, .clearField, .toggleReveal,
            .setKDFPreset, .confirm, .dismiss, .discardEdits, .keepOtherVersion, .answerRequest, .nextMatch:
            break
        }
        return .stay
    }

    /// The question Ctrl-L asks.
    static let lockDialog = ConfirmDialog(
        title: "Lock", message: "Lock the vault for every process, as fob lock does?", purpose: .lock)

    /// Ctrl-Q: unsaved edits ask first; while the agent keeps the vault
    /// unlocked after Fob quits, the question says so and until when, and
    /// offers to lock as well; else Fob quits.
    private func askQuit() -> Transition {
        if model.form.hasUnsavedEdits { return editor.askLeaveEditor(then: .quit) }
        guard case .unlocked(let locksAt) = store.agentState else { return .quit }
        let until = locksAt.map { " until \(DateText.local($0, "%H:%M"))" } ?? ""
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Quit",
                    message: "The fob agent keeps the vault unlocked\(until) after Fob quits.",
                    purpose: .quitLeavingUnlocked)))
    }

    /// Enter: on the list copies the highlighted item's secret (the query
    /// and Enter find and copy); keeps the query, moves to the next field,
    /// or presses the focused button.
    private func submit() -> Transition {
        switch model.focus {
        case .list:
            model.list.rememberQuery()
            actions.copy(.copySelected)
        case .filter: model.focus = .list
        case .service: model.focus = .userID
        case .userID: model.focus = .password
        case .password: model.focus = .saveButton
        case .saveButton: return editor.save()
        case .kind: editor.cycleKind(1)
        case .label: model.focus = .url
        case .url: model.focus = .notes
        case .notes: model.form.notes.insert("\n")
        case .oneTimeSeed: model.focus = .generator
        case .generator: return generator.openGenerator()
        case .fieldName: model.focus = .fieldValue
        case .fieldValue: model.focus = .fieldHidden
        case .fieldHidden: model.form.fieldHidden.toggle()
        case .accessMode, .accessForwarded: editor.cycleKind(1)
        case .accessPrograms: model.focus = .saveButton
        case .retrieveButton: editor.retrieve()
        case .deleteButton: return actions.askDeleteFromForm()
        }
        return .stay
    }

    /// Wipes everything the screen holds.
    func wipe() {
        modal?.wipe()
        modal = nil
        actions.undo.wipe()
        model.undoSecondsLeft = nil
        model.wipe()
    }
}

import FobAccess
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// The editor session: which item the editor opened and what it showed
/// then (``HomeFormModel/baseline``), opening the highlighted item,
/// Save (through ``Editor``), Retrieve, leaving with unsaved edits (Save /
/// Discard / Keep editing), and following the opened item when it changes
/// elsewhere.
final class EditorSession: ScreenPart {
    let screen: ScreenContext
    /// The list generation the editor last compared its item with.
    private var followedGeneration = 0

    init(_ screen: ScreenContext) {
        self.screen = screen
    }

    /// The selected item in the editor (``Action/openSelected``) with
    /// every attribute, its secret in Retrieved Password, focus on Service;
    /// the Password field stays empty and Save keeps the stored secret
    /// unless the field is edited.
    func openSelected() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = StatusLine.noSelection
            return
        }
        open(row.key)
    }

    /// Opens the stored item `key` in the editor (see ``openSelected()``).
    func open(_ key: ItemKey) {
        let form = model.form
        form.wipe()
        do { show(try store.item(key)) } catch { form.message = .error(error.description) }
        model.focus = .service
    }

    /// Fills the emptied form with `item` (as stored, its secret included).
    private func show(_ item: Item) {
        let form = model.form
        let key = ItemKey(item)
        do {
            form.service.setText(item.service)
            form.userID.setText(item.account)
            form.retrievedKey = key
            form.retrievedID = item.account
            form.retrievedPassword = item.secret
            form.openedKey = key
            form.openedHasSecret = (item.secret?.count ?? 0) > 0
            form.kind = item.kind
            form.label.setText(item.label ?? "")
            form.url.setText(item.url ?? "")
            form.notes.setText(item.notes ?? "")
            form.openedHasSeed = item.oneTimePassword != nil
            form.oneTimePassword = item.oneTimePassword.flatMap(EditorSession.generator(from:))
            form.customFields = item.customFields
            form.access = AccessRuleDraft(rule: item.accessRule, vaultDefault: vaultAccessDefault)
            form.tokenDetails = item.kind.isSessionToken ? TokenDetails(item: item) : nil
            form.baseline = EditorBaseline(
                item: item,
                shown: EditorTexts(
                    service: form.service.text, userID: form.userID.text, label: form.label.text,
                    url: form.url.text, notes: form.notes.text))
            form.message = .success("Retrieved")
        }
    }

    /// The generator of a stored seed, or `nil` when it cannot be read.
    static func generator(from seed: SecretBytes) -> OneTimePassword? {
        var bytes = seed.unsafeArray
        defer { bytes.wipe() }
        return try? OneTimePassword(parsing: bytes)
    }

    /// Save (the button, Ctrl-S): writes what ``Editor`` decides. A typed
    /// item landing on a stored one changes only what was filled in, an
    /// empty Password keeping the stored secret; an opened item changes
    /// only the fields edited, is renamed only when Service or User ID
    /// was edited, and is not written when it changed elsewhere since it
    /// was opened (the dialog asks). Storing an empty secret asks first.
    /// The write is conditional on the revision read here, so a write by
    /// another process in between is refused, never overwritten.
    @discardableResult
    func save(allowEmptySecret: Bool = false, overwriteChanges: Bool = false) -> Transition {
        let form = model.form
        let lookup = form.baseline?.key ?? formKey
        let current: Item?
        do { current = try store.item(lookup) } catch .itemNotFound { current = nil } catch {
            form.message = .error(error.description)
            return .stay
        }
        let outcome = Editor.save(
            form.editorInput, opened: form.baseline, current: current, allowEmptySecret: allowEmptySecret,
            overwriteChanges: overwriteChanges)
        switch outcome {
        case .refused(let refusal):
            form.message = .warning(refusal.message)
            model.focus = refusal.focus
        case .confirmEmptySecret(let key):
            let question =
                current == nil
                ? "Store \(key.shortName) with an empty password?"
                : "Replace the password of \(key.shortName) with an empty one?"
            return .show(.confirm(ConfirmDialog(title: "Empty password", message: question, purpose: .saveEmptySecret)))
        case .changedElsewhere(var names):
            let name = lookup.shortName
            // A rename elsewhere that the editor followed is named as one.
            if let from = form.baseline?.renamedFrom {
                names.removeAll { $0 == "other attributes" }
                names.insert("service / user ID (it was \(from.shortName))", at: 0)
            }
            return askAboutChanges(
                of: lookup,
                "Another process changed the \(names.joined(separator: ", ")) of \(name) since you opened it.")
        case .deletedElsewhere(let key):
            keepAsNewItem(deletedElsewhere: key)
        case .unchanged(let key):
            // Nothing differs from the stored item: the form is that item
            // again, with no edit left to ask about (no ●, Esc just leaves).
            if form.baseline != nil { reopen(key) }
            form.message = .info("No edits to save in \(key.shortName)")
        case .add(let key, let secret, let changes):
            return saveNew(key, secret, changes)
        case .update(let key, let changes, let renamed):
            return saveUpdate(key, changes, renamed: renamed, before: current)
        }
        return .stay
    }

    /// The item changed elsewhere since it was opened, or while Save wrote
    /// (`what` says which): nothing is written, the edits stay, and the
    /// dialog offers to write them over it (Enter), to reload the item as
    /// stored now (Ctrl-D), or to keep editing (Esc).
    func askAboutChanges(of key: ItemKey, _ what: String) -> Transition {
        let name = key.shortName
        model.form.message = .warning("\(name) changed elsewhere: nothing saved; your edits are kept")
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Changed elsewhere",
                    message: what + " Write your edits over it, reload it as stored now, or keep editing?",
                    purpose: .saveOverChanges)))
    }

    /// Ctrl-D on the changed-elsewhere question: the editor shows the item as
    /// stored now, the edits dropped.
    func reloadDroppingEdits() -> Transition {
        let form = model.form
        let key = form.baseline?.key ?? formKey
        guard (try? store.item(key)) != nil else {
            form.message = .warning("\(key.shortName) is no longer stored; your edits are kept")
            return .stay
        }
        refresh.reload(model, now: clock.now)
        reopen(key)
        form.message = .info("Reloaded \(key.shortName) as stored now; your edits were dropped")
        return .stay
    }

    /// The message of a write that failed; a lost race asks (``askAboutChanges(of:_:)``).
    private func writeFailed(_ error: KeychainError, _ key: ItemKey, _ newKey: ItemKey) -> Transition {
        switch error {
        case .revisionMismatch:
            let name = key.shortName
            return askAboutChanges(of: key, "Another process wrote \(name) as you saved; nothing was written.")
        case .duplicateItem:
            model.form.message = .warning("An item for \(newKey.shortName) exists already; nothing changed")
        default:
            model.form.message = .error(error.description)
        }
        return .stay
    }

    private func saveUpdate(_ key: ItemKey, _ changes: ItemChanges, renamed: Bool, before: Item?) -> Transition {
        let form = model.form
        let newKey = ItemKey(
            itemClass: key.itemClass, accessGroup: key.accessGroup,
            service: changes.service ?? key.service, account: changes.account ?? key.account)
        // One write; a rename onto an existing item is refused by the store.
        do {
            _ = try store.update(matching: key.query, with: changes)
        } catch {
            return writeFailed(error, key, newKey)
        }
        let replaced = changes.secret != nil
        // Any Save can be undone, a rename as a change of one attribute.
        let hint = before == nil ? "" : UndoBuffer.hint
        if let before {
            // The item as written, from the item read and the changes (the
            // write was conditional on its revision): the list and the
            // editor follow without reading anything back.
            var written = before
            changes.apply(to: &written, now: clock.now)
            if written.revision > 0 { written.revision += 1 }
            refresh.patch(model, upserting: [written], removing: [key], now: clock.now)
            undo.record(.saved(before: before, now: newKey, revision: written.revision), at: clock.now)
            model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
            reopen(written)
        } else {
            refresh.reload(model, now: clock.now)
            reopen(newKey)
        }
        if renamed {
            form.message = .success("Saved (renamed \(key.shortName) to \(newKey.shortName))" + hint)
        } else if replaced {
            form.message = .success("Saved (replaced the password of \(newKey.shortName))" + hint)
        } else {
            form.message = .success("Saved (\(newKey.shortName); password kept)" + hint)
        }
        return .stay
    }

    private func saveNew(_ key: ItemKey, _ secret: SecretBytes, _ changes: ItemChanges) -> Transition {
        do {
            _ = try store.save(service: key.service, account: key.account, secret: secret, attributes: changes)
        } catch {
            return writeFailed(error, key, key)
        }
        // The new item as written (revision 1), patched in without reading it back.
        var written = Item(service: key.service, account: key.account, secret: secret)
        written.created = clock.now
        changes.apply(to: &written, now: clock.now)
        written.revision = 1
        refresh.patch(model, upserting: [written], now: clock.now)
        let cleared = reopen(written)
        model.form.message = .success(cleared ? "Saved (new item; filter cleared to show it)" : "Saved (new item)")
        return .stay
    }

    /// After a save: the form shows the stored item again, focus kept.
    /// The list highlights it, its filter cleared when it hides the item.
    /// - Returns: whether the filter was cleared.
    @discardableResult
    func reopen(_ key: ItemKey) -> Bool {
        let focus = model.focus
        let cleared = model.list.reveal(key)
        open(key)
        model.focus = focus
        return cleared
    }

    /// ``reopen(_:)`` with the item as written, not read again.
    @discardableResult
    func reopen(_ item: Item) -> Bool {
        let focus = model.focus
        let cleared = model.list.reveal(ItemKey(item))
        model.form.wipe()
        show(item)
        model.focus = focus
        return cleared
    }

    /// The vault's access default as the store says it; `.any` when it cannot tell.
    private var vaultAccessDefault: AccessRule.Mode { (try? store.accessDefault()) ?? .any }

    /// The Kind field: the next or previous kind; on Field hidden, hidden or
    /// visible; on Access and Forwarded, the rule's next or previous choice.
    func cycleKind(_ step: Int) {
        switch model.focus {
        case .fieldHidden:
            model.form.fieldHidden.toggle()
            return
        case .accessMode:
            model.form.access.cycleMode(step)
            return
        case .accessForwarded:
            model.form.access.cycleForwarded(step)
            return
        default: break
        }
        let kinds = ItemKind.allCases
        let index = kinds.firstIndex(of: model.form.kind) ?? 0
        model.form.kind = kinds[(index + step % kinds.count + kinds.count) % kinds.count]
    }

    /// Ctrl-E on the list: opens the highlighted item in the editor,
    /// focus on Service; asks first when the editor holds unsaved edits of
    /// another item.
    func editSelected() -> Transition {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = StatusLine.noSelection
            return .stay
        }
        if form.hasUnsavedEdits {
            if form.baseline?.key == row.key {
                model.focus = .service
                return .stay
            }
            return askLeaveEditor(then: .open(row.key))
        }
        open(row.key)
        if form.openedKey != nil {
            form.message = .info("Editing \(row.key.shortName)" + EditorSession.editingHint)
        }
        return .stay
    }

    /// Tab from the list into the editor: the editor shows the item the
    /// list highlights, never another. Unsaved edits of another item (or
    /// of a new one) ask first.
    /// - Returns: the question, or `nil` when the editor now shows the
    ///   highlighted item (or nothing is highlighted).
    func followHighlight() -> Transition? {
        guard let row = model.list.selectedRow, model.form.baseline?.key != row.key else { return nil }
        if model.form.hasUnsavedEdits { return askLeaveEditor(then: .open(row.key)) }
        open(row.key)
        if model.form.openedKey != nil {
            model.form.message = .info("Editing \(row.key.shortName)" + EditorSession.editingHint)
        }
        return nil
    }

    /// What the message of an opened editor ends with.
    static let editingHint = ": Ctrl-S saves, Esc goes back"

    /// Ctrl-O: an empty editor, focus on Service.
    func startNewItem() {
        model.form.wipe()
        model.form.access = AccessRuleDraft(vaultDefault: vaultAccessDefault)
        model.form.message = .info("New item")
        model.focus = .service
    }

    /// On the Programs rows, Up/Down: the next or previous program; past
    /// either end, the next or previous stop of the form.
    /// - Returns: whether the selection moved (else the caller moves focus).
    func moveProgramSelection(by step: Int) -> Bool { model.form.access.moveSelection(by: step) }

    /// Delete on the Programs rows: the selected program leaves the rule
    /// (Save writes it; until then Esc asks, as for any edit).
    func removeProgram() {
        guard model.focus == .accessPrograms, let removed = model.form.access.removeSelected() else { return }
        model.form.message = .info("Removed \(removed) from the access rule; Ctrl-S saves it")
        if model.form.access.programs.isEmpty { model.focus = .accessForwarded }
    }

    /// The question asked before unsaved edits would be dropped.
    func askLeaveEditor(then exit: EditorExit) -> Transition {
        let name = model.form.baseline.map { $0.key.shortName } ?? "The new item"
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Unsaved edits",
                    message: "\(name) has unsaved edits. Save them before going on?",
                    purpose: .leaveEditor(then: exit))))
    }

    /// Enter on the unsaved-edits question: saves; once nothing is left
    /// unsaved, goes on to `exit` (a refusal or another question stops there).
    func saveAndLeave(then exit: EditorExit) -> Transition {
        let transition = save()
        guard case .stay = transition, !model.form.hasUnsavedEdits else { return transition }
        return leave(to: exit)
    }

    /// Ctrl-D on the unsaved-edits question: drops the edits, then goes on to `exit`.
    func discardAndLeave(then exit: EditorExit) -> Transition {
        let form = model.form
        if let key = form.baseline?.key {
            open(key)
        } else {
            form.wipe()
        }
        form.message = .info("Edits discarded")
        return leave(to: exit)
    }

    private func leave(to exit: EditorExit) -> Transition {
        switch exit {
        case .list:
            model.focus = .list
        case .open(let key):
            model.list.select(key)
            open(key)
        case .newItem:
            startNewItem()
        case .quit:
            return .quit
        }
        return .stay
    }

    /// After a reload: when the item the editor opened changed elsewhere,
    /// shows it as stored now if nothing is typed; with unsaved edits, keeps
    /// them and says Save will ask. When it was deleted elsewhere, see
    /// ``follow(deleteOf:)``. Only an open editor is said to show anything.
    func followOpenedItem() {
        guard model.list.generation != followedGeneration else { return }
        followedGeneration = model.list.generation
        let form = model.form
        guard let baseline = form.baseline else { return }
        if !model.list.allRows.contains(where: { $0.key == baseline.key }) {
            if let new = model.list.renames[baseline.key] {
                follow(renameOf: baseline, to: new)
            } else {
                follow(deleteOf: baseline)
            }
            return
        }
        guard let row = model.list.allRows.first(where: { $0.key == baseline.key }),
            Editor.isNewer(revision: row.revision, modified: row.modified, than: baseline.item)
        else { return }
        let name = baseline.key.shortName
        if form.hasUnsavedEdits {
            form.message = .warning("\(name) changed elsewhere; your edits are kept and Save will ask")
        } else {
            let said = form.message
            reopen(baseline.key)
            // With the preview shown the form follows unseen, and the status line keeps what it said.
            form.message = isOpen ? .info("\(name) changed elsewhere: the editor shows it as stored now") : said
        }
    }

    /// Whether the editor is on screen (focus in it, not in the list or the filter).
    var isOpen: Bool { model.focus != .list && model.focus != .filter }

    /// The opened item was deleted elsewhere: with nothing typed, the form
    /// is emptied; with unsaved edits, nothing typed is lost: they stay as
    /// a new item's draft, titled `New item (from deleted NAME)`, which
    /// Save adds. The title never names an item that is gone.
    private func follow(deleteOf baseline: EditorBaseline) {
        let form = model.form
        let name = baseline.key.shortName
        guard form.hasUnsavedEdits else {
            let said = form.message
            form.wipe()
            form.message = isOpen ? .warning("Deleted elsewhere: \(name); the form is emptied") : said
            return
        }
        keepAsNewItem(deletedElsewhere: baseline.key)
    }

    /// The opened item `key` is gone (seen at a reload or by Save): the
    /// edits stay as a new item's draft, which Save adds, and the status
    /// line says so (and that the password is still to be typed, when it is).
    private func keepAsNewItem(deletedElsewhere key: ItemKey) {
        let form = model.form
        form.keepAsNewItem(deleted: key)
        let unset = form.password.isEmpty ? " (no password yet)" : ""
        form.message = .warning(
            "Deleted elsewhere: \(key.shortName); your edits are kept, Save adds them as a new item" + unset)
    }

    /// The opened item was renamed elsewhere to `new`: with nothing typed,
    /// the editor shows it as stored now; with unsaved edits, they stay,
    /// the name fields follow the new name unless typed over, and Save
    /// asks (the item changed since it was opened).
    private func follow(renameOf baseline: EditorBaseline, to new: ItemKey) {
        let form = model.form
        let said = "Renamed elsewhere: \(baseline.key.shortName) is now \(new.shortName)"
        guard form.hasUnsavedEdits else {
            reopen(new)
            form.message = .info(isOpen ? said + "; the editor shows it" : said)
            return
        }
        if form.service.text == baseline.shown.service { form.service.setText(new.service) }
        if form.userID.text == baseline.shown.userID { form.userID.setText(new.account) }
        var moved = baseline
        moved.item.service = new.service
        moved.item.account = new.account
        moved.shown.service = new.service
        moved.shown.userID = new.account
        moved.renamedFrom = baseline.renamedFrom ?? baseline.key
        form.baseline = moved
        form.openedKey = new
        form.message = .warning(said + "; your edits are kept and Save will ask")
    }

    /// The item the form's Service and User ID name.
    var formKey: ItemKey { ItemKey(service: model.form.service.text, account: model.form.userID.text) }

    /// Retrieve: fills Retrieved ID and Retrieved Password (masked).
    func retrieve() {
        let form = model.form
        let key = formKey
        form.clearRetrieved()
        do {
            let item = try store.item(key)
            form.retrievedKey = ItemKey(item)
            form.retrievedID = item.account
            form.retrievedPassword = item.secret
            form.message = .success("Retrieved")
        } catch .itemNotFound {
            form.message = .warning("No item for \(key.shortName)")
        } catch {
            form.message = .error(error.description)
        }
    }

}

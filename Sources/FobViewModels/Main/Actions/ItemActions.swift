import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// What the list's keys do to the highlighted item, with the state each
/// keeps: copying its secret, user ID or one-time code (the clipboard's
/// reports named by ``copying``), deleting with undo (``undo``), and the
/// background refresh of an OAuth item (``pendingRefresh``).
final class ItemActions: ScreenPart {
    let screen: ScreenContext
    /// How the refresh reaches an OAuth provider.
    let transport: any HTTPTransport
    /// The editor, shown again on an item undo restored.
    let editor: EditorSession
    /// What the clipboard is copying, as the status line names it
    /// (`password of slack.com / ana`), until its outcome is shown.
    private var copying: (what: String, warning: String?)?
    /// The refresh running in the background and the item it refreshes;
    /// its message is shown at the tick after it ends.
    private(set) var pendingRefresh: (key: ItemKey, job: BackgroundJob<StatusLine>)?

    init(_ screen: ScreenContext, transport: any HTTPTransport, editor: EditorSession) {
        self.screen = screen
        self.transport = transport
        self.editor = editor
    }

    /// The highlighted row and its item as stored, or `nil` once the
    /// status line says why not (no selection, a store error).
    private func selectedItem() -> (row: ItemRow, item: Item)? {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = StatusLine.noSelection
            return nil
        }
        do { return (row, try store.item(row.key)) } catch {
            form.message = .error(error.description)
            return nil
        }
    }

    /// Hands `value` to the clipboard helper, `what` (`password of
    /// slack.com / ana`) naming it in the messages; the outcome arrives later
    /// as a clipboard event (``show(_:)``), as a warning when `warning`
    /// (an expired token) says why the value may not serve.
    private func startCopy(_ value: SecretBytes, _ what: String, warning: String? = nil, validFor: TimeInterval? = nil)
    {
        copying = (what, warning)
        model.form.message = .info("Copying the \(what)…")
        clipboard.copy(value, validFor: validFor)
    }

    /// Enter, Ctrl-B, Ctrl-T on the list: copies the highlighted item's
    /// secret, user ID or one-time code (``Action/copySelected``,
    /// ``Action/copyUserID``, ``Action/copyOneTimeCode``).
    func copy(_ action: Action) {
        switch action {
        case .copyUserID: copyUserID()
        case .copyOneTimeCode: copyOneTimeCode()
        default: copySelected()
        }
    }

    /// Copies the selected item's secret; nothing to copy is a warning,
    /// an expired token is copied with a warning.
    private func copySelected() {
        guard let (row, item) = selectedItem() else { return }
        let name = row.key.shortName
        guard let secret = item.secret, secret.count > 0 else {
            model.form.message = .warning("\(name) has an empty \(item.kind.secretName): nothing copied")
            return
        }
        // A note item's secret is its text, not the Notes attribute.
        let what = item.kind == .note ? "note text (the secret) of \(name)" : "\(item.kind.secretName) of \(name)"
        var warning: String?
        if let expires = row.expires, expires <= clock.now {
            warning = TokenExpiry.describe(expires, now: clock.now)
        }
        startCopy(secret, what, warning: warning)
    }

    /// Copies the selected item's user ID; an empty one is not copied.
    private func copyUserID() {
        guard let row = model.list.selectedRow else {
            model.form.message = StatusLine.noSelection
            return
        }
        guard !row.account.isEmpty else {
            model.form.message = .warning("\(row.key.shortName) has no user ID: nothing copied")
            return
        }
        startCopy(SecretBytes(utf8: row.account), "user ID of \(row.key.shortName)")
    }

    /// The fewest seconds a copied one-time code has left: with fewer, the
    /// next code is copied instead.
    static let shortestCodeLife = 5

    /// Copies the selected item's one-time code, cleared from the
    /// clipboard when it rolls over; with fewer than ``shortestCodeLife``
    /// seconds left, the next code (valid for its whole period after those).
    private func copyOneTimeCode() {
        guard let (row, item) = selectedItem() else { return }
        let name = row.key.shortName
        guard let seed = item.oneTimePassword else {
            model.form.message = .warning("\(name) has no one-time seed: nothing copied")
            return
        }
        guard let otp = EditorSession.generator(from: seed) else {
            model.form.message = .error("The one-time seed of \(name) cannot be read: nothing copied")
            return
        }
        let now = clock.now
        guard let left = otp.secondsLeft(at: now) else {
            startCopy(SecretBytes(utf8: otp.code(at: now)), "one-time code of \(name)")
            return
        }
        if left < ItemActions.shortestCodeLife, let period = otp.period {
            let next = now.addingTimeInterval(TimeInterval(left))
            startCopy(
                SecretBytes(utf8: otp.code(at: next)), "next one-time code of \(name) (valid in \(left) s)",
                validFor: TimeInterval(left + period))
        } else {
            startCopy(SecretBytes(utf8: otp.code(at: now)), "one-time code of \(name)", validFor: TimeInterval(left))
        }
    }

    /// Puts what the clipboard did on the Message line.
    func show(_ events: [ClipboardEvent]) {
        let form = model.form
        for event in events {
            switch event {
            case .copied(let after):
                // `Copied password of slack.com / ana · clears in 45 s`: what, of which item.
                let what =
                    copying.map { "Copied \($0.what)" } ?? "Copied to the clipboard (\(clipboard.clipboard.name))"
                let text = after > 0 ? "\(what) · clears in \(Int(after.rounded(.up))) s" : what
                // An expired token is copied all the same, but never with a ✓.
                if let warning = copying?.warning {
                    form.message = .warning("\(text); it \(warning)")
                } else {
                    form.message = .success(text)
                }
            case .copyFailed(let error):
                form.message = .error("Copy \(copying.map { "of the \($0.what) " } ?? "")failed: \(error)")
            case .cleared(.cleared), .cleared(.clearedUnchecked):
                form.message = .info("Clipboard cleared")
            case .cleared(.leftAlone):
                form.message = .info("Clipboard left alone: it holds other text now")
            case .cleared(.failed(let error)):
                form.message = .error("Could not clear the clipboard: \(error)")
            }
        }
    }

    /// Enter on the delete question (Delete on the list): deletes the
    /// selected item, keeping it for Ctrl-Y.
    func deleteSelectedWithUndo() {
        guard let row = model.list.selectedRow else {
            model.form.message = StatusLine.noSelection
            return
        }
        deleteWithUndo(row.key)
    }

    /// Deletes `key`, keeping the whole item (with its secret) for ``UndoBuffer/lifetime``
    /// seconds; an editor open on it is closed, so it cannot show a deleted item.
    func deleteWithUndo(_ key: ItemKey) {
        let form = model.form
        let item: Item
        do {
            item = try store.item(key)
            // Deletes the item as read, so that Ctrl-Y brings back what was deleted.
            var query = key.query
            if item.revision > 0 { query.expectedRevision = item.revision }
            try store.delete(matching: query)
        } catch .itemNotFound {
            form.message = .warning("No item for \(key.shortName)")
            refresh.reload(model, now: clock.now)
            return
        } catch .revisionMismatch {
            form.message = .warning("\(key.shortName) changed elsewhere as you deleted it; nothing deleted")
            refresh.reload(model, now: clock.now)
            return
        } catch {
            form.message = .error(error.description)
            return
        }
        undo.record(.deleted(item), at: clock.now)
        model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        if form.openedKey == key || form.retrievedKey == key || (form.openedKey == nil && editor.formKey == key) {
            form.wipe()
            if model.focus != .list && model.focus != .filter { model.focus = .list }
        }
        refresh.reload(model, now: clock.now)
        form.message = .success("Deleted \(key.shortName)" + UndoBuffer.hint)
    }

    /// The timer step of undo: once its time is up, the message that offered
    /// Ctrl-Y loses that offer.
    func expireUndo() {
        let ended = undo.expire(at: clock.now)
        model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        guard ended else { return }
        let message = model.form.message
        guard message.text.hasSuffix(UndoBuffer.hint) else { return }
        model.form.message = StatusLine(message.tone, String(message.text.dropLast(UndoBuffer.hint.count)))
    }

    /// Ctrl-Y: undoes the last delete or Save, if its time is not up. In
    /// the editor, only a Save (or rename) of the item the editor shows: any
    /// other change is left for Ctrl-Y on the list, so the editor never
    /// stays on an item while the list highlights another it brought back.
    func undoLast() -> Transition {
        if model.focus != .list, model.focus != .filter {
            // From the editor: edits typed since are neither dropped nor left over an item put back.
            if model.form.hasUnsavedEdits {
                model.form.message = .warning(Self.unsavedEditsBeforeUndo)
                return .stay
            }
            if let newest = undo.newest(at: clock.now), !undoesInEditor(newest) {
                model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
                // What matters first: a long message keeps only its start and end at 80 columns.
                model.form.message = .info(
                    "Nothing undone here: the last change is \(newest.what); Esc, then Ctrl-Y undoes it")
                return .stay
            }
        }
        let taken = undo.take(at: clock.now)
        model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        guard let entry = taken else {
            model.form.message = .info("Nothing to undo")
            return .stay
        }
        return undo(entry, overChanges: false)
    }

    /// Whether Ctrl-Y in the editor undoes `entry`: a Save that left the
    /// item the editor shows under its name.
    private func undoesInEditor(_ entry: UndoBuffer.Entry) -> Bool {
        guard case .saved(_, let now, _) = entry, let opened = model.form.openedKey else { return false }
        return now == opened
    }

    /// What Ctrl-Y says in the editor over unsaved edits.
    static let unsavedEditsBeforeUndo =
        "Ctrl-Y: your edits are not saved; Ctrl-S saves them, Esc offers to discard them; nothing undone"

    /// A change taken from the undo buffer that found its item changed
    /// since, held while the question (``ConfirmDialog/Purpose/undoOverChanges``) shows.
    private var undoAsked: UndoBuffer.Entry?

    /// Puts back what `entry` changed. A Save is undone only over the
    /// revision it left: when the item changed since (elsewhere), nothing
    /// is written and the question asks (``undoOverChanges()``). The item
    /// put back over a stored one takes the next revision after it.
    /// - Returns: the question, or `.stay`.
    private func undo(_ entry: UndoBuffer.Entry, overChanges: Bool) -> Transition {
        let form = model.form
        let key: ItemKey
        let done: String
        // The name the undone Save gave the item (a rename): an editor open on it follows the item back.
        var savedAs: ItemKey?
        do {
            switch entry {
            case .deleted(let item):
                key = ItemKey(item)
                done = "Restored \(key.shortName)"
                // Back at the revision after its last, so that a writer that
                // read it before the delete cannot write over it unnoticed.
                var restored = item
                if restored.revision > 0, restored.revision < UInt64.max { restored.revision += 1 }
                try store.restore([.add(restored)])
                undo.follow(key, from: item.revision, to: restored.revision)
            case .saved(let before, let now, let revision):
                key = ItemKey(before)
                savedAs = now
                done = key == now ? "Undid the Save of \(key.shortName)" : "Undid the rename: \(key.shortName) again"
                let stored = try store.item(now)
                if revision > 0, stored.revision != revision, !overChanges {
                    undoAsked = entry
                    return .show(
                        .confirm(
                            ConfirmDialog(
                                title: "Changed since",
                                message: "\(now.shortName) changed elsewhere after your Save (revision "
                                    + "\(revision), now \(stored.revision)). Put back the item as it was before "
                                    + "your Save, over that change?",
                                purpose: .undoOverChanges)))
                }
                try store.restore([.replace(existing: stored, with: before)])
                // The item is exactly as it was at `before`'s revision, now at the next one.
                if stored.revision > 0 { undo.follow(key, from: before.revision, to: stored.revision + 1) }
            }
        } catch .duplicateItem {
            form.message = .warning("Undo: an item for \(entry.name) exists again; nothing undone")
            return .stay
        } catch .itemNotFound {
            form.message = .warning("Undo: \(entry.name) is no longer stored; nothing undone")
            refresh.reload(model, now: clock.now)
            return .stay
        } catch {
            form.message = .error("Undo failed: \(error); nothing undone")
            return .stay
        }
        refresh.reload(model, now: clock.now)
        model.list.select(key)
        // The editor shows the restored item again if it was open on it; focus stays where it is.
        if let opened = form.openedKey, opened == key || opened == savedAs, !form.hasUnsavedEdits { editor.reopen(key) }
        form.message = .success(done)
        return .stay
    }

    /// Enter on the undo question: puts the item back over the later change.
    func undoOverChanges() -> Transition {
        guard let entry = undoAsked else { return .stay }
        undoAsked = nil
        return undo(entry, overChanges: true)
    }

    /// Esc on the undo question: nothing is undone, the entry is dropped.
    func dropAskedUndo() { undoAsked = nil }

    // MARK: - Delete

    /// The Delete button: asks first, like Delete on the list, when the item
    /// the form names exists.
    func askDeleteFromForm() -> Transition {
        let form = model.form
        let key = ItemKey(service: form.service.text, account: form.userID.text)
        do {
            _ = try store.items(matching: key.query, withSecrets: false)
            return .show(.confirm(deleteDialog(key)))
        } catch .itemNotFound {
            form.message = .warning("No item for \(key.shortName)")
        } catch {
            form.message = .error(error.description)
        }
        return .stay
    }

    private func deleteDialog(_ key: ItemKey) -> ConfirmDialog {
        ConfirmDialog(
            title: "Delete item", message: "Delete \(key.shortName)? Ctrl-Y undoes it for \(UndoBuffer.secondsText).",
            purpose: .deleteItem(key))
    }

    /// Delete on the list: asks whether to delete the highlighted item.
    func askDeleteSelected() -> Transition {
        guard let row = model.list.selectedRow else {
            model.form.message = StatusLine.noSelection
            return .stay
        }
        return .show(.confirm(deleteDialog(row.key)))
    }

    /// Enter on the delete dialog: deletes, undoable with Ctrl-Y.
    private func deleteItem(_ key: ItemKey) -> Transition {
        deleteWithUndo(key)
        return .stay
    }

    /// F5: refreshes the selected OAuth item's access token at its
    /// provider, in the background: the Message line says "Refreshing…" and
    /// the UI stays usable; the outcome shows at the tick after it ends
    /// (``finishRefresh()``). The refresh itself is ``OAuthSession``'s, under
    /// the vault's lock across processes, its store calls made on the UI
    /// thread (``UIThreadStore``).
    func refreshSelected() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = StatusLine.noSelection
            return
        }
        guard row.kind == .oauth else {
            form.message = .warning("F5 refreshes OAuth items; \(row.key.shortName) is a \(row.kind.rawValue)")
            return
        }
        if let pending = pendingRefresh {
            form.message = .info("Still refreshing \(pending.key.shortName)…")
            return
        }
        let store = UIThreadStore(self.store, mailbox: mailbox)
        let clock = self.clock
        let transport = self.transport
        let key = row.key
        let job = BackgroundJob<StatusLine> {
            let session = OAuthSession(
                store: store, service: key.service, account: key.account, transport: transport,
                now: { clock.now })
            do {
                _ = try session.refresh(force: true)
                return .success("Refreshed \(key.shortName)")
            } catch {
                return .error("Refresh failed: \(error)")
            }
        }
        pendingRefresh = (key, job)
        form.message = .info("Refreshing \(key.shortName)…")
    }

    /// The timer step of a background refresh: once it has ended, its
    /// outcome on the Message line and the list (and an opened item) reloaded.
    func finishRefresh() {
        guard let pending = pendingRefresh, let message = pending.job.finished else { return }
        pendingRefresh = nil
        let form = model.form
        refresh.reload(model, now: clock.now)
        if form.openedKey == pending.key { editor.reopen(pending.key) }
        form.message = message
    }
}

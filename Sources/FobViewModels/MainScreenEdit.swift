import FobAccess
import FobSessions
import FobStore
import FobTokens
import FoundationEssentials

/// Opening an item with every attribute, saving (adding, updating or
/// renaming) it, and `r`, the refresh of an OAuth item.
extension MainScreen {
    /// Enter (or `e`) on the list: the selected item in the editor with
    /// every attribute, its secret in Retrieved Password, focus on Service;
    /// the Password field stays empty and Save keeps the stored secret
    /// unless the field is edited.
    func openSelected() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return
        }
        open(row.key)
    }

    /// Opens the stored item `key` in the editor (see ``openSelected()``).
    func open(_ key: ItemKey) {
        let form = model.form
        form.wipe()
        do {
            let item = try store.item(key)
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
            form.oneTimePassword = item.oneTimePassword.flatMap(MainScreen.generator(from:))
            form.customFields = item.customFields
            form.tokenDetails = item.kind.isSessionToken ? TokenDetails(item: item) : nil
            form.baseline = EditorBaseline(
                item: item,
                shown: EditorTexts(
                    service: form.service.text, userID: form.userID.text, label: form.label.text,
                    url: form.url.text, notes: form.notes.text))
            form.message = .success("Retrieved")
        } catch {
            form.message = .error(error.description)
        }
        model.focus = .service
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
                ? "Store \(key.described) with an empty password? (y/n)"
                : "Replace the password of \(key.described) with an empty one? (y/n)"
            return .show(.confirm(ConfirmDialog(title: "Empty password", message: question, purpose: .saveEmptySecret)))
        case .changedElsewhere(let names):
            let name = MainScreen.shortName(lookup)
            return askAboutChanges(
                of: lookup,
                "Another process changed the \(names.joined(separator: ", ")) of \(name) since you opened it.")
        case .deletedElsewhere(let key):
            form.baseline = nil
            form.openedKey = nil
            form.message = .warning(
                "Deleted elsewhere: \(key.described); your edits are kept, Save adds them as a new item")
        case .unchanged(let key):
            form.message = .info("No edits to save in \(key.described)")
        case .add(let key, let secret, let changes):
            return saveNew(key, secret, changes)
        case .update(let key, let changes, let renamed):
            return saveUpdate(key, changes, renamed: renamed, before: current)
        }
        return .stay
    }

    /// The item changed elsewhere since it was opened, or while Save wrote
    /// (`what` says which): nothing is written, the edits stay, and the
    /// dialog offers to write them over it (`y`), to reload the item as
    /// stored now (`r`), or to keep editing (`n`).
    func askAboutChanges(of key: ItemKey, _ what: String) -> Transition {
        let name = MainScreen.shortName(key)
        model.form.message = .warning("\(name) changed elsewhere: nothing saved; your edits are kept")
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Changed elsewhere",
                    message: what + " Write your edits over it (y), reload it as stored now (r), or keep editing (n)?",
                    purpose: .saveOverChanges)))
    }

    /// `r` on the changed-elsewhere question: the editor shows the item as
    /// stored now, the edits dropped.
    func reloadDroppingEdits() -> Transition {
        let form = model.form
        let key = form.baseline?.key ?? formKey
        guard (try? store.item(key)) != nil else {
            form.message = .warning("\(MainScreen.shortName(key)) is no longer stored; your edits are kept")
            return .stay
        }
        reloadItems()
        reopen(key)
        form.message = .info("Reloaded \(MainScreen.shortName(key)) as stored now; your edits were dropped")
        return .stay
    }

    /// The message of a write that failed; a lost race asks (``askAboutChanges(of:_:)``).
    private func writeFailed(_ error: KeychainError, _ key: ItemKey, _ newKey: ItemKey) -> Transition {
        switch error {
        case .revisionMismatch:
            let name = MainScreen.shortName(key)
            return askAboutChanges(of: key, "Another process wrote \(name) as you saved; nothing was written.")
        case .duplicateItem:
            model.form.message = .warning("An item for \(newKey.described) exists already; nothing changed")
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
        if renamed, (try? store.items(matching: newKey.query, withSecrets: false)) != nil {
            return writeFailed(.duplicateItem(newKey.described), key, newKey)
        }
        do {
            _ = try store.update(matching: key.query, with: changes)
        } catch {
            return writeFailed(error, key, newKey)
        }
        let replaced = changes.secret != nil
        if replaced, let before {
            undo.record(.replaced(before: before, now: newKey), at: clock.now)
            model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        }
        reloadItems()
        reopen(newKey)
        if renamed {
            form.message = .success("Saved (renamed from \(key.described))")
        } else if replaced {
            form.message = .success(
                "Saved (replaced the password of \(newKey.described))" + UndoBuffer.hint)
        } else {
            form.message = .success("Saved (\(newKey.described); password kept)")
        }
        return .stay
    }

    private func saveNew(_ key: ItemKey, _ secret: SecretBytes, _ changes: ItemChanges) -> Transition {
        do {
            _ = try store.save(service: key.service, account: key.account, secret: secret, attributes: changes)
        } catch {
            return writeFailed(error, key, key)
        }
        reloadItems()
        let cleared = reopen(key)
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

    /// The Kind field: the next or previous kind; on Field hidden, hidden or visible.
    func cycleKind(_ step: Int) {
        if model.focus == .fieldHidden {
            model.form.fieldHidden.toggle()
            return
        }
        let kinds = ItemKind.allCases
        let index = kinds.firstIndex(of: model.form.kind) ?? 0
        model.form.kind = kinds[(index + step % kinds.count + kinds.count) % kinds.count]
    }

    /// `r`: refreshes the selected OAuth item's access token at its
    /// provider, in the background: the Message line says "Refreshing…" and
    /// the UI stays usable; the outcome shows at the tick after it ends
    /// (``finishRefresh()``). The refresh itself is ``OAuthSession``'s, under
    /// the vault's lock across processes, its store calls made on the UI
    /// thread (``UIThreadStore``).
    func refreshSelected() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return
        }
        guard row.kind == .oauth else {
            form.message = .warning("r refreshes OAuth items; \(row.key.described) is a \(row.kind.rawValue)")
            return
        }
        if let pending = pendingRefresh {
            form.message = .info("Still refreshing \(pending.key.described)…")
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
                return .success("Refreshed \(key.described)")
            } catch {
                return .error("Refresh failed: \(error)")
            }
        }
        pendingRefresh = (key, job)
        form.message = .info("Refreshing \(key.described)…")
    }

    /// The timer step of a background refresh: once it has ended, its
    /// outcome on the Message line and the list (and an opened item) reloaded.
    func finishRefresh() {
        guard let pending = pendingRefresh, let message = pending.job.finished else { return }
        pendingRefresh = nil
        let form = model.form
        reloadItems()
        if form.openedKey == pending.key { reopen(pending.key) }
        form.message = message
    }
}

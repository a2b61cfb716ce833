import FobAccess
import FobSessions
import FobStore
import FobTokens
import Foundation

/// Opening an item with every attribute, saving (adding, updating or
/// renaming) it, and the list's other item keys: `u`, `o`, `r`.
extension MainScreen {
    /// Enter (or `e`) on the list: the selected item in the form with every
    /// attribute, its secret in Retrieved Password; the Password field stays
    /// empty and Save keeps the stored secret unless the field is edited.
    func openSelected() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return
        }
        form.wipe()
        form.service.setText(row.service)
        form.userID.setText(row.account)
        do {
            let item = try store.item(row.key)
            form.retrievedKey = row.key
            form.retrievedID = item.account
            form.retrievedPassword = item.secret
            form.openedKey = row.key
            form.openedHasSecret = (item.secret?.count ?? 0) > 0
            form.kind = item.kind
            form.label.setText(item.label ?? "")
            form.url.setText(item.url ?? "")
            form.notes.setText(item.notes ?? "")
            form.openedHasSeed = item.oneTimePassword != nil
            form.oneTimePassword = item.oneTimePassword.flatMap(MainScreen.generator(from:))
            form.customFields = item.customFields
            form.tokenDetails = item.kind.isSessionToken ? TokenDetails(item: item) : nil
            form.message = .success("Retrieved")
        } catch {
            form.message = .error(error.description)
        }
        model.focus = .password
    }

    /// The generator of a stored seed, or `nil` when it cannot be read.
    static func generator(from seed: SecretBytes) -> OneTimePassword? {
        var bytes = seed.unsafeArray
        defer { bytes.wipe() }
        return try? OneTimePassword(parsing: bytes)
    }

    /// Save: a new item is added (or an existing one of that name replaced,
    /// as the seeds' Save does); an opened item is updated in one
    /// transaction, renamed when Service or User ID changed (keeping its
    /// creation date; never onto an existing item), its secret kept unless
    /// the Password field was edited. Emptying a non-empty secret asks first.
    @discardableResult
    func save(allowEmptySecret: Bool = false) -> Transition {
        let form = model.form
        guard !form.userID.isEmpty else {
            form.message = .warning("User ID cannot be empty")
            model.focus = .userID
            return .stay
        }
        let key = formKey
        let opened = form.openedKey != nil
        var changes = ItemChanges()
        if opened {
            // The form shows every attribute of the opened item: what it holds is the item.
            changes.label = .some(form.label.isEmpty ? nil : form.label.text)
            changes.comment = .some(form.notes.isEmpty ? nil : form.notes.text)
            changes.url = .some(form.url.isEmpty ? nil : form.url.text)
            changes.kind = form.kind
        } else {
            // Not opened: the seeds' Save may land on an existing item; only
            // what was filled in changes, the rest of that item is kept.
            if !form.label.isEmpty { changes.label = .some(form.label.text) }
            if !form.notes.isEmpty { changes.comment = .some(form.notes.text) }
            if !form.url.isEmpty { changes.url = .some(form.url.text) }
            if form.kind != .password { changes.kind = form.kind }
        }
        if form.seedEdited || !opened {
            if form.oneTimeSeed.isEmpty {
                if form.openedHasSeed { changes.oneTimePassword = .some(nil) }
            } else {
                let seed = form.oneTimeSeed.secret()
                guard MainScreen.generator(from: seed)?.period != nil else {
                    form.message = .warning("One-time seed: not an otpauth://totp/ URI or base32 secret; nothing saved")
                    model.focus = .oneTimeSeed
                    return .stay
                }
                changes.oneTimePassword = .some(seed)
            }
        }
        if !form.fieldName.isEmpty {
            let name = form.fieldName.text
            guard !name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                form.message = .warning("Field name: no control characters; nothing saved")
                model.focus = .fieldName
                return .stay
            }
            var fields = opened ? form.customFields : ((try? store.item(key))?.customFields ?? [])
            let index = fields.firstIndex { $0.name == name }
            if form.fieldValue.isEmpty {
                fields.removeAll { $0.name == name }
            } else if let index {
                fields[index] = CustomField(name: name, value: form.fieldValue.secret(), isHidden: form.fieldHidden)
            } else {
                guard fields.count < Item.maxCustomFields else {
                    form.message = .warning("An item holds at most \(Item.maxCustomFields) fields; nothing saved")
                    return .stay
                }
                fields.append(CustomField(name: name, value: form.fieldValue.secret(), isHidden: form.fieldHidden))
            }
            changes.customFields = fields
        }
        guard let opened = form.openedKey else { return saveNew(key, changes) }
        if form.passwordEdited {
            if form.password.isEmpty && form.openedHasSecret && !allowEmptySecret {
                return .show(
                    .confirm(
                        ConfirmDialog(
                            title: "Empty password",
                            message: "Replace the password of \(opened.described) with an empty one? (y/n)",
                            purpose: .saveEmptySecret)))
            }
            changes.secret = form.password.secret()
        }
        let renamed = key.service != opened.service || key.account != opened.account
        if renamed {
            changes.service = key.service
            changes.account = key.account
            if (try? store.items(
                matching: ItemKey(
                    itemClass: opened.itemClass, accessGroup: opened.accessGroup,
                    service: key.service, account: key.account
                ).query,
                withSecrets: false)) != nil
            {
                form.message = .warning("An item for \(key.described) exists already; nothing changed")
                return .stay
            }
        }
        do {
            _ = try store.update(matching: opened.query, with: changes)
        } catch .duplicateItem {
            form.message = .warning("An item for \(key.described) exists already; nothing changed")
            return .stay
        } catch {
            form.message = .error(error.description)
            return .stay
        }
        let newKey = ItemKey(
            itemClass: opened.itemClass, accessGroup: opened.accessGroup,
            service: key.service, account: key.account)
        reloadItems()
        model.list.select(newKey)
        reopen(newKey)
        if renamed {
            form.message = .success("Saved (renamed from \(opened.described))")
        } else if changes.secret != nil {
            form.message = .success("Saved (replaced the password of \(newKey.described))")
        } else {
            form.message = .success("Saved (\(newKey.described); password kept)")
        }
        return .stay
    }

    private func saveNew(_ key: ItemKey, _ changes: ItemChanges) -> Transition {
        let form = model.form
        let outcome: Vault.SaveOutcome
        do {
            outcome = try store.save(
                service: key.service, account: key.account, secret: form.password.secret(), attributes: changes)
        } catch {
            form.message = .error(error.description)
            return .stay
        }
        reloadItems()
        model.list.select(key)
        reopen(key)
        switch outcome {
        case .added: form.message = .success("Saved (new item)")
        case .updated: form.message = .success("Saved (replaced the password of \(key.described))")
        }
        return .stay
    }

    /// After a save: the form shows the stored item again, focus kept.
    private func reopen(_ key: ItemKey) {
        let focus = model.focus
        model.list.select(key)
        if model.list.selectedRow?.key == key { openSelected() }
        model.focus = focus
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

    /// `u`: copies the selected item's user ID.
    func copyUserID() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return
        }
        form.message = .info("Copying the user ID of \(row.key.described)…")
        clipboard.copy(SecretBytes(utf8: row.account))
    }

    /// `o`: copies the selected item's one-time code as of now.
    func copyOneTimeCode() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return
        }
        do {
            let item = try store.item(row.key)
            guard let seed = item.oneTimePassword else {
                form.message = .warning("\(row.key.described) has no one-time seed")
                return
            }
            guard let otp = MainScreen.generator(from: seed) else {
                form.message = .error("The one-time seed of \(row.key.described) cannot be read")
                return
            }
            form.message = .info("Copying the one-time code of \(row.key.described)…")
            clipboard.copy(SecretBytes(utf8: otp.code(at: clock.now)))
        } catch {
            form.message = .error(error.description)
        }
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

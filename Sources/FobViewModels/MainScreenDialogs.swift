import FobSessions
import FobStore

/// The confirmations the main screen asks for, each beside what `y` then
/// does: deleting one item (`d` in the list, the Delete button) and the
/// logout wipe (`W`).
extension MainScreen {
    /// How many items the logout confirmation names before "and N more".
    static let logoutNamesShown = 3

    /// Carries out a confirmed dialog's purpose.
    func perform(_ purpose: ConfirmDialog.Purpose) -> Transition {
        switch purpose {
        case .deleteItem(let key): deleteItem(key)
        case .logoutWipe(let service, _): logoutWipe(service: service)
        case .saveEmptySecret: save(allowEmptySecret: true)
        }
    }

    // MARK: - Delete

    /// `d` in the list: asks before deleting the selected item.
    func askDeleteSelected() -> Transition {
        guard let row = model.list.selectedRow else {
            model.form.message = MainScreen.noSelection
            return .stay
        }
        return .show(.confirm(deleteDialog(row.key)))
    }

    /// The Delete button: asks first, like `d` in the list, when the item
    /// the form names exists.
    func askDeleteFromForm() -> Transition {
        let form = model.form
        let key = ItemKey(service: form.service.text, account: form.userID.text)
        do {
            _ = try store.items(matching: key.query, withSecrets: false)
            return .show(.confirm(deleteDialog(key)))
        } catch .itemNotFound {
            form.message = .warning("No item for \(key.described)")
        } catch {
            form.message = .error(error.description)
        }
        return .stay
    }

    private func deleteDialog(_ key: ItemKey) -> ConfirmDialog {
        ConfirmDialog(title: "Delete item", message: "Delete \(key.described)? (y/n)", purpose: .deleteItem(key))
    }

    /// `y` on the delete dialog.
    private func deleteItem(_ key: ItemKey) -> Transition {
        let form = model.form
        do {
            try store.delete(matching: key.query)
        } catch .itemNotFound {
            form.message = .warning("No item for \(key.described)")
            reloadItems()
            return .stay
        } catch {
            form.message = .error(error.description)
            return .stay
        }
        let cleared = reloadItems()
        form.message = .success("Deleted" + (cleared ? MainScreen.retrievedClearedNote : ""))
        return .stay
    }

    // MARK: - Logout wipe

    /// `W`: asks before deleting every token and OAuth item (of `service`,
    /// or all), naming the first few.
    func askLogout(service: String?) -> Transition {
        let items: [Item]
        do { items = try LogoutWipe.sessionItems(in: store, service: service) } catch {
            model.form.message = .error(error.description)
            return .stay
        }
        let scope = service.map { " of service \"\($0)\"" } ?? ""
        guard !items.isEmpty else {
            model.form.message = .warning("No token or OAuth items\(scope) to delete")
            return .stay
        }
        let count = items.count
        let shown = items.prefix(MainScreen.logoutNamesShown).map { ItemKey($0).described }
        let more = count > shown.count ? "; and \(count - shown.count) more" : ""
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Logout",
                    message:
                        "Delete \(count) token/OAuth item\(count == 1 ? "" : "s")\(scope) (\(shown.joined(separator: "; "))\(more)), "
                        + "clear the clipboard and lock? (y/n)",
                    purpose: .logoutWipe(service: service, count: count))))
    }

    /// The timer step of a wipe that found the vault busy: one more short try.
    /// - Returns: the wipe's transition, or `nil` when no wipe is waiting.
    func retryPendingWipe() -> Transition? {
        guard case .some(let service) = pendingWipe else { return nil }
        return logoutWipe(service: service)
    }

    /// How long the wipe waits for another process's write lock before the
    /// screen says the vault is busy (milliseconds): short, so the UI never
    /// freezes behind another process.
    static let wipeBusyTimeoutMilliseconds: Int32 = 250

    /// `y` on the logout dialog: deletes (one transaction), then locks; when
    /// the delete failed, stays unlocked (clipboard cleared), nothing deleted,
    /// and says why, or that the vault is busy and to try again.
    private func logoutWipe(service: String?) -> Transition {
        let report: LogoutWipe.Report
        do {
            report = try LogoutWipe.run(
                in: store, service: service,
                busyTimeoutMilliseconds: MainScreen.wipeBusyTimeoutMilliseconds)
        } catch {
            clipboard.clearNow()
            if error.isBusy {
                // Stay responsive: try again from the timer, not in a blocking wait.
                pendingWipe = .some(service)
                model.form.message = .warning(
                    "Vault busy: another fob process is writing; logging out as soon as it is done")
            } else {
                pendingWipe = nil
                model.form.message = .error("Logout failed: nothing was deleted; \(error)")
            }
            return .stay
        }
        pendingWipe = nil
        if report.succeeded { return .lock(.success(report.summary)) }
        clipboard.clearNow()
        let cleared = reloadItems()
        model.form.message = .error(report.summary + (cleared ? MainScreen.retrievedClearedNote : ""))
        return .stay
    }
}

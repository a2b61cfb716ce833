import FobAccess
import FobClipboard
import FobSessions
import FobStore

/// The confirmations the main screen asks for, each beside what `y` then
/// does (deleting one item from the Delete button, the editor's questions),
/// and the logout wipe the review (`W`) starts.
extension MainScreen {
    /// Carries out a confirmed dialog's purpose.
    func perform(_ purpose: ConfirmDialog.Purpose) -> Transition {
        switch purpose {
        case .deleteItem(let key): deleteItem(key)
        case .saveEmptySecret: save(allowEmptySecret: true)
        case .saveOverChanges: save(overwriteChanges: true)
        case .leaveEditor(let exit): saveAndLeave(then: exit)
        case .resolveConflict(let key): resolve(key, keepRemote: false)
        }
    }

    // MARK: - Delete

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

    /// `y` on the delete dialog: deletes, undoable with `z`.
    private func deleteItem(_ key: ItemKey) -> Transition {
        deleteWithUndo(key)
        return .stay
    }

    // MARK: - Logout wipe

    /// The timer step of a wipe that found the vault busy: one more short try.
    /// - Returns: the wipe's transition, or `nil` when no wipe is waiting.
    func retryPendingWipe() -> Transition? {
        guard let keys = pendingWipe else { return nil }
        return logoutWipe(keys: keys)
    }

    /// How long the wipe waits for another process's write lock before the
    /// screen says the vault is busy (milliseconds): short, so the UI never
    /// freezes behind another process.
    static let wipeBusyTimeoutMilliseconds: Int32 = 250

    /// `y` in the logout review: deletes the items ticked (one transaction), then locks; when
    /// the delete failed, stays unlocked (clipboard cleared), nothing deleted,
    /// and says why, or that the vault is busy and to try again.
    func logoutWipe(keys: Set<ItemKey>) -> Transition {
        let report: LogoutWipe.Report
        do {
            report = try LogoutWipe.run(
                in: store, keys: keys,
                busyTimeoutMilliseconds: MainScreen.wipeBusyTimeoutMilliseconds)
        } catch {
            clipboard.clearNow()
            if error.isBusy {
                // Stay responsive: try again from the timer, not in a blocking wait.
                pendingWipe = keys
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

import FobAccess
import FobClipboard
import FobStore
import FobTokens

/// The Home form's Save and Retrieve buttons, opening the selected item in
/// the form, copying its secret, user ID or one-time code (`c`, `u`, `o`),
/// and the clipboard's reports.
extension MainScreen {
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
            form.message = .warning("No item for \(key.described)")
        } catch {
            form.message = .error(error.description)
        }
    }

    /// The highlighted row and its item as stored, or `nil` once the
    /// status line says why not (no selection, a store error).
    private func selectedItem() -> (row: ItemRow, item: Item)? {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return nil
        }
        do { return (row, try store.item(row.key)) } catch {
            form.message = .error(error.description)
            return nil
        }
    }

    /// Hands `value` to the clipboard helper, `what` (`password of
    /// slack.com / ana`) naming it in the messages; the outcome arrives later
    /// as a clipboard event (``show(_:)``).
    private func startCopy(_ value: SecretBytes, _ what: String) {
        copying = what
        model.form.message = .info("Copying the \(what)…")
        clipboard.copy(value)
    }

    /// `c`: copies the selected item's secret.
    func copySelected() {
        guard let (row, item) = selectedItem(), let secret = item.secret else { return }
        startCopy(secret, "\(item.kind.secretName) of \(row.key.shortName)")
    }

    /// `u`: copies the selected item's user ID.
    func copyUserID() {
        guard let row = model.list.selectedRow else {
            model.form.message = MainScreen.noSelection
            return
        }
        startCopy(SecretBytes(utf8: row.account), "user ID of \(row.key.shortName)")
    }

    /// `o`: copies the selected item's one-time code as of now.
    func copyOneTimeCode() {
        guard let (row, item) = selectedItem() else { return }
        guard let seed = item.oneTimePassword else {
            model.form.message = .warning("\(row.key.described) has no one-time seed")
            return
        }
        guard let otp = MainScreen.generator(from: seed) else {
            model.form.message = .error("The one-time seed of \(row.key.described) cannot be read")
            return
        }
        startCopy(SecretBytes(utf8: otp.code(at: clock.now)), "one-time code of \(row.key.shortName)")
    }

    /// Puts what the clipboard did on the Message line.
    func show(_ events: [ClipboardEvent]) {
        let form = model.form
        for event in events {
            switch event {
            case .copied(let after):
                // `Copied password of slack.com / ana · clears in 45 s`: what, of which item.
                let what = copying.map { "Copied \($0)" } ?? "Copied to the clipboard (\(clipboard.clipboard.name))"
                form.message = .success(after > 0 ? "\(what) · clears in \(Int(after)) s" : what)
            case .copyFailed(let error):
                form.message = .error("Copy \(copying.map { "of the \($0) " } ?? "")failed: \(error)")
            case .cleared(.cleared), .cleared(.clearedUnchecked):
                form.message = .info("Clipboard cleared")
            case .cleared(.leftAlone):
                form.message = .info("Clipboard left alone: it holds other text now")
            case .cleared(.failed(let error)):
                form.message = .error("Could not clear the clipboard: \(error)")
            }
        }
    }

    /// "No item selected", for list commands on an empty list.
    static let noSelection = StatusLine.warning("No item selected")
}

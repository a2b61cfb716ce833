import FobClipboard
import FobStore

/// The Home form's Save and Retrieve buttons, opening the selected item in
/// the form, copying its secret, and the clipboard's reports.
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

    /// `c`: hands the selected secret to the clipboard helper; the outcome
    /// arrives later as a clipboard event (``show(_:)``).
    func copySelected() {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
            return
        }
        do {
            let item = try store.item(row.key)
            guard let secret = item.secret else { return }
            copying = "\(item.kind.secretName) of \(row.key.shortName)"
            form.message = .info("Copying the \(copying!)…")
            clipboard.copy(secret)
        } catch {
            form.message = .error(error.description)
        }
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

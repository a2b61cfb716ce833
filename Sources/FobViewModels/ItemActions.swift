import FobAccess
import FobSessions
import FobStore
import FoundationEssentials

/// Item actions with undo: `d` deletes at once and `z` brings the item back
/// exactly; `z` also undoes a Save that replaced a secret.
extension MainScreen {
    /// `d` in the list: deletes the selected item, keeping it for `z`.
    func deleteSelectedWithUndo() {
        guard let row = model.list.selectedRow else {
            model.form.message = MainScreen.noSelection
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
            // Deletes the item as read, so that `z` brings back what was deleted.
            var query = key.query
            if item.revision > 0 { query.expectedRevision = item.revision }
            try store.delete(matching: query)
        } catch .itemNotFound {
            form.message = .warning("No item for \(key.described)")
            reloadItems()
            return
        } catch .revisionMismatch {
            form.message = .warning("\(MainScreen.shortName(key)) changed elsewhere as you deleted it; nothing deleted")
            reloadItems()
            return
        } catch {
            form.message = .error(error.description)
            return
        }
        undo.record(.deleted(item), at: clock.now)
        model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        if form.openedKey == key || form.retrievedKey == key || (form.openedKey == nil && formKey == key) {
            form.wipe()
            if model.focus != .list && model.focus != .filter { model.focus = .list }
        }
        reloadItems()
        form.message = .success("Deleted \(MainScreen.shortName(key))" + UndoBuffer.hint)
    }

    /// The timer step of undo: once its time is up, the message that offered
    /// `z` loses that offer.
    func expireUndo() {
        let ended = undo.expire(at: clock.now)
        model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        guard ended else { return }
        let message = model.form.message
        guard message.text.hasSuffix(UndoBuffer.hint) else { return }
        model.form.message = StatusLine(message.tone, String(message.text.dropLast(UndoBuffer.hint.count)))
    }

    /// `z`: undoes the last delete or secret replacement, if its time is not up.
    func undoLast() {
        let form = model.form
        let taken = undo.take(at: clock.now)
        model.undoSecondsLeft = undo.secondsLeft(at: clock.now)
        guard let entry = taken else {
            form.message = .info("Nothing to undo")
            return
        }
        let key: ItemKey
        do {
            switch entry {
            case .deleted(let item):
                key = ItemKey(item)
                try store.restore([.add(item)])
            case .replaced(let before, let now):
                key = ItemKey(before)
                let stored = try store.item(now)
                try store.restore([.replace(existing: stored, with: before)])
            }
        } catch {
            form.message = .error("Undo failed: \(error)")
            return
        }
        reloadItems()
        model.list.select(key)
        // The editor shows the restored item again if it was open on it; focus stays where it is.
        if form.openedKey == key && !form.hasUnsavedEdits { reopen(key) }
        form.message = .success("Restored \(MainScreen.shortName(key))")
    }

    /// `zoom.us` or `zoom.us / ana`: an item's name in short messages,
    /// without control characters.
    static func shortName(_ key: ItemKey) -> String {
        key.account.isEmpty ? displaySafe(key.service) : "\(displaySafe(key.service)) / \(displaySafe(key.account))"
    }
}

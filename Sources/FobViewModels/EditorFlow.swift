import FobSessions
import FobStore
import FoundationEssentials

/// Entering and leaving the editor: Enter or `e` opens the highlighted
/// item, `n` an empty one, and unsaved edits are never dropped without
/// asking (Save / Discard / Keep editing).
extension MainScreen {
    /// Enter or `e` on the list: opens the highlighted item in the editor,
    /// focus on Service; asks first when the editor holds unsaved edits of
    /// another item.
    func editSelected() -> Transition {
        let form = model.form
        guard let row = model.list.selectedRow else {
            form.message = MainScreen.noSelection
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
            form.message = .info("Editing \(MainScreen.shortName(row.key))" + MainScreen.editingHint)
        }
        return .stay
    }

    /// What the message of an opened editor ends with.
    static let editingHint = ": Ctrl-S saves, Esc goes back"

    /// `n`: an empty editor, focus on Service.
    func startNewItem() {
        model.form.wipe()
        model.form.message = .info("New item")
        model.focus = .service
    }

    /// The question asked before unsaved edits would be dropped.
    func askLeaveEditor(then exit: EditorExit) -> Transition {
        let name = model.form.baseline.map { MainScreen.shortName($0.key) } ?? "The new item"
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Unsaved edits",
                    message: "\(name) has unsaved edits. Save them before going on?",
                    purpose: .leaveEditor(then: exit))))
    }

    /// `y` on the unsaved-edits question: saves; once nothing is left
    /// unsaved, goes on to `exit` (a refusal or another question stops there).
    func saveAndLeave(then exit: EditorExit) -> Transition {
        let transition = save()
        guard case .stay = transition, !model.form.hasUnsavedEdits else { return transition }
        return leave(to: exit)
    }

    /// `d` on the unsaved-edits question: drops the edits, then goes on to `exit`.
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
    /// them and says Save will ask.
    func followOpenedItem() {
        guard model.list.generation != followedGeneration else { return }
        followedGeneration = model.list.generation
        let form = model.form
        guard let baseline = form.baseline,
            let row = model.list.allRows.first(where: { $0.key == baseline.key }),
            row.revision > 0 && baseline.item.revision > 0
                ? row.revision != baseline.item.revision : row.modified != baseline.item.modified
        else { return }
        let name = MainScreen.shortName(baseline.key)
        if form.hasUnsavedEdits {
            form.message = .warning("\(name) changed elsewhere; your edits are kept and Save will ask")
        } else {
            reopen(baseline.key)
            form.message = .info("\(name) changed elsewhere: the editor shows it as stored now")
        }
    }
}

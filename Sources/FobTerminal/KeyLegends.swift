import FobViewModels

/// Legend entries that depend on what the app shows, for ``KeyBindings/table``.
extension KeyBindings {
    /// `text` while the list highlights an item, else nothing (`No matches`: no item to act on).
    static func onItem(_ text: String) -> KeyBinding.Legend {
        .computed { app in app.mainModel?.list.selectedRow == nil ? "" : text }
    }

    /// A legend entry that reads `notes` while the Notes field has focus (Enter breaks
    /// the line there, Ctrl-G fills nothing), else `other`.
    static func byNotes(_ notes: String, else other: String) -> KeyBinding.Legend {
        .computed { app in app.mainModel?.focus == .notes ? notes : other }
    }

    /// `text` while the Password field has focus, else nothing: Ctrl-G
    /// fills only the Password field (elsewhere it says to Tab there).
    static func onPassword(_ text: String) -> KeyBinding.Legend {
        .computed { app in app.mainModel?.focus == .password ? text : "" }
    }

    /// What Ctrl-R reveals from a form field or button: the Retrieved
    /// Password, except in the Password field while it holds text or when
    /// nothing was retrieved, where it is the typed password.
    @Sendable static func revealLegend(_ app: AppModel) -> String {
        guard let main = app.mainModel, main.focus == .password else { return "Ctrl-R reveal retrieved" }
        let retrieved = main.form.password.isEmpty && main.form.retrievedPassword != nil
        return "Ctrl-R " + (retrieved ? "reveal retrieved" : "reveal typed")
    }
}

import FobAccess
import FobStore
import FobSystem
import FoundationEssentials

/// The editor's unsaved edits, kept across a lock this UI made (the idle
/// lock, Ctrl-L) so that nothing typed is lost: every field's text in
/// ``SecretBytes`` (locked pages, wiped when freed), what the editor had
/// opened, and where focus was. A lock made elsewhere (`fob lock`, the
/// agent dropping its keys) or the logout wipe wipes it unread.
final class EditorDraft {
    /// Each text field's bytes, in ``fields(of:)`` order.
    private var texts: [SecretBytes]
    private let kind: ItemKind
    private let fieldHidden: Bool
    private let passwordEdited: Bool
    private let seedEdited: Bool
    private let access: AccessRuleDraft
    /// What the editor had opened, so that Save still asks when the item
    /// changed elsewhere meanwhile; `nil` for a new item.
    private let baseline: EditorBaseline?
    private let focus: MainFocus
    /// The item's short name, or "a new item", for messages.
    let name: String

    /// The edits of `form`, or `nil` when it has none unsaved.
    init?(_ form: HomeFormModel, focus: MainFocus) {
        guard form.hasUnsavedEdits else { return nil }
        texts = EditorDraft.fields(of: form).map { $0.secret() }
        kind = form.kind
        fieldHidden = form.fieldHidden
        passwordEdited = form.passwordEdited
        seedEdited = form.seedEdited
        access = form.access
        baseline = form.baseline
        self.focus = focus == .list || focus == .filter ? .service : focus
        name = form.baseline.map(\.key.shortName) ?? "a new item"
    }

    /// The form's text fields, in the order the draft keeps them.
    private static func fields(of form: HomeFormModel) -> [TextFieldState] {
        [
            form.service, form.userID, form.password, form.label, form.url, form.notes, form.oneTimeSeed,
            form.fieldName, form.fieldValue,
        ]
    }

    /// Puts the edits back in `editor`: the item opened as stored now (its
    /// retrieved values, code and fields), the baseline it was opened with,
    /// then every field as it was typed. Wipes the draft.
    func restore(into editor: EditorSession) {
        let model = editor.model
        if let key = baseline?.key, (try? editor.store.item(key)) != nil {
            editor.open(key)
        } else {
            model.form.wipe()
        }
        let form = model.form
        for (field, bytes) in zip(EditorDraft.fields(of: form), texts) {
            field.clear()
            var copy = bytes.unsafeArray
            field.insert(String(decoding: copy, as: UTF8.self))
            copy.wipe()
        }
        form.kind = kind
        form.fieldHidden = fieldHidden
        form.passwordEdited = passwordEdited
        form.seedEdited = seedEdited
        form.access = access
        form.baseline = baseline
        if baseline == nil { form.openedKey = nil }
        model.focus = focus
        wipe()
    }

    /// Drops every kept byte.
    func wipe() { texts = [] }
}

import FobStore
import FobTokens
import FoundationEssentials

/// The password generator on the main screen: Ctrl-G in the Password field
/// fills it at once with the kept settings; the generator dialog (Alt-G,
/// or Enter on the Generator row) changes those settings and fills the
/// field with the password it previews.
final class GeneratorFlow {
    /// The state drawn: the kept settings, the dialog, the Password field.
    let model: MainModel

    init(model: MainModel) { self.model = model }

    /// The end of the message of a generated password, hidden and shown.
    static let showsHint = "; Ctrl-R shows it"
    static let hidesHint = "; Ctrl-R hides it"

    /// Ctrl-G in the Password field: fills it with a new password made with
    /// ``MainModel/generatorSettings``. Elsewhere, says where it works.
    func generatePassword() {
        let form = model.form
        guard model.focus == .password else {
            form.message = .warning("Ctrl-G fills the Password field: Tab to it first (Alt-G changes the settings)")
            return
        }
        let policy = model.generatorSettings
        var bytes: [UInt8]
        do { bytes = try PasswordGenerator.generate(policy) } catch {
            form.message = .error("Cannot generate: \(error.description)")
            return
        }
        defer { bytes.wipe() }
        fillPassword(with: bytes)
        form.message = .success("Generated a password (\(Self.sizeAndEntropy(of: policy)))" + GeneratorFlow.showsHint)
    }

    /// Opens the generator dialog on a copy of the kept settings.
    func openGenerator() -> Transition {
        model.generatorDialog = GeneratorDialogModel(policy: model.generatorSettings)
        return .show(.generator)
    }

    /// An action while the generator dialog shows.
    /// - Returns: whether the dialog stays open.
    func handleGenerator(_ action: Action) -> Bool {
        guard let dialog = model.generatorDialog else { return false }
        if case .toggleReveal = action {
            dialog.isPreviewRevealed.toggle()
            return true
        }
        if let field = dialog.focusedField, field.apply(action) {
            _ = field.takeDroppedLineBreaks()
            switch action {
            case .insert, .deleteBackward, .deleteForward, .clearField: dialog.regenerate()
            default: break
            }
            return true
        }
        switch action {
        case .focusNext: dialog.moveFocus(1)
        case .focusPrevious: dialog.moveFocus(-1)
        case .cycleKind: dialog.toggle()
        case .generatePassword: dialog.regenerate()
        case .submit: return !useGeneratorPreview()
        case .cancel, .dismiss:
            closeGenerator()
            model.form.message = .info("Generator closed; nothing changed")
            return false
        default: break
        }
        return true
    }

    /// Enter in the dialog: the preview goes into the Password field and the
    /// dialog's settings are kept for Ctrl-G; opened from the list, only the
    /// settings are kept. With settings that cannot be used, nothing
    /// changes and the dialog stays.
    /// - Returns: whether the dialog was closed.
    private func useGeneratorPreview() -> Bool {
        guard let dialog = model.generatorDialog, let preview = dialog.preview,
            let policy = try? dialog.policy()
        else { return false }
        model.generatorSettings = policy
        if model.focus == .list || model.focus == .filter {
            // From the list the form may hold an item the list does not highlight: nothing is filled or opened.
            model.form.message = .info(Self.keptFromList)
            closeGenerator()
            return true
        }
        var bytes = preview.unsafeArray
        defer { bytes.wipe() }
        fillPassword(with: bytes)
        model.form.message = .success(
            "Generated a password (\(Self.sizeAndEntropy(of: policy)))" + GeneratorFlow.showsHint)
        closeGenerator()
        model.focus = .password
        return true
    }

    /// What the dialog's Enter says when it was opened from the list.
    static let keptFromList = "Generator settings kept; Ctrl-G in an item's Password field uses them"

    /// Drops the dialog, wiping its preview.
    func closeGenerator() {
        model.generatorDialog?.wipe()
        model.generatorDialog = nil
    }

    /// Replaces the Password field's text with UTF-8 `bytes`; the field counts as edited.
    private func fillPassword(with bytes: [UInt8]) {
        let form = model.form
        form.password.clear()
        form.password.insert(String(decoding: bytes, as: UTF8.self))
        form.passwordEdited = true
    }

    /// "20 characters" or "6 words".
    static func size(of policy: PasswordPolicy) -> String {
        policy.kind == .words ? "\(policy.words) words" : "\(policy.length) characters"
    }

    /// What Ctrl-G's and the dialog's Enter messages say of a password made
    /// with `policy`: its size and entropy, "20 characters, 130.9 bits".
    static func sizeAndEntropy(of policy: PasswordPolicy) -> String {
        guard let bits = try? policy.entropy() else { return size(of: policy) }
        return "\(size(of: policy)), \(GeneratorDialogModel.entropyText(bits))"
    }
}

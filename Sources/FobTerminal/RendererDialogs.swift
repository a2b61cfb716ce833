import FobStore
import FobTokens
import FobViewModels
import FoundationEssentials

/// The boxes drawn over the middle of the screen: the create-vault and
/// unlock screens, the help overlay, confirmation dialogs and the password
/// generator dialog.
extension Renderer {
    /// The create-vault box: both masked password fields, the KDF preset, the message.
    func drawCreate(_ canvas: inout Canvas, _ model: CreateVaultModel) {
        let (box, x, inner) = dialogInterior(&canvas, height: 10, width: 72, title: "Create a vault")
        canvas.put("No vault yet at \(vaultDescription).", row: box.row + 1, column: x, width: inner, role: .dim)
        drawLabelled(
            &canvas, "New master password", model.newPassword, row: box.row + 3, column: x, width: inner,
            focused: model.focus == .newPassword)
        drawLabelled(
            &canvas, "Confirm", model.confirmation, row: box.row + 4, column: x, width: inner,
            focused: model.focus == .confirm)
        canvas.put("Key derivation", row: box.row + 6, column: x, width: Self.labelWidth, role: .label)
        canvas.put(
            "Argon2id \(model.kdfPreset.rawValue) (Ctrl-T changes)", row: box.row + 6,
            column: x + Self.labelWidth, width: inner - Self.labelWidth, role: .normal)
        if !model.message.isEmpty {
            canvas.put(
                model.message.text, row: box.row + 8, column: x, width: inner, role: Self.role(for: model.message.tone))
        }
    }

    /// The unlock box: the masked master password and the message.
    func drawUnlock(_ canvas: inout Canvas, _ model: UnlockModel) {
        // The message wraps over up to three rows: what the lock kept or dropped is never cut.
        let width = min(72, canvas.columns - 2)
        let message =
            model.message.isEmpty ? [] : Array(Self.wrap(model.message.text, width: max(1, width - 4)).prefix(3))
        // A request of the agent waiting for this unlock (an SSH signature) wraps over up to three rows.
        let request = model.requests.line.map { Array(Self.wrap($0, width: max(1, width - 4)).prefix(3)) } ?? []
        let extra = request.isEmpty ? 0 : request.count + 1
        let (box, x, inner) = dialogInterior(
            &canvas, height: 7 + max(1, message.count) + extra, width: 72, title: "Unlock")
        canvas.put("Vault \(vaultDescription)", row: box.row + 1, column: x, width: inner, role: .dim)
        for (i, line) in request.enumerated() {
            canvas.put(line, row: box.row + 3 + i, column: x, width: inner, role: .warning)
        }
        drawLabelled(
            &canvas, "Master password", model.password, row: box.row + 3 + extra, column: x, width: inner,
            focused: true)
        for (i, line) in message.enumerated() {
            canvas.put(
                line, row: box.row + 5 + extra + i, column: x, width: inner, role: Self.role(for: model.message.tone))
        }
    }

    /// Draws a dialog box (``dialogBox(_:height:width:title:)``) and gives
    /// its interior too: the column after its two-cell margin and the width
    /// inside both margins.
    private func dialogInterior(_ canvas: inout Canvas, height: Int, width: Int, title: String) -> (
        box: (row: Int, column: Int, width: Int), x: Int, inner: Int
    ) {
        let box = dialogBox(&canvas, height: height, width: width, title: title)
        return (box, box.column + 2, box.width - 4)
    }

    /// A caption in the label column, then `field` in the rest of `width`.
    private func drawLabelled(
        _ canvas: inout Canvas, _ label: String, _ field: TextFieldState, row: Int, column: Int, width: Int,
        focused: Bool
    ) {
        canvas.put(label, row: row, column: column, width: Self.labelWidth, role: .label)
        drawField(
            &canvas, field, row: row, column: column + Self.labelWidth, width: width - Self.labelWidth,
            focused: focused)
    }

    /// A confirmation dialog: its question wrapped, then its buttons
    /// (``ConfirmDialog/answers``).
    func drawConfirm(_ canvas: inout Canvas, _ dialog: ConfirmDialog) {
        let width = min(64, canvas.columns - 2)
        let lines = Self.wrap(dialog.message, width: width - 4)
        let (box, x, inner) = dialogInterior(&canvas, height: lines.count + 4, width: width, title: dialog.title)
        for (i, line) in lines.enumerated() {
            canvas.put(line, row: box.row + 1 + i, column: x, width: inner)
        }
        canvas.cursor = (box.row + 1, x) // on the question, for screen readers
        var bx = x
        let buttons = dialog.answers.map { "[ \($0) ]" }
        for (text, role) in buttons.map({ ($0, Role.button) }) {
            bx +=
                canvas.put(text, row: box.row + lines.count + 2, column: bx, width: max(0, x + inner - bx), role: role)
                + 2
        }
    }

    /// The password generator dialog: the fields of its mode, the preview
    /// (masked until Ctrl-R) with its entropy, the problem with the settings
    /// if any (wrapped over as many lines as it takes, never cut), and the
    /// Use and Cancel buttons.
    func drawGenerator(_ canvas: inout Canvas, _ dialog: GeneratorDialogModel) {
        let fields = dialog.fields
        let width = min(72, canvas.columns - 2)
        let problem = dialog.problem.map { Self.wrap($0, width: max(1, width - 4)) } ?? []
        let height = fields.count + 8 + max(1, problem.count)
        let (box, x, inner) = dialogInterior(&canvas, height: height, width: width, title: "Password generator")
        let valueColumn = x + Self.labelWidth
        let valueWidth = max(0, inner - Self.labelWidth)
        let bottom = box.row + min(height, canvas.rows - 2) - 1 // the box's lower border
        var y = box.row + 1
        var cursor: (row: Int, column: Int)?
        for field in fields {
            guard y < bottom else { break }
            let focused = dialog.focus == field
            canvas.put(Self.generatorLabel(field), row: y, column: x, width: Self.labelWidth, role: .label)
            if let text = Self.generatorTextField(field, of: dialog) {
                drawField(&canvas, text, row: y, column: valueColumn, width: min(valueWidth, 30), focused: focused)
                if focused { cursor = canvas.cursor }
                if field == .separator, !focused {
                    let note = text.text == " " ? "(a space)" : (text.isEmpty ? "(none)" : "")
                    canvas.put(note, row: y, column: valueColumn + 32, width: max(0, valueWidth - 32), role: .dim)
                }
            } else {
                let value: String
                if let characterClass = field.characterClass {
                    value = dialog.classes.contains(characterClass) ? "[x]" : "[ ]"
                } else {
                    value = dialog.kind == .characters ? "characters" : "words"
                }
                let shown = focused && field == .mode ? "< \(value) >" : value
                canvas.put(shown, row: y, column: valueColumn, width: valueWidth, role: focused ? .focus : .field)
                // On the focused choice, so a screen reader reads it.
                if focused { cursor = (y, valueColumn) }
                if field == .symbols {
                    canvas.put(
                        Self.symbolsNote, row: y, column: valueColumn + 5, width: max(0, valueWidth - 5), role: .dim)
                }
            }
            y += 1
        }
        y += 1
        if y < bottom {
            canvas.put("Preview", row: y, column: x, width: Self.labelWidth, role: .label)
            var preview = dialog.previewText
            let masked = !dialog.isPreviewRevealed
            if masked, !canvas.glyphs.unicode { preview = String(repeating: canvas.glyphs.mask, count: preview.count) }
            canvas.put(preview, row: y, column: valueColumn, width: valueWidth, role: masked ? .masked : .normal)
        }
        y += 1
        if y < bottom {
            canvas.put("Entropy", row: y, column: x, width: Self.labelWidth, role: .label)
            canvas.put(dialog.entropyText, row: y, column: valueColumn, width: valueWidth)
        }
        y += 1
        for line in problem where y < bottom {
            canvas.put(line, row: y, column: x, width: inner, role: .warning)
            y += 1
        }
        y += problem.isEmpty ? 2 : 1
        if y < bottom {
            var bx = x
            for text in ["[ Enter Use ]", "[ Esc Cancel ]"] {
                bx += canvas.put(text, row: y, column: bx, width: max(0, x + inner - bx), role: .button) + 2
            }
        }
        canvas.cursor = cursor
    }

    /// A generator dialog field's caption.
    static func generatorLabel(_ field: GeneratorDialogModel.Field) -> String {
        switch field {
        case .mode: return "Make"
        case .length: return "Length"
        case .lower: return "Lower case a-z"
        case .upper: return "Upper case A-Z"
        case .digits: return "Digits 0-9"
        case .symbols: return "Symbols"
        case .excluded: return "Excluded characters"
        case .words: return "Words"
        case .separator: return "Separator"
        }
    }

    /// What the Symbols toggle stands for, beside it: every ASCII punctuation
    /// character (``CharacterClass/symbols``), not a handful.
    static let symbolsNote = "(all 32 ASCII punctuation characters)"

    /// The text field behind a generator dialog field, or `nil` for a choice.
    static func generatorTextField(_ field: GeneratorDialogModel.Field, of dialog: GeneratorDialogModel)
        -> TextFieldState?
    {
        switch field {
        case .length: return dialog.length
        case .excluded: return dialog.excluded
        case .words: return dialog.words
        case .separator: return dialog.separator
        case .mode, .lower, .upper, .digits, .symbols: return nil
        }
    }
}

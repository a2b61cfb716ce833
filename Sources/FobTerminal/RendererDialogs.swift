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
        // While the vault is being created the notice replaces the message (an earlier mismatch is past).
        if let notice {
            canvas.put(notice, row: box.row + 8, column: x, width: inner, role: .info)
        } else if !model.message.isEmpty {
            canvas.put(
                model.message.text, row: box.row + 8, column: x, width: inner, role: Self.role(for: model.message.tone))
        }
    }

    /// The unlock box: the masked master password and the message.
    func drawUnlock(_ canvas: inout Canvas, _ model: UnlockModel) {
        // The message wraps over up to three rows: what the lock kept or dropped is never cut.
        let width = min(72, canvas.columns - 2)
        // A new try ("Unlocking…" while the KDF runs) takes the place of the last one's message.
        let shown = notice.map { StatusLine.info($0) } ?? model.message
        let message = shown.isEmpty ? [] : Array(Self.wrap(shown.text, width: max(1, width - 4)).prefix(3))
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
                line, row: box.row + 5 + extra + i, column: x, width: inner, role: Self.role(for: shown.tone))
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
    /// (``ConfirmDialog/answers``). The resolve dialog of a sync conflict
    /// shows, between them, both versions' passwords: masked until Ctrl-R
    /// (`versions`, ``MainModel/conflictSecretTexts``), then whole, wrapped.
    ///
    /// Every button shows whole: the box widens (up to the screen's width)
    /// to hold them on one row, a narrower screen puts them on as many rows
    /// as they take, and a screen too low for the whole question cuts the
    /// question (ending it with `…`), never a button.
    func drawConfirm(_ canvas: inout Canvas, _ dialog: ConfirmDialog, versions: (local: String, other: String)? = nil) {
        let buttons = dialog.answers.map { "[ \($0) ]" }
        let oneRow = buttons.map { DisplayWidth.cells(of: $0) }.reduce(0, +) + 2 * (buttons.count - 1)
        let width = min(max(64, oneRow + 4), canvas.columns - 2)
        let buttonRows = Self.buttonRows(buttons, width: width - 4)
        var lines = Self.wrap(dialog.message, width: width - 4)
        var roles = Array(repeating: Role.normal, count: lines.count)
        if case .resolveConflict = dialog.purpose, let versions {
            let captionWidth = 16
            let valueWidth = max(1, width - 4 - captionWidth)
            lines.append("")
            roles.append(.normal)
            for (caption, value) in [("This vault's", versions.local), ("Other device's", versions.other)] {
                for (i, part) in Self.chunk(value, width: valueWidth).enumerated() {
                    let label = i == 0 ? caption : ""
                    lines.append(label + String(repeating: " ", count: captionWidth - label.count) + part)
                    roles.append(.normal)
                }
            }
            let masked = versions.local == ItemPreview.mask
            lines.append(masked ? "Ctrl-R reveals both passwords" : "Ctrl-R hides them")
            roles.append(.dim)
        }
        // Inside a box of at most the screen's height less two: the question, a blank row, the buttons.
        let room = max(1, canvas.rows - 4 - 1 - buttonRows.count)
        if lines.count > room {
            lines = Array(lines.prefix(room))
            roles = Array(roles.prefix(room))
            lines[room - 1] = TextFit.truncate(lines[room - 1] + " …", width: width - 4, glyphs: canvas.glyphs)
        }
        let height = lines.count + 3 + buttonRows.count
        let (box, x, inner) = dialogInterior(&canvas, height: height, width: width, title: dialog.title)
        for (i, line) in lines.enumerated() {
            canvas.put(line, row: box.row + 1 + i, column: x, width: inner, role: roles[i])
        }
        canvas.cursor = (box.row + 1, x) // on the question, for screen readers
        for (i, row) in buttonRows.enumerated() {
            var bx = x
            for text in row {
                bx +=
                    canvas.put(
                        text, row: box.row + lines.count + 2 + i, column: bx, width: max(0, x + inner - bx),
                        role: .button)
                    + 2
            }
        }
    }

    /// `buttons` in rows of at most `width` cells, two cells between
    /// neighbours, in order: as many on a row as fit, and a button wider
    /// than `width` alone on its row.
    static func buttonRows(_ buttons: [String], width: Int) -> [[String]] {
        var rows: [[String]] = []
        var used = 0
        for button in buttons {
            let cells = DisplayWidth.cells(of: button)
            if let last = rows.indices.last, used + 2 + cells <= width {
                rows[last].append(button)
                used += 2 + cells
            } else {
                rows.append([button])
                used = cells
            }
        }
        return rows
    }

    /// The password generator dialog: the fields of its mode, the preview
    /// (masked until Ctrl-R, wrapped rather than cut) with its entropy, the
    /// problem with the settings if any (wrapped over as many lines as it
    /// takes, never cut), and the Use and Cancel buttons.
    ///
    /// The box spans the screen's width, so no pane shows beside it cut in
    /// the middle of a word. On a screen too low for everything (40 × 12)
    /// the blank lines go first, then the fields scroll (`↑ N more` /
    /// `↓ N more`) around the focused one; the preview, the entropy, the
    /// problem and the buttons always show.
    func drawGenerator(_ canvas: inout Canvas, _ dialog: GeneratorDialogModel) {
        let fields = dialog.fields
        let inner = canvas.columns - 4
        let valueWidth = max(1, inner - Self.labelWidth)
        var preview = dialog.previewText
        let masked = !dialog.isPreviewRevealed
        if masked, !canvas.glyphs.unicode { preview = String(repeating: canvas.glyphs.mask, count: preview.count) }
        let problem = dialog.problem.map { Self.wrap($0, width: max(1, inner)) } ?? []
        let room = canvas.rows - 4 // inside the box, which leaves the header and the legend
        var previewLines = Self.chunk(preview, width: valueWidth)
        // Preview, entropy (or the problem), buttons: they always show.
        let tail = { previewLines.count + max(1, problem.count) + 1 }
        while tail() + 1 > room, previewLines.count > 1 { previewLines.removeLast() }
        let roomy = fields.count + tail() + 2 <= room
        let fieldRows = max(1, min(fields.count, room - tail() - (roomy ? 2 : 0)))
        let height = 2 + fieldRows + tail() + (roomy ? 2 : 0)
        let (box, x, _) = dialogInterior(&canvas, height: height, width: canvas.columns, title: "Password generator")
        let focusIndex = fields.firstIndex(of: dialog.focus) ?? 0
        let first = max(0, min(focusIndex - (fieldRows - 1) / 2, fields.count - fieldRows))
        var y = box.row + 1
        var cursor: (row: Int, column: Int)?
        for (index, field) in fields.enumerated().dropFirst(first).prefix(fieldRows) {
            if let at = drawGeneratorField(&canvas, field, of: dialog, row: y, column: x, width: inner) {
                cursor = at
            }
            // Fields out of view: said at the right end of the first and last rows shown.
            let hidden = index == first && first > 0 ? "↑ \(first) more" : ""
            let below = fields.count - first - fieldRows
            let more = index == first + fieldRows - 1 && below > 0 ? "↓ \(below) more" : hidden
            if !more.isEmpty {
                let cells = DisplayWidth.cells(of: more)
                canvas.put(more, row: y, column: x + inner - cells, width: cells, role: .dim)
            }
            y += 1
        }
        y += roomy ? 1 : 0
        canvas.put("Preview", row: y, column: x, width: Self.labelWidth, role: .label)
        for line in previewLines {
            canvas.put(line, row: y, column: x + Self.labelWidth, width: valueWidth, role: masked ? .masked : .normal)
            y += 1
        }
        if problem.isEmpty {
            canvas.put("Entropy", row: y, column: x, width: Self.labelWidth, role: .label)
            canvas.put(dialog.entropyText, row: y, column: x + Self.labelWidth, width: valueWidth)
            y += 1
        }
        for line in problem {
            canvas.put(line, row: y, column: x, width: inner, role: .warning)
            y += 1
        }
        y += roomy ? 1 : 0
        var bx = x
        for text in ["[ Enter Use ]", "[ Esc Cancel ]"] {
            bx += canvas.put(text, row: y, column: bx, width: max(0, x + inner - bx), role: .button) + 2
        }
        canvas.cursor = cursor
    }

    /// One generator dialog field's row: its caption, then its text field
    /// or choice. Returns where the terminal cursor goes when it has focus.
    private func drawGeneratorField(
        _ canvas: inout Canvas, _ field: GeneratorDialogModel.Field, of dialog: GeneratorDialogModel, row y: Int,
        column x: Int, width inner: Int
    ) -> (row: Int, column: Int)? {
        let valueColumn = x + Self.labelWidth
        let valueWidth = max(0, inner - Self.labelWidth)
        let focused = dialog.focus == field
        var cursor: (row: Int, column: Int)?
        canvas.put(Self.generatorLabel(field), row: y, column: x, width: Self.labelWidth, role: .label)
        if let text = Self.generatorTextField(field, of: dialog) {
            let fieldWidth = min(valueWidth, 30)
            drawField(&canvas, text, row: y, column: valueColumn, width: fieldWidth, focused: focused)
            if focused { cursor = canvas.cursor }
            if field == .separator, !focused {
                let note = text.text == " " ? "(a space)" : (text.isEmpty ? "(none)" : "")
                // Beside a short field where the line is narrow.
                let at = min(32, max(DisplayWidth.cells(of: text.text) + 1, valueWidth - DisplayWidth.cells(of: note)))
                canvas.put(note, row: y, column: valueColumn + at, width: max(0, valueWidth - at), role: .dim)
            }
            return cursor
        }
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
            let note = Self.symbolsNotes.first { DisplayWidth.cells(of: $0) <= valueWidth - 5 } ?? ""
            canvas.put(note, row: y, column: valueColumn + 5, width: max(0, valueWidth - 5), role: .dim)
        }
        return cursor
    }

    /// `text` cut into lines of at most `width` cells (a password has no
    /// spaces to wrap at); one empty line for empty text.
    static func chunk(_ text: String, width: Int) -> [String] {
        var lines = [""]
        var cells = 0
        for character in text {
            let w = DisplayWidth.cells(of: String(character))
            if cells + w > width, !lines[lines.count - 1].isEmpty {
                lines.append("")
                cells = 0
            }
            lines[lines.count - 1].append(character)
            cells += w
        }
        return lines
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

    /// ``symbolsNote`` and its shorter forms for narrower screens, longest first.
    static let symbolsNotes = [symbolsNote, "(all 32 ASCII punctuation)", "(32 ASCII)"]

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

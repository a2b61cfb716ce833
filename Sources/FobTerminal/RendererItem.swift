import FobStore
import FobViewModels
import FoundationEssentials

/// The editor: the seeds' form (Service, User ID, Password, the buttons,
/// Retrieved ID, Retrieved Password, Message), then the rest of the item
/// (Kind, Label, URL, Notes, One-time seed, Generator, the custom-field
/// editor) and read-only details (one-time code, custom fields, a token's
/// claims and expiry). The rows scroll to keep the focused one in view,
/// with `↑ N more` / `↓ N more` where rows are out of view.
extension Renderer {
    /// One row of the editor.
    enum EditorRow {
        /// A text field, with a dim note shown while it is empty and without focus.
        case field(TextFieldState, MainFocus, note: String?)
        /// Row `row` of a text area `rows` rows high (the Notes field): one
        /// line of its text each, scrolled with the cursor.
        case area(TextFieldState, MainFocus, row: Int, rows: Int)
        /// Read-only text.
        case text(String, Role)
        /// A choice (Kind, Field hidden, the Generator row) with focus `focus`.
        case choice(String, MainFocus)
        /// The Save, Retrieve and Delete buttons.
        case buttons
        /// A rule between the seeds' form and the rest of the item.
        case rule
        /// One program of the item's access rule (the `index`th of ``AccessRuleDraft/programs``).
        case program(String, index: Int)
    }

    /// How many mask characters stand for a stored secret, whatever its length.
    static let maskWidth = 8

    /// From this many columns the editor shows its Message row; below, the
    /// status line alone says it.
    static let messageRowColumns = 100

    /// The widest label gutter, in cells (at 80 columns the gutter is narrower).
    static let editorLabelWidth = 12

    /// The most rows the Notes area takes, however tall the screen.
    static let notesMaxRows = 10

    /// The editor's rows: each a label (or `nil`) and what it shows; a
    /// label wider than the gutter takes a row of its own above its value.
    /// Below 100 columns the Message row is left out: the status line under
    /// the editor says the same, and repeating it took up to 6 of 19 rows.
    /// The Notes area takes `notesRows` rows.
    func editorRows(_ main: MainModel, now: Date, valueWidth: Int, showMessage: Bool = true, notesRows: Int = 1) -> [(
        label: String?, row: EditorRow
    )] {
        let form = main.form
        var rows: [(String?, EditorRow)] = [
            ("Service", .field(form.service, .service, note: nil)),
            ("User ID", .field(form.userID, .userID, note: nil)),
            (
                "Password",
                .field(
                    form.password, .password,
                    note: form.openedHasSecret && !form.passwordEdited ? "(unchanged)" : nil)
            ),
            (nil, .buttons),
            ("Retrieved ID", .text(form.retrievedID, .normal)),
        ]
        var retrieved = form.retrievedPassword == nil ? "" : form.retrievedPasswordText
        let masked = form.retrievedPassword != nil && !form.isRetrievedPasswordRevealed
        // A stored secret's mask has a fixed width: its length cannot be counted.
        if masked { retrieved = String(repeating: TextFieldState.maskCharacter, count: Self.maskWidth) }
        rows.append(("Retrieved Password", .text(retrieved, masked ? .masked : .normal)))
        // Long names break after their dots and dashes, never cut with `…`.
        let message = showMessage ? Layout.wrapCells(form.message.text, width: max(1, valueWidth)) : []
        for (i, line) in message.enumerated() {
            rows.append((i == 0 ? "Message" : nil, .text(line, Self.role(for: form.message.tone))))
        }
        rows.append((nil, .rule))
        let kind = main.focus == .kind ? "< \(form.kind.rawValue) >" : form.kind.rawValue
        rows.append(("Kind", .choice(kind, .kind)))
        rows.append(("Label", .field(form.label, .label, note: nil)))
        rows.append(("URL", .field(form.url, .url, note: nil)))
        let areaRows = max(1, notesRows)
        for row in 0..<areaRows {
            rows.append((row == 0 ? "Notes" : nil, .area(form.notes, .notes, row: row, rows: areaRows)))
        }
        let seedNote = form.openedHasSeed && !form.seedEdited ? "(stored; type to replace)" : nil
        rows.append(("One-time seed", .field(form.oneTimeSeed, .oneTimeSeed, note: seedNote)))
        var generator = main.generatorSummary
        if DisplayWidth.cells(of: generator) > valueWidth {
            generator = GeneratorSpec.summary(of: main.generatorSettings, short: true)
        }
        if DisplayWidth.cells(of: generator) > valueWidth {
            generator = GeneratorSpec.summary(of: main.generatorSettings, tiny: true)
        }
        rows.append(("Generator", .choice(generator, .generator)))
        rows.append(("Field name", .field(form.fieldName, .fieldName, note: nil)))
        rows.append(("Field value", .field(form.fieldValue, .fieldValue, note: nil)))
        let hidden = form.fieldHidden ? "yes" : "no"
        rows.append(("Field hidden", .choice(main.focus == .fieldHidden ? "< \(hidden) >" : hidden, .fieldHidden)))
        let access = form.access
        let mode = main.focus == .accessMode ? "< \(access.modeText) >" : access.modeText
        rows.append(("Access", .choice(mode, .accessMode)))
        let forwarded = main.focus == .accessForwarded ? "< \(access.forwardedText) >" : access.forwardedText
        rows.append(("Forwarded", .choice(forwarded, .accessForwarded)))
        for (index, program) in access.programs.enumerated() {
            rows.append((index == 0 ? "Programs" : nil, .program(program, index: index)))
        }
        for detail in form.detailRows(at: now) {
            rows.append((detail.label, .text(detail.text, detail.masked ? .masked : .normal)))
        }
        return rows
    }

    /// The editor in a box titled ``HomeFormModel/editorTitle``: its rows,
    /// scrolled so the focused one shows.
    func drawEditor(
        _ canvas: inout Canvas, _ main: MainModel, now: Date, row: Int, column: Int, height: Int, width: Int
    ) {
        canvas.box(row: row, column: column, height: height, width: width, title: main.form.editorTitle)
        let x = column + 2
        let inner = width - 4
        // The full gutter where values keep 25 cells; at 80 columns a 12-cell one.
        let gutter = inner - Self.labelWidth >= 25 ? Self.labelWidth : Self.editorLabelWidth
        let valueWidth = max(1, inner - gutter)
        guard inner > 0, height > 2 else { return }
        let room = height - 2
        // Measured without the Message rows, so the Notes area keeps its height as messages come and go.
        let measured = Self.editorLines(editorRows(main, now: now, valueWidth: valueWidth, showMessage: false), gutter)
        let lines = Self.editorLines(
            editorRows(
                main, now: now, valueWidth: valueWidth, showMessage: canvas.columns >= Self.messageRowColumns,
                notesRows: Self.notesRows(main.form.notes, measured: measured, room: room)),
            gutter)
        let selection = main.form.access.selection
        let focusedRows = lines.indices.filter { Self.has(main.focus, lines[$0].row, program: selection) }
        let focused = focusedRows.first ?? 0
        var first = 0
        if lines.count > room {
            // Keep the focused row (a text area whole, and a label row above it) in view.
            first = min(max(0, (focusedRows.last ?? focused) - room + 2), lines.count - room)
            if focusedRows.count > 1 { first = min(first, max(0, focused - 1)) }
            if focused > 0, lines[focused - 1].row == nil, first == focused { first -= 1 }
        }
        for offset in 0..<min(room, lines.count - first) {
            let y = row + 1 + offset
            let index = first + offset
            if offset == 0 && first > 0 {
                canvas.put("↑ \(first) more", row: y, column: x, width: inner, role: .dim)
                continue
            }
            if offset == room - 1 && index < lines.count - 1 {
                canvas.put("↓ \(lines.count - index) more", row: y, column: x, width: inner, role: .dim)
                continue
            }
            let line = lines[index]
            if let label = line.label {
                canvas.put(label, row: y, column: x, width: line.row == nil ? inner : gutter - 1, role: .label)
            }
            if let content = line.row {
                drawEditorRow(&canvas, main, content, row: y, column: x, gutter: gutter, width: inner)
            }
        }
    }

    /// The editor's rows as drawn: a label wider than the gutter on a row
    /// of its own above its value.
    static func editorLines(_ rows: [(label: String?, row: EditorRow)], _ gutter: Int) -> [(
        label: String?, row: EditorRow?
    )] {
        var lines: [(label: String?, row: EditorRow?)] = []
        for (label, row) in rows {
            if let label, DisplayWidth.cells(of: label) >= gutter {
                lines.append((label, nil))
                lines.append((nil, row))
            } else {
                lines.append((label, row))
            }
        }
        return lines
    }

    /// How many rows the Notes area takes: one per line of the note, at
    /// most ``notesMaxRows`` and at most as many as keep the buttons in view
    /// while the whole area shows (8 at 80×24), at least one.
    /// - Parameter measured: the editor's lines with a one-row Notes area.
    static func notesRows(_ notes: TextFieldState, measured: [(label: String?, row: EditorRow?)], room: Int) -> Int {
        guard let buttons = measured.firstIndex(where: { if case .buttons? = $0.row { true } else { false } }),
            let area = measured.firstIndex(where: { if case .area? = $0.row { true } else { false } })
        else { return 1 }
        // Scrolled down to the area, the row above the buttons gives way to
        // `↑ N more` and the last row is kept for `↓ N more`.
        let fit = room - (area - buttons) - 2
        let lines = notes.text.count { $0 == "\n" } + 1
        return max(1, min(fit, notesMaxRows, lines))
    }

    /// Whether `row` is the one `focus` puts the cursor on (on the Programs
    /// rows: the one of the selected `program`; every row of a text area).
    static func has(_ focus: MainFocus, _ row: EditorRow?, program: Int = 0) -> Bool {
        switch row {
        case .field(_, let f, _), .choice(_, let f), .area(_, let f, _, _): return f == focus
        case .program(_, let index): return focus == .accessPrograms && index == program
        case .buttons: return [.saveButton, .retrieveButton, .deleteButton].contains(focus)
        default: return false
        }
    }

    private func drawEditorRow(
        _ canvas: inout Canvas, _ main: MainModel, _ content: EditorRow, row y: Int, column x: Int, gutter: Int,
        width inner: Int
    ) {
        let vx = x + gutter
        let vw = max(1, inner - gutter)
        switch content {
        case .field(let field, let focus, let note):
            drawField(&canvas, field, row: y, column: vx, width: vw, focused: main.focus == focus)
            if let note, field.isEmpty, main.focus != focus {
                canvas.put(note, row: y, column: vx, width: vw, role: .dim)
            }
        case .area(let field, let focus, let index, let rows):
            let focused = main.focus == focus
            let view = drawAreaRow(&canvas, field, index, of: rows, row: y, column: vx, width: vw, focused: focused)
            // Below the label, on the area's last row: which lines show of how many.
            if index == rows - 1, index > 0, view.lines > rows {
                let shown = "\(view.first + 1)-\(view.first + rows)/\(view.lines)"
                canvas.put(shown, row: y, column: x, width: gutter - 1, role: .dim)
            } else if rows == 1, view.lines > 1 {
                // A one-row area (a small screen) says which line shows beside its label, or in its place.
                let shown = "\(view.first + 1)/\(view.lines)"
                let labelled = "Notes " + shown
                let fits = DisplayWidth.cells(of: labelled) <= gutter - 1
                canvas.put(fits ? labelled : shown, row: y, column: x, width: gutter - 1, role: .label)
            }
        case .text(var text, let role):
            if role == .masked, !canvas.glyphs.unicode {
                text = String(repeating: canvas.glyphs.mask, count: text.count)
            }
            canvas.put(text, row: y, column: vx, width: vw, role: role)
        case .choice(let text, let focus):
            let role: Role = main.focus == focus ? .focus : .field
            canvas.fill(row: y, column: vx, height: 1, width: vw, role: role)
            canvas.put(text, row: y, column: vx, width: vw, role: role)
            if main.focus == focus { canvas.cursor = (y, vx) }
        case .buttons:
            let full = 34 // "[ Save ]  [ Retrieve ]  [ Delete ]"
            let compact = DisplayWidth.cells(of: "[Save] [Retrieve] [Delete]")
            // Full buttons after the gutter, else from the left edge; else
            // compact ones (never cut at 80 columns), after the gutter if they fit.
            let roomy = full <= inner
            var bx = roomy ? (full <= inner - gutter ? vx : x) : (compact <= inner - gutter ? vx : x)
            let buttons: [(String, MainFocus)] = [
                ("Save", .saveButton), ("Retrieve", .retrieveButton), ("Delete", .deleteButton),
            ]
            for (name, focus) in buttons {
                let text = roomy ? "[ \(name) ]" : "[\(name)]"
                let used = canvas.put(
                    text, row: y, column: bx, width: max(0, x + inner - bx),
                    role: main.focus == focus ? .focus : .button)
                // On the button's first cell, so a screen reader reads it whole.
                if main.focus == focus { canvas.cursor = (y, bx) }
                bx += used + (roomy ? 2 : 1)
            }
        case .program(let text, let index):
            let focused = main.focus == .accessPrograms && index == main.form.access.selection
            let role: Role = focused ? .focus : .field
            canvas.fill(row: y, column: vx, height: 1, width: vw, role: role)
            canvas.put(text, row: y, column: vx, width: vw, role: role)
            if focused { canvas.cursor = (y, vx) }
        case .rule:
            canvas.put(
                String(repeating: canvas.glyphs.unicode ? "─" : "-", count: inner), row: y, column: x, width: inner,
                role: .dim)
        }
    }
}

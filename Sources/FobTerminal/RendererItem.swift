import FobStore
import FobViewModels
import Foundation

/// The rest of the item below the seeds' form: Kind, Label, URL, Notes,
/// One-time seed, Generator, the custom-field editor, then read-only details (one-time code, custom
/// fields, a token's claims and expiry).
extension Renderer {
    /// The rows ``drawItem(_:_:details:row:column:bottom:width:)`` takes besides the details.
    static let itemRows = 11

    /// Draws the rest of the item from `row` down to (not including) `bottom`; what does not fit is left out.
    func drawItem(
        _ canvas: inout Canvas, _ main: MainModel, details: [DetailRow],
        row: Int, column x: Int, bottom: Int, width inner: Int
    ) {
        let form = main.form
        let fieldWidth = inner - Self.labelWidth
        guard fieldWidth > 0 else { return }
        var y = row
        func label(_ text: String) {
            canvas.put(text, row: y, column: x, width: Self.labelWidth, role: .label)
        }
        guard y < bottom else { return }
        canvas.put(
            String(repeating: canvas.glyphs.unicode ? "─" : "-", count: inner), row: y, column: x, width: inner,
            role: .dim)
        y += 1
        guard y < bottom else { return }
        label("Kind")
        // The kind chosen; with focus, arrows say Left/Right (or Space) change it.
        let kindText = main.focus == .kind ? "< \(form.kind.rawValue) >" : form.kind.rawValue
        canvas.put(
            kindText, row: y, column: x + Self.labelWidth, width: fieldWidth,
            role: main.focus == .kind ? .focus : .field)
        y += 1
        let fields: [(String, TextFieldState?, MainFocus)] = [
            ("Label", form.label, .label), ("URL", form.url, .url), ("Notes", form.notes, .notes),
            ("One-time seed", form.oneTimeSeed, .oneTimeSeed), ("Generator", nil, .generator),
            ("Field name", form.fieldName, .fieldName), ("Field value", form.fieldValue, .fieldValue),
        ]
        for (name, field, focus) in fields {
            guard y < bottom else { return }
            label(name)
            if let field {
                drawField(
                    &canvas, field, row: y, column: x + Self.labelWidth, width: fieldWidth, focused: main.focus == focus
                )
            } else {
                // The Generator row is read only: the settings in a line; Enter opens the dialog.
                let focused = main.focus == .generator
                var text = main.generatorSummary
                if DisplayWidth.cells(of: text) > fieldWidth {
                    text = GeneratorSpec.summary(of: main.generatorSettings, short: true)
                }
                canvas.fill(
                    row: y, column: x + Self.labelWidth, height: 1, width: fieldWidth, role: focused ? .focus : .field)
                canvas.put(
                    text, row: y, column: x + Self.labelWidth, width: fieldWidth, role: focused ? .focus : .field)
            }
            if focus == .oneTimeSeed, let field, field.isEmpty, form.openedHasSeed, !form.seedEdited,
                main.focus != .oneTimeSeed
            {
                canvas.put(
                    "(stored; type to replace)", row: y, column: x + Self.labelWidth, width: fieldWidth, role: .dim)
            }
            y += 1
        }
        guard y < bottom else { return }
        label("Field hidden")
        let hiddenText = form.fieldHidden ? "yes" : "no"
        canvas.put(
            main.focus == .fieldHidden ? "< \(hiddenText) >" : hiddenText, row: y, column: x + Self.labelWidth,
            width: fieldWidth, role: main.focus == .fieldHidden ? .focus : .field)
        y += 1
        for detail in details {
            guard y < bottom else { return }
            label(detail.label)
            canvas.put(
                detail.text, row: y, column: x + Self.labelWidth, width: fieldWidth,
                role: detail.masked ? .masked : .normal)
            y += 1
        }
    }
}

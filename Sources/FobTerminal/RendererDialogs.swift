import Foundation
import FobStore
import FobViewModels

/// The boxes drawn over the middle of the screen: the create-vault and
/// unlock screens, the help overlay and confirmation dialogs.
extension Renderer {
    /// The create-vault box: both masked password fields, the KDF preset, the message.
    func drawCreate(_ canvas: inout Canvas, _ model: CreateVaultModel) {
        let box = dialogBox(&canvas, height: 10, width: 72, title: "Create a vault")
        let inner = box.width - 4
        let x = box.column + 2
        canvas.put("No vault yet at \(vaultDescription).", row: box.row + 1, column: x, width: inner, role: .dim)
        canvas.put("New master password", row: box.row + 3, column: x, width: Self.labelWidth, role: .label)
        drawField(&canvas, model.newPassword, row: box.row + 3, column: x + Self.labelWidth,
                  width: inner - Self.labelWidth, focused: model.focus == .newPassword)
        canvas.put("Confirm", row: box.row + 4, column: x, width: Self.labelWidth, role: .label)
        drawField(&canvas, model.confirmation, row: box.row + 4, column: x + Self.labelWidth,
                  width: inner - Self.labelWidth, focused: model.focus == .confirm)
        canvas.put("Key derivation", row: box.row + 6, column: x, width: Self.labelWidth, role: .label)
        canvas.put("Argon2id \(model.kdfPreset.rawValue) (Ctrl-T changes)", row: box.row + 6,
                   column: x + Self.labelWidth, width: inner - Self.labelWidth, role: .normal)
        if !model.message.isEmpty {
            canvas.put(model.message.text, row: box.row + 8, column: x, width: inner, role: Self.role(for: model.message.tone))
        }
    }

    /// The unlock box: the masked master password and the message.
    func drawUnlock(_ canvas: inout Canvas, _ model: UnlockModel) {
        let box = dialogBox(&canvas, height: 8, width: 72, title: "Unlock")
        let inner = box.width - 4
        let x = box.column + 2
        canvas.put("Vault \(vaultDescription)", row: box.row + 1, column: x, width: inner, role: .dim)
        canvas.put("Master password", row: box.row + 3, column: x, width: Self.labelWidth, role: .label)
        drawField(&canvas, model.password, row: box.row + 3, column: x + Self.labelWidth,
                  width: inner - Self.labelWidth, focused: true)
        if !model.message.isEmpty {
            canvas.put(model.message.text, row: box.row + 5, column: x, width: inner, role: Self.role(for: model.message.tone))
        }
    }

    /// The help: as wide as its longest line allows up to the screen's
    /// width, with long explanations wrapped under themselves.
    func drawHelp(_ canvas: inout Canvas) {
        let entries = KeyBindings.helpLines
        let footer = "Any key closes this help."
        let keyWidth = entries.map { DisplayWidth.cells(of: $0.key) }.max() ?? 10
        let widest = max(entries.map { keyWidth + 2 + DisplayWidth.cells(of: $0.action) }.max() ?? 0,
                         DisplayWidth.cells(of: footer))
        let width = min(widest + 4, canvas.columns - 2)
        let actionWidth = max(1, width - 4 - keyWidth - 2)
        var lines: [(key: String, action: String)] = []
        for entry in entries {
            for (i, part) in Self.wrap(entry.action, width: actionWidth).enumerated() {
                lines.append((i == 0 ? entry.key : "", part))
            }
        }
        let box = dialogBox(&canvas, height: lines.count + 4, width: width, title: "Help")
        let x = box.column + 2, inner = box.width - 4
        let bottom = box.row + min(lines.count + 4, canvas.rows - 2) - 1   // the box's lower border
        for (i, line) in lines.enumerated() {
            let y = box.row + 1 + i
            if y >= bottom { break }
            canvas.put(line.key, row: y, column: x, width: min(keyWidth, inner), role: .label)
            canvas.put(line.action, row: y, column: x + keyWidth + 2, width: max(0, inner - keyWidth - 2))
        }
        if box.row + lines.count + 2 < bottom {
            canvas.put(footer, row: box.row + lines.count + 2, column: x, width: inner, role: .dim)
        }
    }

    /// A confirmation dialog: its question wrapped, then the Yes and No buttons.
    func drawConfirm(_ canvas: inout Canvas, _ dialog: ConfirmDialog) {
        let width = min(64, canvas.columns - 2)
        let lines = Self.wrap(dialog.message, width: width - 4)
        let box = dialogBox(&canvas, height: lines.count + 4, width: width, title: dialog.title)
        let x = box.column + 2, inner = box.width - 4
        for (i, line) in lines.enumerated() {
            canvas.put(line, row: box.row + 1 + i, column: x, width: inner)
        }
        var bx = x
        for (text, role) in [("[ y Yes ]", Role.button), ("[ n No ]", Role.button)] {
            bx += canvas.put(text, row: box.row + lines.count + 2, column: bx, width: max(0, x + inner - bx), role: role) + 2
        }
    }
}

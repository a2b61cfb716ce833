import Foundation
import FobStore
import FobViewModels

/// Draws the app's state into a ``Canvas``: the create-vault, unlock and
/// main screens, confirmation dialogs and the help overlay, a header and a
/// key legend on the bottom line. Below ``minimumColumns`` × ``minimumRows``
/// it draws only a "terminal too small" notice.
///
/// Holds only view state the model does not: the list's scroll offset.
public struct Renderer {
    /// The smallest terminal the screens are laid out for.
    public static let minimumColumns = 40, minimumRows = 10
    /// Width of the form's label column ("New master password" and two spaces).
    static let labelWidth = 21

    /// Shown in the header: where the vault is.
    public var vaultDescription: String
    /// A transient line shown on the legend row instead of the keys (for
    /// example "Unlocking…" while the KDF runs), or `nil`.
    public var notice: String?
    /// The first item shown in the list.
    public private(set) var listTop = 0
    /// How many item rows the list showed last time (for PageUp/PageDown).
    public private(set) var listPage = 10

    /// - Parameter vaultDescription: the vault's path as shown in the header.
    public init(vaultDescription: String) {
        self.vaultDescription = vaultDescription
    }

    /// Whether `rows` × `columns` is big enough for the screens; below it
    /// only the "terminal too small" notice shows and keys other than `q`
    /// are ignored.
    /// - Parameters:
    ///   - rows: the terminal's height in cells.
    ///   - columns: the terminal's width in cells.
    public static func fits(rows: Int, columns: Int) -> Bool {
        rows >= minimumRows && columns >= minimumColumns
    }

    /// Draws `app` on a canvas of `rows` × `columns` cells.
    public mutating func render(_ app: AppModel, rows: Int, columns: Int, glyphs: Glyphs) -> Canvas {
        var canvas = Canvas(rows: rows, columns: columns, glyphs: glyphs)
        guard Self.fits(rows: rows, columns: columns) else {
            drawTooSmall(&canvas)
            return canvas
        }
        drawHeader(&canvas, app)
        switch app.screen {
        case .createVault(let model): drawCreate(&canvas, model)
        case .unlock(let model): drawUnlock(&canvas, model)
        case .main(let model): drawMain(&canvas, app, model)
        }
        if let overlay = app.overlay {
            canvas.cursor = nil
            switch overlay {
            case .help: drawHelp(&canvas)
            case .confirm(let dialog): drawConfirm(&canvas, dialog)
            }
        }
        drawLegend(&canvas, app)
        return canvas
    }

    // MARK: - Frame

    private func drawTooSmall(_ canvas: inout Canvas) {
        let times = canvas.glyphs.unicode ? "×" : "x"
        let lines = ["Terminal too small",
                     "\(canvas.columns)\(times)\(canvas.rows), needs \(Self.minimumColumns)\(times)\(Self.minimumRows)",
                     "q quits"]
        let top = max(0, (canvas.rows - lines.count) / 2)
        for (i, line) in lines.enumerated() {
            let w = min(DisplayWidth.cells(of: line), canvas.columns)
            canvas.put(line, row: top + i, column: max(0, (canvas.columns - w) / 2), role: i == 0 ? .error : .normal)
        }
    }

    private func drawHeader(_ canvas: inout Canvas, _ app: AppModel) {
        canvas.fill(row: 0, column: 0, height: 1, width: canvas.columns, role: .title)
        var status = ""
        if let deadline = app.clipboard.clearDeadline {
            let seconds = max(0, Int(deadline.timeIntervalSince(app.now).rounded(.up)))
            status = "clipboard clears in \(seconds) s "
        }
        let statusWidth = DisplayWidth.cells(of: status)
        let used = canvas.put(" Fob ", row: 0, column: 0, role: .title)
        canvas.put(vaultDescription, row: 0, column: used, width: max(0, canvas.columns - used - statusWidth - 1), role: .title)
        if statusWidth > 0, statusWidth < canvas.columns - used {
            canvas.put(status, row: 0, column: canvas.columns - statusWidth, role: .title)
        }
    }

    private func drawLegend(_ canvas: inout Canvas, _ app: AppModel) {
        let row = canvas.rows - 1
        canvas.fill(row: row, column: 0, height: 1, width: canvas.columns, role: .legend)
        canvas.put(" " + (notice ?? Self.legend(for: app)), row: row, column: 0, role: .legend)
    }

    /// The key legend for what `app` shows.
    public static func legend(for app: AppModel) -> String {
        if let overlay = app.overlay {
            switch overlay {
            case .help: return "any key closes the help  q quit"
            case .confirm: return "y yes  n/Esc no"
            }
        }
        switch app.screen {
        case .createVault:
            return "Tab next field  Enter create  Ctrl-R reveal  Ctrl-T key derivation  Esc quit"
        case .unlock:
            return "Enter unlock  Ctrl-R reveal  Esc quit"
        case .main(let main):
            switch main.focus {
            case .list:
                return "Up/Down j/k move  / filter  Enter open  c copy  n new  d delete  l lock  W logout  Tab form  ? help  q quit"
            case .filter:
                return "type to filter  Enter keep  Esc clear  Up/Down move"
            case .service, .userID:
                return "Tab/S-Tab move  Enter next  Ctrl-R reveal retrieved  Ctrl-U clear  Esc list"
            case .password:
                let reveals = main.form.password.isEmpty && main.form.retrievedPassword != nil ? "reveal retrieved" : "reveal typed"
                return "Tab/S-Tab move  Enter next  Ctrl-R \(reveals)  Ctrl-U clear  Esc list"
            case .saveButton, .retrieveButton, .deleteButton:
                return "Tab/S-Tab move  Enter press  Ctrl-R reveal retrieved  Esc list  ? help"
            }
        }
    }

    // MARK: - Setup screens

    private func dialogBox(_ canvas: inout Canvas, height: Int, width wanted: Int, title: String) -> (row: Int, column: Int, width: Int) {
        let width = min(wanted, canvas.columns - 2)
        let height = min(height, canvas.rows - 2)
        let row = max(1, (canvas.rows - height) / 2)
        let column = max(0, (canvas.columns - width) / 2)
        canvas.fill(row: row, column: column, height: height, width: width)
        canvas.box(row: row, column: column, height: height, width: width, title: title)
        return (row, column, width)
    }

    private func drawCreate(_ canvas: inout Canvas, _ model: CreateVaultModel) {
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
            canvas.put(model.message, row: box.row + 8, column: x, width: inner, role: .error)
        }
    }

    private func drawUnlock(_ canvas: inout Canvas, _ model: UnlockModel) {
        let box = dialogBox(&canvas, height: 8, width: 72, title: "Unlock")
        let inner = box.width - 4
        let x = box.column + 2
        canvas.put("Vault \(vaultDescription)", row: box.row + 1, column: x, width: inner, role: .dim)
        canvas.put("Master password", row: box.row + 3, column: x, width: Self.labelWidth, role: .label)
        drawField(&canvas, model.password, row: box.row + 3, column: x + Self.labelWidth,
                  width: inner - Self.labelWidth, focused: true)
        if !model.message.isEmpty {
            canvas.put(model.message, row: box.row + 5, column: x, width: inner,
                       role: model.failedAttempts > 0 ? .error : Self.messageRole(model.message))
        }
    }

    // MARK: - Main screen

    private mutating func drawMain(_ canvas: inout Canvas, _ app: AppModel, _ main: MainModel) {
        let top = 1, height = canvas.rows - 2
        if canvas.columns >= 76 {
            let listWidth = max(34, canvas.columns * 11 / 20)
            drawList(&canvas, app, main, row: top, column: 0, height: height, width: listWidth)
            drawForm(&canvas, main, row: top, column: listWidth, height: height, width: canvas.columns - listWidth)
        } else if main.focus == .list || main.focus == .filter {
            drawList(&canvas, app, main, row: top, column: 0, height: height, width: canvas.columns)
        } else {
            drawForm(&canvas, main, row: top, column: 0, height: height, width: canvas.columns)
        }
    }

    private mutating func drawList(_ canvas: inout Canvas, _ app: AppModel, _ main: MainModel,
                                   row: Int, column: Int, height: Int, width: Int) {
        let list = main.list
        let title = list.filter.isEmpty ? "Items \(list.rows.count)" : "Items \(list.rows.count) of \(list.allRows.count)"
        canvas.box(row: row, column: column, height: height, width: width, title: title)
        let x = column + 1, inner = width - 2
        var y = row + 1
        let bottom = row + height - 1
        let listFocused = main.focus == .list || main.focus == .filter
        if main.focus == .filter || !list.filter.isEmpty {
            let used = canvas.put("/ ", row: y, column: x, role: .label)
            drawField(&canvas, list.filter, row: y, column: x + used, width: inner - used, focused: main.focus == .filter)
            y += 1
        }
        let visible = max(bottom - y, 1)
        listPage = visible
        if let selected = list.selectedIndex {
            if selected < listTop { listTop = selected }
            if selected >= listTop + visible { listTop = selected - visible + 1 }
        }
        listTop = max(0, min(listTop, list.rows.count - visible))
        if list.rows.isEmpty {
            let text = list.allRows.isEmpty ? "No items yet: n adds one" : "No matches"
            canvas.put(text, row: y, column: x + 1, width: inner - 1, role: .dim)
            return
        }
        // Columns: pointer, service, account, kind, expiry.
        // The expiry column as wide as its longest text (TokenExpiry keeps them short).
        let expiryTextWidth = list.rows.compactMap(\.expiryText).map { DisplayWidth.cells(of: $0) }.max() ?? 0
        let hasExpiry = list.rows.contains { $0.expires != nil }
        var kindWidth = 8, expiryWidth = hasExpiry ? min(max(expiryTextWidth, 15), 20) : 0
        func names() -> Int { inner - 2 - (kindWidth > 0 ? kindWidth + 1 : 0) - (expiryWidth > 0 ? expiryWidth + 1 : 0) }
        // Narrow lists drop the kind first, and only then shorten the expiry.
        if names() < 16 { kindWidth = 0 }
        if names() < 16 { expiryWidth = min(expiryWidth, 8) }
        let nameWidth = names()
        let serviceWidth = max(1, nameWidth * 3 / 5)
        let accountWidth = max(0, nameWidth - serviceWidth - 1)
        let now = app.now
        for i in listTop..<min(list.rows.count, listTop + visible) {
            let item = list.rows[i]
            let selected = i == list.selectedIndex
            let base: Role = selected ? (listFocused ? .selection : .focus) : .normal
            if selected { canvas.fill(row: y, column: x, height: 1, width: inner, role: base) }
            var c = x
            if selected { canvas.put(String(canvas.glyphs.pointer), row: y, column: c, width: 1, role: base) }
            c += 2
            canvas.put(item.service, row: y, column: c, width: serviceWidth, role: base)
            c += serviceWidth + 1
            canvas.put(item.account, row: y, column: c, width: accountWidth, role: base)
            c += accountWidth + 1
            if kindWidth > 0 {
                canvas.put(item.kind.rawValue, row: y, column: c, width: kindWidth, role: selected ? base : .dim)
                c += kindWidth + 1
            }
            if expiryWidth > 0, let text = item.expiryText {
                let expired = item.expires.map { $0 <= now } ?? false
                canvas.put(text, row: y, column: c, width: expiryWidth, role: selected ? base : (expired ? .expired : .dim))
            }
            y += 1
        }
    }

    private func drawForm(_ canvas: inout Canvas, _ main: MainModel, row: Int, column: Int, height: Int, width: Int) {
        let form = main.form
        canvas.box(row: row, column: column, height: height, width: width, title: "Item")
        let x = column + 2, inner = width - 4
        let fieldWidth = inner - Self.labelWidth
        let roomy = height - 2 >= 9
        var y = row + 1
        func label(_ text: String) {
            canvas.put(text, row: y, column: x, width: Self.labelWidth, role: .label)
        }
        label("Service")
        drawField(&canvas, form.service, row: y, column: x + Self.labelWidth, width: fieldWidth, focused: main.focus == .service)
        y += 1
        label("User ID")
        drawField(&canvas, form.userID, row: y, column: x + Self.labelWidth, width: fieldWidth, focused: main.focus == .userID)
        y += 1
        label("Password")
        drawField(&canvas, form.password, row: y, column: x + Self.labelWidth, width: fieldWidth, focused: main.focus == .password)
        y += roomy ? 2 : 1
        let buttonsWidth = 34   // "[ Save ]  [ Retrieve ]  [ Delete ]"
        var bx = x + Self.labelWidth + buttonsWidth <= x + inner ? x + Self.labelWidth : x
        for (name, focus) in [("Save", MainFocus.saveButton), ("Retrieve", .retrieveButton), ("Delete", .deleteButton)] {
            let used = canvas.put("[ \(name) ]", row: y, column: bx, width: max(0, x + inner - bx),
                                  role: main.focus == focus ? .focus : .button)
            bx += used + 2
        }
        y += roomy ? 2 : 1
        label("Retrieved ID")
        canvas.put(form.retrievedID, row: y, column: x + Self.labelWidth, width: fieldWidth)
        y += 1
        label("Retrieved Password")
        if form.retrievedPassword != nil {
            var text = form.retrievedPasswordText
            let masked = !form.isRetrievedPasswordRevealed
            if masked, !canvas.glyphs.unicode {
                text = String(repeating: canvas.glyphs.mask, count: text.count)
            }
            canvas.put(text, row: y, column: x + Self.labelWidth, width: fieldWidth, role: masked ? .masked : .normal)
        }
        y += 1
        label("Message")
        // The message wraps onto up to three lines, as room in the box allows.
        let room = max(1, min(Self.messageLines, row + height - 1 - y))
        var lines = Self.wrap(form.message, width: max(1, fieldWidth))
        if lines.count > room {
            lines = Array(lines[0..<(room - 1)]) + [lines[(room - 1)...].joined(separator: " ")]
        }
        let role = Self.messageRole(form.message)
        for (i, line) in lines.enumerated() {
            canvas.put(line, row: y + i, column: x + Self.labelWidth, width: fieldWidth, role: role)
        }
    }

    /// How many lines the form's Message may take before it is cut.
    static let messageLines = 3

    /// A one-line text field: its text (masks for a hidden secret), scrolled
    /// sideways to keep the cursor in view, and the terminal cursor when focused.
    private func drawField(_ canvas: inout Canvas, _ field: TextFieldState, row: Int, column: Int, width: Int, focused: Bool) {
        guard width > 0 else { return }
        let masked = field.isSecure && !field.isRevealed
        let role: Role = focused ? .focus : (masked && !field.isEmpty ? .masked : .field)
        canvas.fill(row: row, column: column, height: 1, width: width, role: role)
        let clusters: [(Character, Int)]
        if masked {
            clusters = Array(repeating: (canvas.glyphs.mask, 1), count: field.count)
        } else {
            clusters = field.text.map { canvas.glyphs.displayable($0) }
        }
        guard focused else {
            // Without focus a field shows its start, cut with an ellipsis.
            let text = String(clusters.map(\.0))
            canvas.put(text, row: row, column: column, width: width, role: role)
            return
        }
        let cursor = min(field.cursor, clusters.count)
        var start = 0
        var before = clusters[0..<cursor].reduce(0) { $0 + $1.1 }
        while before > width - 1, start < cursor {
            before -= clusters[start].1
            start += 1
        }
        var shown: [(Character, Int)] = []
        var used = 0
        for cluster in clusters[start...] {
            if used + cluster.1 > width { break }
            shown.append(cluster)
            used += cluster.1
        }
        canvas.put(clusters: shown, row: row, column: column, role: role)
        if focused { canvas.cursor = (row, column + before) }
    }

    // MARK: - Overlays

    /// The help: as wide as its longest line allows up to the screen's
    /// width, with long explanations wrapped under themselves.
    private func drawHelp(_ canvas: inout Canvas) {
        let entries = AppModel.helpLines
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

    private func drawConfirm(_ canvas: inout Canvas, _ dialog: ConfirmDialog) {
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

    /// Words of `text` in lines of at most `width` cells (a longer word is cut by the canvas).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true).map(String.init) {
            if line.isEmpty { line = word; continue }
            if DisplayWidth.cells(of: line) + 1 + DisplayWidth.cells(of: word) <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = word
            }
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// Success messages (they start with a word such as "Saved" or
    /// "Copied") in the information colour, the rest in the error colour.
    static func messageRole(_ message: String) -> Role {
        if message.isEmpty { return .normal }
        let ok = ["Saved", "Retrieved", "Deleted", "Copied", "Copying", "Clipboard cleared", "New item",
                  "Cancelled", "Locked", "Logged out", "Unlocking"]
        return ok.contains { message.hasPrefix($0) } ? .info : .error
    }
}

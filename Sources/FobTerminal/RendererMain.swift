import FobStore
import FobViewModels
import Foundation

/// The main screen: the item list beside (or, when narrow, instead of) the Home form.
extension Renderer {
    /// The list and the form side by side from 76 columns; below that, the
    /// one that has focus.
    mutating func drawMain(_ canvas: inout Canvas, _ app: AppModel, _ main: MainModel) {
        let top = 1
        let height = canvas.rows - 2
        if canvas.columns >= 76 {
            let listWidth = max(34, canvas.columns * 11 / 20)
            drawList(&canvas, app, main, row: top, column: 0, height: height, width: listWidth)
            drawForm(
                &canvas, main, now: app.now, row: top, column: listWidth, height: height,
                width: canvas.columns - listWidth)
        } else if main.focus == .list || main.focus == .filter {
            drawList(&canvas, app, main, row: top, column: 0, height: height, width: canvas.columns)
        } else {
            drawForm(&canvas, main, now: app.now, row: top, column: 0, height: height, width: canvas.columns)
        }
    }

    /// The item list: the filter line when in use, then rows scrolled to keep
    /// the selection in view, with kind and expiry columns as width allows.
    mutating func drawList(
        _ canvas: inout Canvas, _ app: AppModel, _ main: MainModel,
        row: Int, column: Int, height: Int, width: Int
    ) {
        let list = main.list
        let title =
            list.filter.isEmpty ? "Items \(list.rows.count)" : "Items \(list.rows.count) of \(list.allRows.count)"
        canvas.box(row: row, column: column, height: height, width: width, title: title)
        let x = column + 1
        let inner = width - 2
        var y = row + 1
        let bottom = row + height - 1
        let listFocused = main.focus == .list || main.focus == .filter
        if main.focus == .filter || !list.filter.isEmpty {
            let used = canvas.put("/ ", row: y, column: x, role: .label)
            drawField(
                &canvas, list.filter, row: y, column: x + used, width: inner - used, focused: main.focus == .filter)
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
        var kindWidth = 8
        var expiryWidth = hasExpiry ? min(max(expiryTextWidth, 15), 20) : 0
        func names() -> Int {
            inner - 2 - (kindWidth > 0 ? kindWidth + 1 : 0) - (expiryWidth > 0 ? expiryWidth + 1 : 0)
        }
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
                canvas.put(
                    text, row: y, column: c, width: expiryWidth, role: selected ? base : (expired ? .expired : .dim))
            }
            y += 1
        }
    }

    /// The Home form: fields, buttons, retrieved values and the Message line
    /// coloured by its tone.
    func drawForm(_ canvas: inout Canvas, _ main: MainModel, now: Date, row: Int, column: Int, height: Int, width: Int)
    {
        let form = main.form
        canvas.box(row: row, column: column, height: height, width: width, title: "Item")
        let x = column + 2
        let inner = width - 4
        let fieldWidth = inner - Self.labelWidth
        let roomy = height - 2 >= 9
        var y = row + 1
        func label(_ text: String) {
            canvas.put(text, row: y, column: x, width: Self.labelWidth, role: .label)
        }
        label("Service")
        drawField(
            &canvas, form.service, row: y, column: x + Self.labelWidth, width: fieldWidth,
            focused: main.focus == .service)
        y += 1
        label("User ID")
        drawField(
            &canvas, form.userID, row: y, column: x + Self.labelWidth, width: fieldWidth, focused: main.focus == .userID
        )
        y += 1
        label("Password")
        drawField(
            &canvas, form.password, row: y, column: x + Self.labelWidth, width: fieldWidth,
            focused: main.focus == .password)
        if form.password.isEmpty, form.openedHasSecret, !form.passwordEdited, main.focus != .password {
            canvas.put("(unchanged)", row: y, column: x + Self.labelWidth, width: fieldWidth, role: .dim)
        }
        y += roomy ? 2 : 1
        let buttonsWidth = 34 // "[ Save ]  [ Retrieve ]  [ Delete ]"
        var bx = x + Self.labelWidth + buttonsWidth <= x + inner ? x + Self.labelWidth : x
        for (name, focus) in [("Save", MainFocus.saveButton), ("Retrieve", .retrieveButton), ("Delete", .deleteButton)]
        {
            let used = canvas.put(
                "[ \(name) ]", row: y, column: bx, width: max(0, x + inner - bx),
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
        // The message wraps onto up to three lines, as room in the box allows
        // once the rest of the item has its rows.
        let detailRows = form.detailRows(at: now)
        let wanted = Self.itemRows + detailRows.count
        let room = max(1, min(Self.messageLines, row + height - 1 - y - wanted))
        var lines = Self.wrap(form.message.text, width: max(1, fieldWidth))
        if lines.count > room {
            lines = Array(lines[0..<(room - 1)]) + [lines[(room - 1)...].joined(separator: " ")]
        }
        let role = Self.role(for: form.message.tone)
        for (i, line) in lines.enumerated() {
            canvas.put(line, row: y + i, column: x + Self.labelWidth, width: fieldWidth, role: role)
        }
        y += room // the Message keeps its rows, so the item below does not jump
        drawItem(&canvas, main, details: detailRows, row: y, column: x, bottom: row + height - 1, width: inner)
    }

    /// How many lines the form's Message may take before it is cut.
    static let messageLines = 3
}

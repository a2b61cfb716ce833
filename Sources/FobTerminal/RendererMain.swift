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

    /// The editor beside the list (``drawEditor(_:_:now:row:column:height:width:)``).
    func drawForm(_ canvas: inout Canvas, _ main: MainModel, now: Date, row: Int, column: Int, height: Int, width: Int)
    {
        drawEditor(&canvas, main, now: now, row: row, column: column, height: height, width: width)
    }

    /// How many lines the form's Message may take before it is cut.
    static let messageLines = 3
}

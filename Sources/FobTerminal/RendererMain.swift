import FobStore
import FobViewModels
import FoundationEssentials

/// The main screen: the item list beside (or, when narrow, instead of) the
/// preview of the highlighted item or the Home form, the status line under them.
extension Renderer {
    /// The list and the preview (or the form, while it has focus) side by
    /// side from 76 columns; below that, the one that has focus. The status
    /// line takes the rows above the legend.
    mutating func drawMain(_ canvas: inout Canvas, _ app: AppModel, _ main: MainModel) {
        let top = 1
        let status = Layout.statusRows(main.form.message, columns: canvas.columns, unicode: canvas.glyphs.unicode)
        // The request bar: one row above the status line while a question waits; it takes no key.
        let bar = main.consent.bar
        let height = canvas.rows - 2 - status.count - (bar == nil ? 0 : 1)
        let browsing = main.focus == .list || main.focus == .filter
        if canvas.columns >= 76 {
            let listWidth = Layout.listWidth(columns: canvas.columns)
            let right = canvas.columns - listWidth
            drawList(&canvas, app, main, row: top, column: 0, height: height, width: listWidth)
            if browsing {
                drawPreview(&canvas, app, main, row: top, column: listWidth, height: height, width: right)
            } else {
                drawForm(&canvas, main, now: app.now, row: top, column: listWidth, height: height, width: right)
            }
        } else if browsing {
            drawList(&canvas, app, main, row: top, column: 0, height: height, width: canvas.columns)
        } else {
            drawForm(&canvas, main, now: app.now, row: top, column: 0, height: height, width: canvas.columns)
        }
        drawStatus(&canvas, status, tone: main.form.message.tone, row: canvas.rows - 1 - status.count)
        if let parts = main.consent.barParts {
            let line = Self.requestBar(parts, width: canvas.columns, glyphs: canvas.glyphs)
            canvas.put(line, row: canvas.rows - 2 - status.count, column: 0, width: canvas.columns, role: .error)
        }
    }

    /// The request bar in `width` cells: a leading space, the question
    /// shortened (ending in `…`) so that how to answer (`· F3 answer`) stays whole.
    static func requestBar(_ parts: (question: String, answer: String), width: Int, glyphs: Glyphs) -> String {
        let answer = DisplayWidth.cells(of: parts.answer)
        let room = max(1, width - 1 - answer)
        return " " + TextFit.truncate(parts.question, width: room, glyphs: glyphs) + parts.answer
    }

    /// The status line: what happened to which item, its tone marked by a
    /// symbol and a colour, full width.
    func drawStatus(_ canvas: inout Canvas, _ lines: [String], tone: StatusLine.Tone, row: Int) {
        for (i, line) in lines.enumerated() {
            canvas.put(" " + line, row: row + i, column: 0, width: canvas.columns, role: Self.role(for: tone))
        }
    }

    /// The list's title: `Items 12/43`, `Items 3/5 of 43` while filtered;
    /// while a delete can be undone, `· Ctrl-Y undoes 8 s` after it (the seconds
    /// left), so the offer stays in view whatever the status line says.
    static func listTitle(_ main: MainModel) -> String {
        let list = main.list
        let position = list.selectedIndex.map { "\($0 + 1)/\(list.rows.count)" } ?? "\(list.rows.count)"
        let title = list.filter.isEmpty ? "Items \(position)" : "Items \(position) of \(list.allRows.count)"
        guard let seconds = main.undoSecondsLeft else { return title }
        return title + " · Ctrl-Y undoes \(seconds) s"
    }

    /// The item list: the filter line when in use, then rows scrolled to
    /// keep the selection in view, in columns sized for every item
    /// (``Layout/listColumns(_:inner:)``). With focus, its border and title
    /// stand out and the terminal cursor sits on the selected row.
    mutating func drawList(
        _ canvas: inout Canvas, _ app: AppModel, _ main: MainModel,
        row: Int, column: Int, height: Int, width: Int
    ) {
        let list = main.list
        let listFocused = main.focus == .list || main.focus == .filter
        canvas.box(
            row: row, column: column, height: height, width: width, title: Self.listTitle(main),
            role: listFocused ? .title : .dim, titleRole: listFocused ? .focus : .title)
        let x = column + 1
        let inner = width - 2
        var y = row + 1
        let bottom = row + height - 1
        if main.focus == .filter || !list.filter.isEmpty {
            let used = canvas.put("/ ", row: y, column: x, role: .label)
            // Typing on the list goes to the query: it scrolls to show its end
            // (the cursor), as the focused filter does; the terminal cursor
            // stays on the selected row, set below.
            drawField(&canvas, list.filter, row: y, column: x + used, width: inner - used, focused: listFocused)
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
            let text = list.allRows.isEmpty ? "No items yet: Ctrl-O adds one" : "No matches"
            canvas.put(text, row: y, column: x + 1, width: inner - 1, role: .dim)
            if main.focus == .list { canvas.cursor = (y, x + 1) }
            return
        }
        pointerAreas.listRow = y
        pointerAreas.listColumns = x..<(x + inner)
        pointerAreas.listCount = min(list.rows.count - listTop, visible)
        pointerAreas.listTop = listTop
        let columns = Layout.listColumns(
            list.columnNeeds, inner: inner, labels: canvas.columns >= Layout.labelColumns)
        for i in listTop..<min(list.rows.count, listTop + visible) {
            let selected = i == list.selectedIndex
            drawListRow(
                &canvas, list.rows[i], columns, row: y, column: x, width: inner, now: app.now,
                selected: selected, focused: listFocused)
            if selected, main.focus == .list { canvas.cursor = (y, x) }
            y += 1
        }
    }

    /// One row of the list: pointer, service, account, label (from 120
    /// columns), 2FA mark, expiry, kind, each in its column on every row,
    /// whatever the filter or the selection: a name longer than its column
    /// is cut (the preview shows it whole). The marks a row lacks, and the
    /// cells a short expiry leaves, go to the last text column before them
    /// (label, else account), so its start never moves.
    private func drawListRow(
        _ canvas: inout Canvas, _ item: ItemRow, _ columns: Layout.ListColumns,
        row y: Int, column x: Int, width inner: Int, now: Date, selected: Bool, focused: Bool
    ) {
        // The selection of the pane without focus is dimmed.
        let base: Role = selected ? (focused ? .selection : .dim) : .normal
        if selected { canvas.fill(row: y, column: x, height: 1, width: inner, role: base) }
        if selected { canvas.put(String(canvas.glyphs.pointer), row: y, column: x, width: 1, role: base) }
        // A sync conflict: `!` between the pointer and the service.
        if item.versions > 1 { canvas.put("!", row: y, column: x + 1, width: 1, role: selected ? base : .warning) }
        var marks: [(text: String, width: Int, role: Role)] = []
        if columns.oneTimeCode > 0, item.hasOneTimeCode {
            marks.append((Layout.oneTimeMark, columns.oneTimeCode, selected ? base : .dim))
        }
        if columns.expiry > 0, let expires = item.expires {
            let (text, expired, soon) = ItemPreview.listExpiry(expires, now: now)
            // Only the cells the text takes: the rest goes to the names (`in 2h` leaves three).
            let width = min(columns.expiry, DisplayWidth.cells(of: text))
            marks.append((text, width, selected ? base : (expired ? .expired : (soon ? .warning : .dim))))
        }
        let spare = Layout.markBlockWidth(columns) - marks.reduce(0) { $0 + $1.width + 1 }
        var c = x + 2
        let service = displaySafe(item.service)
        let account = displaySafe(item.account)
        // A row without a label lends the label column to the names too.
        let label = columns.label > 0 && !item.label.isEmpty ? columns.label + spare : 0
        let room = columns.label > 0 ? (label > 0 ? 0 : columns.label + 1 + spare) : spare
        let names = Layout.rowNames(
            needs: (DisplayWidth.cells(of: service), DisplayWidth.cells(of: account)),
            columns: (columns.service, columns.account + room))
        canvas.put(service, row: y, column: c, width: names.service, role: base)
        c += names.service + 1
        canvas.put(account, row: y, column: c, width: names.account, role: base)
        c += names.account + 1
        if label > 0 {
            canvas.put(displaySafe(item.label), row: y, column: c, width: label, role: selected ? base : .dim)
            c += label + 1
        }
        for mark in marks {
            canvas.put(mark.text, row: y, column: c, width: mark.width, role: mark.role)
            c += mark.width + 1
        }
        if columns.kind > 0 {
            canvas.put(item.kind.rawValue, row: y, column: c, width: columns.kind, role: selected ? base : .dim)
        }
    }

    /// The editor beside the list (``drawEditor(_:_:now:row:column:height:width:)``).
    func drawForm(_ canvas: inout Canvas, _ main: MainModel, now: Date, row: Int, column: Int, height: Int, width: Int)
    {
        drawEditor(&canvas, main, now: now, row: row, column: column, height: height, width: width)
    }
}

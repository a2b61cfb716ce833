import FobStore
import FobViewModels
import FoundationEssentials

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
    public internal(set) var listTop = 0
    /// How many item rows the list showed last time (for PageUp/PageDown).
    public internal(set) var listPage = 10
    /// The last preview drawn: how many rows it has, how many show at
    /// once, and the first shown (the scroll keys step from it).
    public internal(set) var previewRows = (rows: 0, room: 0, first: 0)
    /// Where the mouse reaches what was last drawn (``PointerAreas``).
    public internal(set) var pointerAreas = PointerAreas()

    /// - Parameter vaultDescription: the vault's path as shown in the header.
    public init(vaultDescription: String) {
        self.vaultDescription = vaultDescription
    }

    /// Whether `rows` × `columns` is big enough for the screens; below it
    /// only the "terminal too small" notice shows and keys other than Ctrl-Q
    /// and F10 (quit) are ignored.
    /// - Parameters:
    ///   - rows: the terminal's height in cells.
    ///   - columns: the terminal's width in cells.
    public static func fits(rows: Int, columns: Int) -> Bool {
        rows >= minimumRows && columns >= minimumColumns
    }

    /// Draws `app` on a canvas of `rows` × `columns` cells.
    public mutating func render(_ app: AppModel, rows: Int, columns: Int, glyphs: Glyphs) -> Canvas {
        var canvas = Canvas(rows: rows, columns: columns, glyphs: glyphs)
        pointerAreas = PointerAreas()
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
            canvas.cursor = nil // a dialog with text fields puts it back on its focused field
            switch overlay {
            case .help: drawHelp(&canvas, app.help, context: KeyContext.screen(app))
            case .messages: drawMessages(&canvas, app.mainModel?.messages ?? MessageLog())
            case .confirm(let dialog): drawConfirm(&canvas, dialog, versions: app.mainModel?.conflictSecretTexts)
            case .generator:
                if let dialog = app.mainModel?.generatorDialog { drawGenerator(&canvas, dialog) }
            case .logoutReview:
                if let review = app.mainModel?.logoutReview { drawLogoutReview(&canvas, review) }
            case .consent:
                if let prompt = app.mainModel?.consent.dialog { drawConsent(&canvas, prompt) }
            case .accessLog:
                if let screen = app.mainModel?.accessLog { drawAccessLog(&canvas, screen) }
            }
        }
        drawLegend(&canvas, app)
        return canvas
    }

    // MARK: - Frame

    private func drawTooSmall(_ canvas: inout Canvas) {
        let times = canvas.glyphs.unicode ? "×" : "x"
        let lines = [
            "Terminal too small",
            "\(canvas.columns)\(times)\(canvas.rows), needs \(Self.minimumColumns)\(times)\(Self.minimumRows)",
            "Ctrl-Q quits",
        ]
        let top = max(0, (canvas.rows - lines.count) / 2)
        for (i, line) in lines.enumerated() {
            let w = min(DisplayWidth.cells(of: line), canvas.columns)
            canvas.put(line, row: top + i, column: max(0, (canvas.columns - w) / 2), role: i == 0 ? .error : .normal)
        }
    }

    private func drawHeader(_ canvas: inout Canvas, _ app: AppModel) {
        canvas.fill(row: 0, column: 0, height: 1, width: canvas.columns, role: .title)
        // The lock state and when the vault locks by itself, then the clipboard's countdown.
        var status = Layout.lockState(app) + " "
        if let deadline = app.clipboardClearDeadline {
            let seconds = max(0, Int(deadline.timeIntervalSince(app.now).rounded(.up)))
            status += "· clipboard clears in \(seconds) s "
        }
        let statusWidth = DisplayWidth.cells(of: status)
        let used = canvas.put(" Fob ", row: 0, column: 0, role: .title)
        canvas.put(
            vaultDescription, row: 0, column: used, width: max(0, canvas.columns - used - statusWidth - 1), role: .title
        )
        if statusWidth > 0, statusWidth < canvas.columns - used {
            canvas.put(status, row: 0, column: canvas.columns - statusWidth, role: .title)
        }
    }

    private func drawLegend(_ canvas: inout Canvas, _ app: AppModel) {
        let row = canvas.rows - 1
        canvas.fill(row: row, column: 0, height: 1, width: canvas.columns, role: .legend)
        let entries =
            Self.helpLegend(app, rows: canvas.rows, columns: canvas.columns) ?? KeyBindings.legendEntries(for: app)
        let legend = notice ?? Layout.fitLegend(entries, width: canvas.columns - 1)
        canvas.put(" " + legend, row: row, column: 0, role: .legend)
    }

    /// The legend of the help, in pages, as its footer says: `/` searches,
    /// n and N step while a search is in effect, Tab goes to the next
    /// section, before the last page Space goes on, Esc ends a search (or
    /// clears its `No match`) or closes, and on the last page the keys not
    /// named close; `nil` while its search field is open (the key table's legend).
    static func helpLegend(_ app: AppModel, rows: Int, columns: Int) -> [String]? {
        guard app.overlay == .help, app.help.field == nil else { return nil }
        let pages = helpPages(rows: rows, columns: columns, context: KeyContext.screen(app))
        let search = ["/ search"] + (app.help.query.isEmpty ? [] : ["n/N next/previous match"])
        // Esc ends a search in effect, or takes away the `No match` of one that found nothing.
        let escape = app.help.query.isEmpty ? (app.help.searching ? "Esc clear" : nil) : "Esc end search"
        return search
            + (app.helpPage + 1 < pages
                ? ["Space next", "PgUp back", escape ?? "Esc closes the help"]
                : ["PgUp back", escape ?? "other keys close the help"]) + ["Tab next section"]
    }

    /// The key legend for what `app` shows, read from ``KeyBindings/table``.
    public static func legend(for app: AppModel) -> String { KeyBindings.legend(for: app) }

    // MARK: - Shared parts

    /// A framed box with `title`, centred and cleared, at most the screen's
    /// size less a margin.
    func dialogBox(_ canvas: inout Canvas, height: Int, width wanted: Int, title: String) -> (
        row: Int, column: Int, width: Int
    ) {
        // A box nearly as wide as the screen takes all of it, its border
        // over the panes' rather than one cell inside them (`┌┌─ Help`).
        let width = wanted >= canvas.columns - 2 ? canvas.columns : wanted
        let height = min(height, canvas.rows - 2)
        let row = max(1, (canvas.rows - height) / 2)
        let column = max(0, (canvas.columns - width) / 2)
        canvas.fill(row: row, column: column, height: height, width: width)
        canvas.box(row: row, column: column, height: height, width: width, title: title)
        return (row, column, width)
    }

    /// A one-line text field: its text (masks for a hidden secret), scrolled
    /// sideways to keep the cursor in view (then with a leading `…`), and the
    /// terminal cursor when focused.
    func drawField(_ canvas: inout Canvas, _ field: TextFieldState, row: Int, column: Int, width: Int, focused: Bool) {
        guard width > 0 else { return }
        let masked = field.isSecure && !field.isRevealed
        let role: Role = focused ? .focus : (masked && !field.isEmpty ? .masked : .field)
        canvas.fill(row: row, column: column, height: 1, width: width, role: role)
        let clusters: [(Character, Int)]
        if masked {
            clusters = Array(repeating: (canvas.glyphs.mask, 1), count: field.count)
        } else {
            // A line break (the Notes field) shows as one visible ⏎.
            clusters = field.text.map {
                $0 == "\n" ? (canvas.glyphs.unicode ? "⏎" : "|", 1) : canvas.glyphs.displayable($0)
            }
        }
        drawClusters(
            &canvas, clusters, cursor: focused ? field.cursor : nil, row: row, column: column, width: width, role: role)
    }

    /// One row of a text area `rows` rows high (the Notes field): the
    /// text's lines one per row, from the first without focus; with focus
    /// scrolled to keep the cursor's line in view (in the middle row once
    /// the text is longer than the area), that line scrolled sideways as
    /// a one-line field is.
    /// - Returns: the first line shown and how many lines the text has.
    @discardableResult
    func drawAreaRow(
        _ canvas: inout Canvas, _ field: TextFieldState, _ index: Int, of rows: Int, row: Int, column: Int, width: Int,
        focused: Bool
    ) -> (first: Int, lines: Int) {
        let lines = Array(field.text).split(separator: "\n", omittingEmptySubsequences: false)
        let cursor = field.cursorPosition
        let first = focused ? min(max(0, cursor.line - (rows - 1) / 2), max(0, lines.count - rows)) : 0
        guard width > 0 else { return (first, lines.count) }
        let role: Role = focused ? .focus : .field
        canvas.fill(row: row, column: column, height: 1, width: width, role: role)
        let line = first + index
        guard line < lines.count else { return (first, lines.count) }
        drawClusters(
            &canvas, lines[line].map { canvas.glyphs.displayable($0) },
            cursor: focused && line == cursor.line ? cursor.column : nil, row: row, column: column, width: width,
            role: role)
        return (first, lines.count)
    }

    /// `clusters` on one row: without a `cursor` from the start, cut with an
    /// ellipsis; with one, scrolled sideways to keep it in view (then with
    /// a leading `…`), and the terminal cursor there.
    func drawClusters(
        _ canvas: inout Canvas, _ clusters: [(Character, Int)], cursor: Int?, row: Int, column: Int, width: Int,
        role: Role
    ) {
        guard let cursor = cursor.map({ min($0, clusters.count) }) else {
            // Without focus a field shows its start, cut with an ellipsis.
            let text = String(clusters.map(\.0))
            canvas.put(text, row: row, column: column, width: width, role: role)
            return
        }
        var start = 0
        var before = clusters[0..<cursor].reduce(0) { $0 + $1.1 }
        // Text past the right edge leaves the last cell to a trailing ellipsis, never the cursor's.
        let after = clusters[cursor...].reduce(0) { $0 + $1.1 }
        let reach = width >= 3 && min(before, width - 1) + after > width ? width - 2 : width - 1
        while before > reach, start < cursor {
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
        if start + shown.count < clusters.count, width >= 3, let last = shown.last {
            shown[shown.count - 1] = (canvas.glyphs.ellipsis, 1)
            if last.1 == 2 { shown.append((" ", 1)) }
        }
        // A field scrolled to keep the cursor in view shows a leading ellipsis
        // in place of its first visible cell (the cursor never sits there).
        if start > 0, width >= 3, let first = shown.first {
            shown[0] = (canvas.glyphs.ellipsis, 1)
            if first.1 == 2 { shown.insert((" ", 1), at: 1) }
        }
        canvas.put(clusters: shown, row: row, column: column, role: role)
        canvas.cursor = (row, column + before)
    }

    /// Words of `text` in lines of at most `width` cells (a longer word is
    /// cut by the canvas). A number stays on the line of its unit (`10 s`,
    /// `5 min`, `20 MB`). Runs of spaces are kept as typed (a note's or a
    /// message's alignment), except where a line breaks: there they go.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line: String? // nil: nothing on this line yet
        for word in keepingUnitsWithNumbers(text.split(separator: " ", omittingEmptySubsequences: false)) {
            guard let current = line else {
                // The spaces at a line break are dropped; those that start the text are kept.
                if word.isEmpty, !lines.isEmpty { continue }
                line = word
                continue
            }
            if DisplayWidth.cells(of: current) + 1 + DisplayWidth.cells(of: word) <= width {
                line = current + " " + word
            } else {
                lines.append(current)
                line = word.isEmpty ? nil : word
            }
        }
        if let line { lines.append(line) } else if lines.isEmpty { lines.append("") }
        return lines
    }

    /// `words` with each short unit (up to three letters, then closing
    /// punctuation: `s)`, `min,`, `MB`) joined to the number before it.
    static func keepingUnitsWithNumbers(_ words: [Substring]) -> [String] {
        var out: [String] = []
        for word in words {
            let letters = word.prefix { $0.isLetter }
            let isUnit =
                !letters.isEmpty && letters.count <= 3
                && word.dropFirst(letters.count).allSatisfy { ").,;:".contains($0) }
            if isUnit, let last = out.last, last.last?.isNumber == true {
                out[out.count - 1] = last + " " + word
            } else {
                out.append(String(word))
            }
        }
        return out
    }

    /// The look of a message of `tone`: success and neutral news in the
    /// information colour; warnings and errors in the error colour.
    static func role(for tone: StatusLine.Tone) -> Role {
        switch tone {
        case .success, .info: return .info
        case .warning: return .warning
        case .error: return .error
        }
    }
}

/// Where the mouse reaches the main screen as last drawn: the list's item
/// rows and the preview pane, in screen cells (0-based).
public struct PointerAreas: Sendable, Equatable {
    /// The list's first item row on screen, the columns it spans, how many
    /// item rows show and the index (in the shown rows) of the first.
    public var listRow = 0, listColumns = 0..<0, listCount = 0, listTop = 0
    /// The preview pane's rows and columns (empty when it does not show).
    public var previewRows = 0..<0, previewColumns = 0..<0

    /// Nothing to reach.
    public init() {}

    /// The index (in the shown rows) of the list row at this cell, or `nil`.
    public func listIndex(row: Int, column: Int) -> Int? {
        guard listColumns.contains(column), row >= listRow, row < listRow + listCount else { return nil }
        return listTop + row - listRow
    }

    /// Whether this cell is in the preview pane.
    public func inPreview(row: Int, column: Int) -> Bool {
        previewRows.contains(row) && previewColumns.contains(column)
    }

    /// Lines the wheel moves the highlight or scrolls the preview by.
    static let wheelStep = 3

    /// A click or wheel turn on the list or the preview as `situation`
    /// shows them; elsewhere it leaves the highlight where it is.
    func action(for key: Key, in situation: KeyBinding.Situation) -> Action {
        let list = situation.app.mainModel?.list
        let selected = list?.selectedIndex ?? 0
        let count = list?.rows.count ?? 0
        switch key {
        case .click(let row, let column):
            if let index = listIndex(row: row, column: column), index < count { return .selectRow(index) }
        case .wheel(let down, let row, let column):
            let step = down ? Self.wheelStep : -Self.wheelStep
            if inPreview(row: row, column: column) {
                var drawn = situation.previewRows
                drawn.first = situation.app.mainModel?.previewOffset ?? drawn.first
                return .scrollPreview(to: Renderer.previewOffset(drawn, by: step))
            }
            if listIndex(row: row, column: column) != nil, count > 0 {
                return .selectRow(max(0, min(count - 1, selected + step)))
            }
        default: break
        }
        return .selectRow(selected)
    }
}

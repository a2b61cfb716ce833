import FobViewModels

/// The help overlay: ``HelpSections`` in a box, the section of what has
/// focus first, in pages on a screen too low for all of it.
extension Renderer {
    /// One drawn line of the help: keys (or a section title), then text.
    typealias HelpLine = (key: String, action: String, title: Bool)

    /// The widest key column: 24 cells; longer keys wrap their text under them.
    static let helpKeyWidth = 24

    /// The narrowest explanation column beside the keys: on a screen where
    /// it would be narrower (40 columns), the key column shrinks to
    /// ``narrowKeyWidth`` and longer keys take a line of their own above
    /// their explanation.
    static let helpMinimumActionWidth = 24
    /// The key column on a narrow screen.
    static let narrowKeyWidth = 10

    /// The help's lines for `context`, wrapped for a `columns`-wide screen,
    /// with the box's width and key column.
    static func helpLayout(columns: Int, context: KeyContext) -> (lines: [HelpLine], width: Int, keyWidth: Int) {
        let entries = HelpSections.lines(for: context)
        var keyWidth = min(
            helpKeyWidth, entries.filter { !$0.title }.map { DisplayWidth.cells(of: $0.key) }.max() ?? 10)
        let widest = max(
            entries.map { keyWidth + 2 + DisplayWidth.cells(of: $0.action) }.max() ?? 0,
            DisplayWidth.cells(of: helpFooter), DisplayWidth.cells(of: pagedHelpFooter(page: 9, of: 9)))
        // Nearly full width takes the whole screen (``dialogBox(_:height:width:title:)``).
        let width = widest + 4 >= columns - 2 ? columns : widest + 4
        var actionWidth = max(1, width - 4 - keyWidth - 2)
        if actionWidth < helpMinimumActionWidth {
            keyWidth = min(keyWidth, narrowKeyWidth)
            actionWidth = max(1, width - 4 - keyWidth - 2)
        }
        var lines: [HelpLine] = []
        for entry in entries {
            if entry.title || entry.action.isEmpty {
                lines.append(entry)
                continue
            }
            // A key wider than its column: on its own line, its text below.
            let ownLine = DisplayWidth.cells(of: entry.key) > keyWidth
            if ownLine { lines.append((entry.key, "", false)) }
            for (i, part) in Layout.wrapCells(entry.action, width: actionWidth).enumerated() {
                if ownLine {
                    lines.append(("", part, false))
                    continue
                }
                lines.append((i == 0 ? entry.key : "", part, false))
            }
        }
        return (lines, width, keyWidth)
    }

    /// How many help lines one page holds on a `rows`-high screen (the box
    /// leaves room for its borders, a blank line and the footer).
    static func helpLinesPerPage(rows: Int) -> Int { max(1, rows - 2 - 4) }

    /// The help's lines cut into pages, an entry never split across two
    /// pages unless it alone is longer than a page, a section's title never
    /// the last line of a page.
    static func helpPageLines(rows: Int, columns: Int, context: KeyContext) -> (
        pages: [[HelpLine]], width: Int, keyWidth: Int
    ) {
        let (lines, width, keyWidth) = helpLayout(columns: columns, context: context)
        let perPage = helpLinesPerPage(rows: rows)
        var pages: [[HelpLine]] = [[]]
        var i = 0
        while i < lines.count {
            var end = i + 1
            // A section's title stays on the page of its first key.
            if lines[i].title, end < lines.count { end += 1 }
            while end < lines.count && lines[end].key.isEmpty && !lines[end].action.isEmpty { end += 1 }
            let entry = Array(lines[i..<end])
            if pages[pages.count - 1].count + entry.count > perPage && !pages[pages.count - 1].isEmpty {
                pages.append([])
            }
            for line in entry {
                if pages[pages.count - 1].count == perPage { pages.append([]) }
                // A page does not start with the blank line between sections.
                if pages[pages.count - 1].isEmpty, line.key.isEmpty, line.action.isEmpty { continue }
                pages[pages.count - 1].append(line)
            }
            i = end
        }
        return (pages, width, keyWidth)
    }

    /// How many pages the help takes on a screen of this size for `context`: 1 when it fits.
    public static func helpPages(rows: Int, columns: Int, context: KeyContext = .list) -> Int {
        helpPageLines(rows: rows, columns: columns, context: context).pages.count
    }

    /// Hands the help's pages on a `rows` × `columns` screen to the model's
    /// search (``HelpModel/layOut(_:)``) while the help shows.
    /// - Returns: how many pages the help takes (1 when it does not show).
    @discardableResult
    public static func layOutHelp(_ app: AppModel, rows: Int, columns: Int) -> Int {
        guard app.overlay == .help else { return 1 }
        let pages = helpPageLines(rows: rows, columns: columns, context: KeyContext.screen(app)).pages
        app.help.layOut(pages.map { $0.map(helpSearchText) })
        return pages.count
    }

    /// The text a search of the help reads in one of its lines
    /// (``HelpModel/layOut(_:)``): the key and the action apart, a line
    /// break between them that no search holds (its field takes no control
    /// character), so a match lies within one of them, where ``drawHelp``
    /// highlights it; every line counted as a match shows its match.
    static func helpSearchText(_ line: HelpLine) -> String {
        line.action.isEmpty ? line.key : line.key + "\n" + line.action
    }

    /// The help for `context` (its section first), on the page `help`
    /// shows, its search's matches marked; the terminal cursor on the first
    /// line, or in the search field while it is open.
    func drawHelp(_ canvas: inout Canvas, _ help: HelpModel, context: KeyContext) {
        let (pages, width, keyWidth) = Self.helpPageLines(rows: canvas.rows, columns: canvas.columns, context: context)
        let page = min(max(help.page, 0), pages.count - 1)
        let lines = pages[page]
        let box = dialogBox(&canvas, height: lines.count + 4, width: width, title: "Help")
        let x = box.column + 2
        let inner = box.width - 4
        let footer =
            pages.count > 1 ? Self.pagedHelpFooter(page: page + 1, of: pages.count, width: inner) : Self.helpFooter
        let bottom = box.row + min(lines.count + 4, canvas.rows - 2) - 1
        for (i, line) in lines.enumerated() {
            let y = box.row + 1 + i
            if y >= bottom { break }
            let match = help.match(page: page, line: i)
            let current = match == .current
            let role: Role = current ? .focus : .selection
            if line.title {
                canvas.put(line.key, row: y, column: x, width: inner, role: .title)
                mark(&canvas, help.query, in: line.key, row: y, column: x, width: inner, role: role)
            } else {
                // A key on its own line (narrow screens) takes the whole width.
                let keyCells = line.action.isEmpty ? inner : min(keyWidth, inner)
                let actionCells = max(0, inner - keyWidth - 2)
                canvas.put(line.key, row: y, column: x, width: keyCells, role: .label)
                canvas.put(line.action, row: y, column: x + keyWidth + 2, width: actionCells)
                mark(&canvas, help.query, in: line.key, row: y, column: x, width: keyCells, role: role)
                mark(
                    &canvas, help.query, in: line.action, row: y, column: x + keyWidth + 2, width: actionCells,
                    role: role)
            }
            // Beside the text, a mark that needs no attributes: the current match, and the others.
            if match != nil {
                canvas.put(current ? "▸" : "•", row: y, column: box.column + 1, width: 1, role: role)
            }
        }
        if box.row + lines.count + 1 < bottom, let search = Self.helpSearchLine(help, width: inner) {
            canvas.put(search.text, row: box.row + lines.count + 1, column: x, width: inner, role: search.role)
        }
        if box.row + lines.count + 2 < bottom {
            canvas.put(footer, row: box.row + lines.count + 2, column: x, width: inner, role: .dim)
        }
        // The cursor on the first section's title (the section of what has focus), or the first line.
        canvas.cursor = (box.row + 1 + (lines.prefix(bottom - box.row - 1).firstIndex { $0.title } ?? 0), x)
        if let field = help.field, box.row + lines.count + 1 < bottom {
            canvas.cursor = (box.row + lines.count + 1, x + min(inner - 1, 1 + DisplayWidth.cells(of: field)))
        }
    }

    /// Draws the occurrences of `query` in `text` (drawn at `column`, in
    /// at most `width` cells) again in `role`.
    private func mark(
        _ canvas: inout Canvas, _ query: String, in text: String, row: Int, column: Int, width: Int, role: Role
    ) {
        let characters = Array(text)
        for range in HelpModel.ranges(of: query, in: text) {
            let offset = DisplayWidth.cells(of: String(characters[..<range.lowerBound]))
            guard offset < width else { break }
            canvas.put(String(characters[range]), row: row, column: column + offset, width: width - offset, role: role)
        }
    }

    /// The line above the footer while the help is searched: the search
    /// field (`/` and what is typed), where the search stands, or that
    /// nothing matched; `nil` without a search.
    static func helpSearchLine(_ help: HelpModel, width: Int) -> (text: String, role: Role)? {
        if let field = help.field { return ("/" + field, .normal) }
        if let missed = help.missed { return ("No match for \u{201C}\(missed)\u{201D}", .warning) }
        guard let current = help.current else { return nil }
        let found = "\u{201C}\(help.query)\u{201D}: match \(current + 1) of \(help.matches.count)"
        let long = found + "; n next, N previous, Esc ends"
        return (DisplayWidth.cells(of: long) <= width ? long : found, .info)
    }

    /// The footer of a help in pages; on the last page, where `width`
    /// cells cannot hold it, a shorter one (any key still closes).
    static func pagedHelpFooter(page: Int, of pages: Int, width: Int = .max) -> String {
        guard page == pages else {
            let footer = "Page \(page) of \(pages): Space next, PgUp back, Esc closes"
            return DisplayWidth.cells(of: footer) <= width ? footer : "Page \(page) of \(pages): Space next, PgUp back"
        }
        let footer = "Page \(page) of \(pages): PgUp back, any key closes"
        return DisplayWidth.cells(of: footer) <= width ? footer : "Page \(page) of \(pages): PgUp back, Esc closes"
    }

    /// The help overlay's last line.
    static let helpFooter = "Any key closes this help (q and Esc too)."
}

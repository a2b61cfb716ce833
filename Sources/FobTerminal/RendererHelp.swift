import FobViewModels

/// The help overlay: ``HelpSections`` in a box, the section of what has
/// focus first, in pages on a screen too low for all of it.
extension Renderer {
    /// One drawn line of the help: keys, then text (a section's title is
    /// in the box's top border, never a line).
    typealias HelpLine = (key: String, action: String)

    /// The widest key column: 24 cells; longer keys wrap their text under them.
    static let helpKeyWidth = 24

    /// The narrowest explanation column beside the keys: on a screen where
    /// it would be narrower (40 columns), the key column shrinks to
    /// ``narrowKeyWidth`` and longer keys take a line of their own above
    /// their explanation.
    static let helpMinimumActionWidth = 24
    /// The key column on a narrow screen.
    static let narrowKeyWidth = 10

    /// One section of the help as drawn: its title and its lines, wrapped.
    typealias HelpSection = (title: String, lines: [HelpLine])

    /// The first section of the help, before the others: how to search the
    /// help and move between its sections, and their names in the order
    /// Tab reaches them.
    static func helpContents(_ sections: [HelpSections.Section]) -> HelpSections.Section {
        let names = sections.map(\.title).joined(separator: ", ")
        return HelpSections.Section(
            title: "Contents", contexts: [],
            lines: [
                (HelpSections.intro.key, HelpSections.intro.text), ("Tab", "next section: " + names),
                ("Shift-Tab", "previous section"),
            ])
    }

    /// The help's sections for `context` (``helpContents(_:)`` first),
    /// wrapped for a `columns`-wide screen, with the box's width and key column.
    static func helpLayout(columns: Int, context: KeyContext) -> (
        sections: [HelpSection], width: Int, keyWidth: Int
    ) {
        let ordered = HelpSections.ordered(for: context)
        let sections = [helpContents(ordered)] + ordered
        let entries = sections.flatMap(\.lines)
        var keyWidth = min(helpKeyWidth, entries.map { DisplayWidth.cells(of: $0.keys) }.max() ?? 10)
        let widest = max(
            entries.map { keyWidth + 2 + DisplayWidth.cells(of: $0.text) }.max() ?? 0,
            DisplayWidth.cells(of: helpFooter(title: "Generator", page: 9, of: 9)))
        // Nearly full width takes the whole screen (``dialogBox(_:height:width:title:)``).
        let width = widest + 4 >= columns - 2 ? columns : widest + 4
        var actionWidth = max(1, width - 4 - keyWidth - 2)
        if actionWidth < helpMinimumActionWidth {
            keyWidth = min(keyWidth, narrowKeyWidth)
            actionWidth = max(1, width - 4 - keyWidth - 2)
        }
        let wrapped = sections.map { section in
            (
                title: section.title,
                lines: section.lines.flatMap { wrap($0, keyWidth: keyWidth, actionWidth: actionWidth) }
            )
        }
        return (wrapped, width, keyWidth)
    }

    /// One key and its text as drawn lines: the text wrapped beside the key,
    /// or under it when the key is wider than its column.
    private static func wrap(_ entry: (keys: String, text: String), keyWidth: Int, actionWidth: Int) -> [HelpLine] {
        let ownLine = DisplayWidth.cells(of: entry.keys) > keyWidth
        let parts = Layout.wrapCells(entry.text, width: actionWidth)
        if ownLine { return [(entry.keys, "")] + parts.map { ("", $0) } }
        return parts.enumerated().map { ($0.offset == 0 ? entry.keys : "", $0.element) }
    }

    /// How many help lines one page holds on a `rows`-high screen (the box
    /// leaves room for its borders and ``helpFooterRows(rows:)``; the
    /// section's title is in the top border).
    static func helpLinesPerPage(rows: Int) -> Int { max(1, rows - 2 - 2 - helpFooterRows(rows: rows)) }

    /// The rows under the help's lines: the search line, then the footer;
    /// on a screen under 20 rows one row, where the search line while a
    /// search shows stands in for the footer (the border still names the section).
    static func helpFooterRows(rows: Int) -> Int { rows < 20 ? 1 : 2 }

    /// The help cut into pages, one section per page or several for a long
    /// one, never two on a page; an entry never split across two pages
    /// unless it alone is longer than a page. `sections` says which pages
    /// each section takes.
    static func helpPageLines(rows: Int, columns: Int, context: KeyContext) -> (
        pages: [[HelpLine]], sections: [(title: String, first: Int, count: Int)], width: Int, keyWidth: Int
    ) {
        let (sections, width, keyWidth) = helpLayout(columns: columns, context: context)
        let perPage = helpLinesPerPage(rows: rows)
        var pages: [[HelpLine]] = []
        var spans: [(title: String, first: Int, count: Int)] = []
        for section in sections {
            let first = pages.count
            var page: [HelpLine] = []
            var i = 0
            let lines = section.lines
            while i < lines.count {
                var end = i + 1
                while end < lines.count && lines[end].key.isEmpty { end += 1 }
                for (n, line) in lines[i..<end].enumerated() {
                    // A new page for an entry that does not fit what is left, or for what overflows a page.
                    if !page.isEmpty && (page.count == perPage || (n == 0 && page.count + end - i > perPage)) {
                        pages.append(page)
                        page = []
                    }
                    page.append(line)
                }
                i = end
            }
            pages.append(page)
            spans.append((section.title, first, pages.count - first))
        }
        return (pages, spans, width, keyWidth)
    }

    /// How many pages the help takes on a screen of this size for `context`.
    public static func helpPages(rows: Int, columns: Int, context: KeyContext = .list) -> Int {
        helpPageLines(rows: rows, columns: columns, context: context).pages.count
    }

    /// Hands the help's pages on a `rows` × `columns` screen to the model's
    /// search (``HelpModel/layOut(_:)``) while the help shows.
    /// - Returns: how many pages the help takes (1 when it does not show).
    @discardableResult
    public static func layOutHelp(_ app: AppModel, rows: Int, columns: Int) -> Int {
        guard app.overlay == .help else { return 1 }
        let laid = helpPageLines(rows: rows, columns: columns, context: KeyContext.screen(app))
        app.help.layOut(laid.pages.map { $0.map(helpSearchText) }, sections: laid.sections.map(\.first))
        return laid.pages.count
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
    /// shows, its section's title in the top border, its search's matches
    /// marked; the terminal cursor on the first line, or in the search
    /// field while it is open.
    func drawHelp(_ canvas: inout Canvas, _ help: HelpModel, context: KeyContext) {
        let (pages, sections, width, keyWidth) = Self.helpPageLines(
            rows: canvas.rows, columns: canvas.columns, context: context)
        let page = min(max(help.page, 0), pages.count - 1)
        let lines = pages[page]
        let section = sections.last { $0.first <= page } ?? (title: "", first: 0, count: 1)
        // As high as the fullest page: the box stays put as the pages turn.
        let shown = pages.map(\.count).max() ?? lines.count
        let under = Self.helpFooterRows(rows: canvas.rows)
        let box = dialogBox(&canvas, height: shown + 2 + under, width: width, title: "Help: " + section.title)
        let x = box.column + 2
        let inner = box.width - 4
        let footer = Self.helpFooter(
            title: section.title, page: page - section.first + 1, of: section.count, width: inner)
        let bottom = box.row + min(shown + 2 + under, canvas.rows - 2) - 1
        let searchRow = box.row + shown + 1
        for (i, line) in lines.enumerated() {
            let y = box.row + 1 + i
            if y >= bottom { break }
            let match = help.match(page: page, line: i)
            let current = match == .current
            let role: Role = current ? .focus : .selection
            // A key on its own line (narrow screens) takes the whole width.
            let keyCells = line.action.isEmpty ? inner : min(keyWidth, inner)
            let actionCells = max(0, inner - keyWidth - 2)
            canvas.put(line.key, row: y, column: x, width: keyCells, role: .label)
            canvas.put(line.action, row: y, column: x + keyWidth + 2, width: actionCells)
            mark(&canvas, help.query, in: line.key, row: y, column: x, width: keyCells, role: role)
            mark(
                &canvas, help.query, in: line.action, row: y, column: x + keyWidth + 2, width: actionCells,
                role: role)
            // Beside the text, a mark that needs no attributes: the current match, and the others.
            if match != nil {
                canvas.put(current ? "▸" : "•", row: y, column: box.column + 1, width: 1, role: role)
            }
        }
        let search = Self.helpSearchLine(help, width: inner)
        if box.row + shown + under < bottom && (under > 1 || search == nil) {
            canvas.put(footer, row: box.row + shown + under, column: x, width: inner, role: .dim)
        }
        if searchRow < bottom, let search {
            canvas.put(search.text, row: searchRow, column: x, width: inner, role: search.role)
        }
        canvas.cursor = (box.row + 1, x)
        if let field = help.field, searchRow < bottom {
            canvas.cursor = (searchRow, x + min(inner - 1, 1 + DisplayWidth.cells(of: field)))
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

    /// The help's last line: where the page stands in its section and how
    /// to move on (`List 2/3 · Tab next section · PgDn more`), shorter where
    /// `width` cells cannot hold it: the hints shrink or go before the
    /// section's name and page do (`Preview 1/3 · Tab section · PgDn`).
    static func helpFooter(title: String, page: Int, of pages: Int, width: Int = .max) -> String {
        let place = pages > 1 ? "\(title) \(page)/\(pages)" : title
        let more = page < pages ? ["PgDn more"] : []
        // The section and the page go last: `PgDn more` is shortened, then left out, first.
        let candidates = [
            [place, "Tab next section"] + more, [place, "Tab section"] + more,
            [place, "Tab section"] + (more.isEmpty ? [] : ["PgDn"]), [place, "Tab section"], [place],
            pages > 1 ? ["\(page)/\(pages)"] : [title],
        ].map { $0.joined(separator: " · ") }
        return candidates.first { DisplayWidth.cells(of: $0) <= width } ?? candidates[candidates.count - 1]
    }
}

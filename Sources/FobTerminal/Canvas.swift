/// What a cell means; the theme turns a role into colours or attributes.
public enum Role: Int, Sendable, CaseIterable {
    /// Ordinary text.
    case normal
    /// Screen and panel titles.
    case title
    /// Field labels.
    case label
    /// An input field without focus.
    case field
    /// The input field or button with focus.
    case focus
    /// A button without focus.
    case button
    /// The selected row of a list.
    case selection
    /// An error message.
    case error
    /// A token past its expiry.
    case expired
    /// Masked characters.
    case masked
    /// The key legend on the bottom line.
    case legend
    /// Secondary text: kinds, hints, borders.
    case dim
    /// A success or information message.
    case info
    /// A warning: something changed under the user's feet, nothing failed.
    case warning
}

/// One screen cell: a grapheme cluster and its role. A wide cluster fills
/// its first cell; the next one is a continuation (`nil` text).
public struct Cell: Equatable, Sendable {
    /// The cluster drawn here, `nil` for the second half of a wide one.
    public var text: Character?
    /// What the cell means.
    public var role: Role

    /// A blank cell with `role`.
    public static func blank(_ role: Role = .normal) -> Cell { Cell(text: " ", role: role) }
}

/// A grid of cells the screens draw into before it reaches the terminal:
/// drawing never wraps, and text that does not fit is cut with an ellipsis.
public struct Canvas: Equatable, Sendable {
    /// Rows and columns.
    public private(set) var rows: Int, columns: Int
    /// Row-major cells.
    public private(set) var cells: [Cell]
    /// Where the terminal cursor goes (row, column), or `nil` to hide it.
    public var cursor: (row: Int, column: Int)? {
        get { cursorRow.map { ($0, cursorColumn) } }
        set {
            cursorRow = newValue?.row
            cursorColumn = newValue?.column ?? 0
        }
    }
    private var cursorRow: Int?
    private var cursorColumn = 0
    /// The symbols in use.
    public let glyphs: Glyphs

    /// A blank canvas of `rows` × `columns` cells.
    public init(rows: Int, columns: Int, glyphs: Glyphs) {
        self.rows = max(rows, 0)
        self.columns = max(columns, 0)
        self.glyphs = glyphs
        cells = Array(repeating: .blank(), count: self.rows * self.columns)
    }

    /// The cell at (`row`, `column`).
    public subscript(row: Int, column: Int) -> Cell {
        cells[row * columns + column]
    }

    /// The text of row `row`, continuation cells skipped.
    public func line(_ row: Int) -> String {
        guard row >= 0, row < rows else { return "" }
        var s = ""
        for c in 0..<columns { if let t = self[row, c].text { s.append(t) } }
        return s
    }

    /// Every row joined with newlines, trailing blanks kept.
    public var text: String { (0..<rows).map(line).joined(separator: "\n") }

    /// Writes `text` at (`row`, `column`) in at most `width` cells (default:
    /// to the right edge), cut with the ellipsis if longer.
    /// - Returns: the cells written.
    @discardableResult
    public mutating func put(_ text: String, row: Int, column: Int, width: Int? = nil, role: Role = .normal) -> Int {
        guard row >= 0, row < rows, column >= 0, column < columns else { return 0 }
        let room = min(width ?? (columns - column), columns - column)
        guard room > 0 else { return 0 }
        var c = column
        for (cluster, w) in TextFit.fit(text, width: room, glyphs: glyphs) {
            set(row, c, Cell(text: cluster, role: role))
            if w == 2 { set(row, c + 1, Cell(text: nil, role: role)) }
            c += w
        }
        return c - column
    }

    /// Writes pre-measured clusters (from ``TextFit``) at (`row`, `column`), up to the edge.
    public mutating func put(clusters: [(Character, Int)], row: Int, column: Int, role: Role) {
        guard row >= 0, row < rows else { return }
        var c = column
        for (cluster, w) in clusters {
            guard c >= 0, c + w <= columns else { break }
            set(row, c, Cell(text: cluster, role: role))
            if w == 2 { set(row, c + 1, Cell(text: nil, role: role)) }
            c += w
        }
    }

    /// Fills a rectangle with blanks of `role`.
    public mutating func fill(row: Int, column: Int, height: Int, width: Int, role: Role = .normal) {
        for r in max(row, 0)..<max(min(row + height, rows), max(row, 0)) {
            for c in max(column, 0)..<max(min(column + width, columns), max(column, 0)) {
                set(r, c, .blank(role))
            }
        }
    }

    /// Draws a box outline in `role` with an optional title in its top edge in `titleRole`.
    public mutating func box(
        row: Int, column: Int, height: Int, width: Int, title: String? = nil, role: Role = .dim,
        titleRole: Role = .title
    ) {
        guard height >= 2, width >= 2 else { return }
        let g = glyphs
        for c in column + 1..<column + width - 1 {
            put(String(g.horizontal), row: row, column: c, width: 1, role: role)
            put(String(g.horizontal), row: row + height - 1, column: c, width: 1, role: role)
        }
        for r in row + 1..<row + height - 1 {
            put(String(g.vertical), row: r, column: column, width: 1, role: role)
            put(String(g.vertical), row: r, column: column + width - 1, width: 1, role: role)
        }
        put(String(g.topLeft), row: row, column: column, width: 1, role: role)
        put(String(g.topRight), row: row, column: column + width - 1, width: 1, role: role)
        put(String(g.bottomLeft), row: row + height - 1, column: column, width: 1, role: role)
        put(String(g.bottomRight), row: row + height - 1, column: column + width - 1, width: 1, role: role)
        if let title, width > 4 {
            put(" \(title) ", row: row, column: column + 2, width: width - 4, role: titleRole)
        }
    }

    private mutating func set(_ row: Int, _ column: Int, _ cell: Cell) {
        guard row >= 0, row < rows, column >= 0, column < columns else { return }
        let i = row * columns + column
        // Overwriting half of a wide cluster blanks its other half.
        if cells[i].text == nil, column > 0, cell.text != nil {
            cells[i - 1] = .blank(cells[i - 1].role)
        }
        if column + 1 < columns, cells[i + 1].text == nil, cell.text != nil {
            if let old = cells[i].text, (DisplayWidth.cells(of: old) ?? 1) == 2 {
                cells[i + 1] = .blank(cells[i + 1].role)
            }
        }
        cells[i] = cell
    }

    /// Same size, same cells, same cursor: nothing to redraw.
    public static func == (a: Canvas, b: Canvas) -> Bool {
        a.rows == b.rows && a.columns == b.columns && a.cells == b.cells
            && a.cursorRow == b.cursorRow && a.cursorColumn == b.cursorColumn
    }
}

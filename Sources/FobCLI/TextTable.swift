import FobTerminal
@preconcurrency import Glibc

/// A table of text for the command line (`fob ls`, `fob log`, `fob access
/// show`): columns two spaces apart, each padded to its widest cell in
/// terminal cells (as the terminal UI measures them: `密码` and `🔑` take
/// two each), so wide characters do not shift the columns after them.
///
/// A cell wider than ``maximumCells`` is cut, so one long value cannot
/// widen every line. Given the width of the terminal standard output
/// writes to, the columns in ``yielding`` are cut further until each line
/// fits it, as `ps` and `journalctl` fit theirs; the other columns stay whole.
struct TextTable {
    /// The rows, the header first; every cell already printable
    /// (control characters escaped, see ``ListCommand/printable(_:)``).
    var rows: [[String]]
    /// The most terminal cells one cell takes (a longer one is cut), `nil`
    /// for no limit.
    var maximumCells: Int? = TextTable.defaultMaximumCells
    /// Groups of column indices (from 0) that give way, one group after the
    /// other, when a line is wider than the terminal: within a group the
    /// widest column loses a cell at a time, down to ``minimumCells``.
    var yielding: [[Int]] = []
    /// Columns cut at their start, keeping their end (a program's name and
    /// pid come last in its cell); others are cut at their end.
    var cutAtStart: Set<Int> = []

    /// The default of ``maximumCells``.
    static let defaultMaximumCells = 40
    /// The fewest cells a yielding column is cut to (its own width when that
    /// is less): enough for a few characters and the ellipsis.
    static let minimumCells = 8

    /// What ends (or starts) a cut cell: `…` where the terminal can show it,
    /// else `...`, decided as the terminal UI decides its ASCII stand-ins
    /// (``Glyphs/current(term:)``: a locale that is not UTF-8, or the Linux
    /// console, whose fonts lack the symbol).
    /// - Parameter term: the `TERM` variable.
    static func ellipsis(term: String?) -> String {
        // nl_langinfo follows LC_CTYPE: the user's locale, as the UI uses.
        setlocale(LC_CTYPE, "")
        return Glyphs.current(term: term).asciiSymbols ? "..." : "…"
    }

    /// The table's lines.
    /// - Parameters:
    ///   - width: the terminal's width in columns, to fit each line to; `nil`
    ///     when standard output is not a terminal (every yielding cell whole,
    ///     up to ``maximumCells``).
    ///   - ellipsis: what marks a cut (``ellipsis(term:)``).
    /// - Returns: the table's UTF-8 bytes, a line a row, the last cell of a
    ///   line not padded.
    func render(width: Int?, ellipsis: String) -> [UInt8] {
        // wcwidth follows LC_CTYPE: the user's locale, as the UI uses.
        setlocale(LC_CTYPE, "")
        // Each cell is measured once; only a cut one is measured again.
        var measured = rows.map { row in row.map { (text: $0, cells: DisplayWidth.cells(of: $0)) } }
        var widths = [Int](repeating: 0, count: rows.map(\.count).max() ?? 0)
        for row in measured {
            for (column, cell) in row.enumerated() {
                var cells = cell.cells
                if let cap = maximumCells, cells > cap {
                    // A wide character that would cross the cap leaves the cut text a cell narrower.
                    cells = DisplayWidth.cells(of: Self.cut(cell.text, toCells: cap, ellipsis: ellipsis))
                }
                widths[column] = max(widths[column], cells)
            }
        }
        if let width { widths = Self.fit(widths, to: width, yielding: yielding) }
        for (r, row) in measured.enumerated() {
            for (column, cell) in row.enumerated() where cell.cells > widths[column] {
                let kept = Self.cut(
                    cell.text, toCells: widths[column], ellipsis: ellipsis, atStart: cutAtStart.contains(column))
                measured[r][column] = (kept, DisplayWidth.cells(of: kept))
            }
        }
        var text: [UInt8] = []
        text.reserveCapacity(measured.count * (widths.reduce(0, +) + 2 * widths.count))
        for row in measured {
            for (column, cell) in row.enumerated() {
                text.append(contentsOf: cell.text.utf8)
                if column < row.count - 1 {
                    text.append(
                        contentsOf: repeatElement(UInt8(ascii: " "), count: max(0, widths[column] - cell.cells) + 2))
                }
            }
            text.append(UInt8(ascii: "\n"))
        }
        return text
    }

    /// Column widths narrowed to fit `width` columns with two spaces
    /// between columns: the groups of `yielding` in turn, the widest of a
    /// group losing one cell at a time, none below ``minimumCells``. A table
    /// that still does not fit keeps the rest whole (the terminal wraps it).
    /// - Parameters:
    ///   - widths: each column's width in cells.
    ///   - width: the terminal's columns.
    ///   - yielding: as ``yielding``.
    static func fit(_ widths: [Int], to width: Int, yielding: [[Int]]) -> [Int] {
        var widths = widths
        var total = widths.reduce(0, +) + 2 * max(0, widths.count - 1)
        for group in yielding {
            while total > width {
                let candidates = group.filter { $0 < widths.count && widths[$0] > minimumCells }
                guard let widest = candidates.max(by: { widths[$0] < widths[$1] }) else { break }
                widths[widest] -= 1
                total -= 1
            }
        }
        return widths
    }

    /// `text` when it takes at most `limit` terminal cells, else its first
    /// (or, `atStart`, its last) whole clusters and `ellipsis`, `limit`
    /// cells at most in all.
    /// - Parameters:
    ///   - text: a printable cell (control characters already escaped).
    ///   - limit: the most cells, 1 or more.
    ///   - ellipsis: what marks the cut (`…` or `...`).
    ///   - atStart: cut the start and keep the end.
    static func cut(_ text: String, toCells limit: Int, ellipsis: String, atStart: Bool = false) -> String {
        guard DisplayWidth.cells(of: text) > limit else { return text }
        let room = limit - DisplayWidth.cells(of: ellipsis)
        guard room > 0 else { return String(ellipsis.prefix(max(1, limit))) }
        var kept: [Character] = []
        var used = 0
        for cluster in atStart ? Array(text.reversed()) : Array(text) {
            let width = DisplayWidth.cells(of: cluster) ?? 1
            if used + width > room { break }
            kept.append(cluster)
            used += width
        }
        return atStart ? ellipsis + String(kept.reversed()) : String(kept) + ellipsis
    }
}

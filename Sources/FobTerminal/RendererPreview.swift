import FobStore
import FobSystem
import FobViewModels
import FoundationEssentials

/// The preview pane beside the list and the message history overlay.
extension Renderer {
    /// The preview of the highlighted item (``ItemPreview``): a caption
    /// gutter, then each value wrapped over as many rows as it needs,
    /// scrolled by ``MainModel/previewOffset`` (clamped so that the last
    /// row ends the pane); rows out of view are said with `↑ N more` /
    /// `↓ N more`. Notes the rows and room it drew (``previewRows``), for
    /// the scroll keys.
    mutating func drawPreview(
        _ canvas: inout Canvas, _ app: AppModel, _ main: MainModel, row: Int, column: Int, height: Int, width: Int
    ) {
        canvas.box(row: row, column: column, height: height, width: width, title: "Preview")
        let x = column + 2
        let inner = width - 4
        let bottom = row + height - 1
        previewRows = (0, 0, 0)
        pointerAreas.previewRows = row..<(row + height)
        pointerAreas.previewColumns = column..<(column + width)
        guard inner > 4, let preview = main.preview else {
            canvas.put("Nothing selected", row: row + 1, column: x, width: max(0, inner), role: .dim)
            return
        }
        var lines = preview.lines(at: app.now)
        if let note = main.conflictNote { lines.insert(ItemPreview.Line("Sync", note, .soon), at: 0) }
        let gutter = min(Self.previewGutter, lines.map { DisplayWidth.cells(of: $0.label) }.max() ?? 0) + 1
        let textWidth = max(1, inner - gutter)
        var rows: [(label: String, text: String, role: Role)] = []
        for line in lines {
            for (i, part) in Layout.wrapCells(line.text, width: textWidth).enumerated() {
                rows.append((i == 0 ? line.label : "", part, Self.role(for: line.style)))
            }
        }
        let room = bottom - row - 1
        // Scrolled by `first` rows (said by `↑ N more` on the first line):
        // at most until the last row ends the pane.
        let first = rows.count > room ? min(main.previewOffset, rows.count - room + 1) : 0
        previewRows = (rows.count, room, first)
        var y = row + 1
        if first > 0 {
            canvas.put("↑ \(first) more", row: y, column: x, width: inner, role: .dim)
            y += 1
        }
        var index = first
        while y < bottom, index < rows.count {
            if y == bottom - 1, index < rows.count - 1 {
                canvas.put("↓ \(rows.count - index) more", row: y, column: x, width: inner, role: .dim)
                break
            }
            let entry = rows[index]
            canvas.put(entry.label, row: y, column: x, width: gutter - 1, role: .label)
            canvas.put(entry.text, row: y, column: x + gutter, width: textWidth, role: entry.role)
            y += 1
            index += 1
        }
    }

    /// The preview's first row after scrolling `by` rows from the one in
    /// view (``previewRows``): never above the first, never past where the
    /// last row ends the pane.
    static func previewOffset(
        _ drawn: (rows: Int, room: Int, first: Int), by step: Int
    ) -> Int {
        guard drawn.rows > drawn.room else { return 0 }
        let last = drawn.rows - drawn.room + 1
        return max(0, min(min(drawn.first, last) + step, last))
    }

    /// The widest caption of the preview's gutter: 12 cells, a longer one is cut.
    static let previewGutter = 12

    /// The look of a preview line.
    static func role(for style: ItemPreview.Line.Style) -> Role {
        switch style {
        case .plain, .wrapped: return .normal
        case .masked: return .masked
        case .expired: return .expired
        case .soon: return .warning
        }
    }

    /// The last messages of the status line, newest first, each with the
    /// time it was shown and its tone's symbol; the terminal cursor on the
    /// newest.
    func drawMessages(_ canvas: inout Canvas, _ log: MessageLog) {
        let width = min(canvas.columns - 2, 100)
        let textWidth = max(1, width - 4 - 11)
        var lines: [(time: String, text: String, tone: StatusLine.Tone)] = []
        for entry in log.entries.reversed() {
            let text = "\(entry.line.tone.symbol(unicode: canvas.glyphs.unicode)) \(entry.line.text)"
            for (i, part) in Layout.wrapCells(text, width: textWidth).enumerated() {
                lines.append((i == 0 ? DateText.local(entry.time, "%H:%M:%S") : "", part, entry.line.tone))
            }
        }
        if lines.isEmpty { lines = [("", "No messages yet", .info)] }
        let box = dialogBox(&canvas, height: min(lines.count, canvas.rows - 6) + 4, width: width, title: "Messages")
        let x = box.column + 2
        let bottom = box.row + min(lines.count, canvas.rows - 6) + 1
        for (i, line) in lines.enumerated() {
            let y = box.row + 1 + i
            if y >= bottom { break }
            canvas.put(line.time, row: y, column: x, width: 10, role: .dim)
            canvas.put(line.text, row: y, column: x + 11, width: textWidth, role: Self.role(for: line.tone))
        }
        canvas.put("Any key closes.", row: bottom + 1, column: x, width: width - 4, role: .dim)
        canvas.cursor = (box.row + 1, x + 11)
    }

}

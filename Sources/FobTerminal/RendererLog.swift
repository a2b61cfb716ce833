import FobStore
import FobViewModels
import FoundationEssentials

/// The access log view (``Overlay/accessLog``): the query, whether the log
/// verifies, then one entry a row, newest first (time, decision, channel,
/// item, program; on a narrow screen two lines an entry), the selected one
/// highlighted, and below them, on Enter, the selected entry's details.
extension Renderer {
    /// Below this many cells inside the box, each entry takes two lines.
    static let logTwoLineWidth = 60

    /// Draws `screen` over the whole main screen (header and legend excepted).
    func drawAccessLog(_ canvas: inout Canvas, _ screen: AccessLogScreen) {
        let box = dialogBox(&canvas, height: canvas.rows - 2, width: canvas.columns, title: "Access log")
        let x = box.column + 2
        let inner = max(1, box.width - 4)
        let bottom = box.row + canvas.rows - 3 // the box's last inside row + 1
        var y = box.row + 1
        canvas.put("Find", row: y, column: x, width: 5, role: .label)
        let query = y
        y += 1
        let view = screen.view
        canvas.put(view.statusLine, row: y, column: x, width: inner, role: view.problems.isEmpty ? .dim : .error)
        y += 1
        let perEntry = inner < Self.logTwoLineWidth ? 2 : 1
        if perEntry == 1 {
            canvas.put(Self.logHeader(width: inner), row: y, column: x, width: inner, role: .label)
            y += 1
        }
        let details = screen.showsDetails ? screen.details : []
        // The selected entry keeps its lines in view; the details take what is left.
        let listBottom = max(y + perEntry, bottom - (details.isEmpty ? 0 : details.count + 1))
        let lines = Self.logLines(view, width: inner, ellipsis: canvas.glyphs.ellipsis)
        if lines.isEmpty {
            let none = view.records.isEmpty ? "No entries yet" : "No entry matches"
            canvas.put(none, row: y, column: x, width: inner, role: .dim)
        }
        let room = max(1, listBottom - y)
        let selectedLine = view.selection * perEntry
        // Scrolled so that the selected entry shows whole, its first line at least.
        let first = min(selectedLine, max(0, min(selectedLine + perEntry - room, lines.count - room)))
        for (offset, line) in lines.dropFirst(first).prefix(room).enumerated() {
            let entry = (first + offset) / perEntry
            let role: Role = entry == view.selection ? .selection : .normal
            canvas.fill(row: y + offset, column: x, height: 1, width: inner, role: role)
            canvas.put(line, row: y + offset, column: x, width: inner, role: role)
        }
        if !details.isEmpty {
            var dy = listBottom
            canvas.put(
                String(repeating: canvas.glyphs.unicode ? "─" : "-", count: inner), row: dy, column: x, width: inner,
                role: .dim)
            for line in details {
                dy += 1
                guard dy < bottom else { break }
                canvas.put(line, row: dy, column: x, width: inner, role: .normal)
            }
        }
        // Last: the cursor stays in the query, where typing goes.
        drawField(&canvas, screen.query, row: query, column: x + 5, width: max(1, inner - 5), focused: true)
    }

    /// The list's lines: one an entry from ``logTwoLineWidth`` cells
    /// (`14:02:07 allowed-rule get mail/ana git (12)`; from 96 cells with the
    /// date and the program's whole path), else two (`14:02:07 allowed-rule
    /// mail/ana`, `  git (12) · get`). The details (Enter) give the whole path.
    static func logLines(_ view: AccessLogView, width: Int, ellipsis: Character = "…") -> [String] {
        let wide = width >= 96
        return view.rows.flatMap { row -> [String] in
            let decision = row.decision == "-" ? row.event : row.decision
            let program = wide ? row.program : shortProgram(row.program)
            guard width >= logTwoLineWidth else {
                return ["\(row.time.suffix(8)) \(decision) \(row.item)", "  \(program) · \(row.channel)"]
            }
            let time = wide ? String(row.time.dropFirst(5)) : String(row.time.suffix(8))
            let columns = [
                pad(decision, 18, ellipsis), pad(row.channel, 14, ellipsis), pad(row.item, wide ? 24 : 18, ellipsis),
            ]
            return [([time] + columns + [program]).joined(separator: " ")]
        }
    }

    /// The column titles over the one-line rows (``logLines(_:width:ellipsis:)``).
    static func logHeader(width: Int) -> String {
        let wide = width >= 96
        let time = wide ? "time" + String(repeating: " ", count: 11) : "time     "
        return time + "decision" + String(repeating: " ", count: 11) + "channel" + String(repeating: " ", count: 8)
            + "item" + String(repeating: " ", count: wide ? 21 : 15) + "program"
    }

    /// `/usr/bin/git (12)` as `git (12)`.
    static func shortProgram(_ program: String) -> String {
        guard program.hasPrefix("/"), let slash = program.split(separator: " ").first?.lastIndex(of: "/") else {
            return program
        }
        return String(program[program.index(after: slash)...])
    }

    /// `text` cut or padded to `cells` cells, ending in `ellipsis` when cut.
    private static func pad(_ text: String, _ cells: Int, _ ellipsis: Character) -> String {
        let width = DisplayWidth.cells(of: text)
        if width <= cells { return text + String(repeating: " ", count: cells - width) }
        var out = ""
        var used = 0
        for character in text {
            let w = DisplayWidth.cells(of: String(character))
            if used + w > cells - 1 { break }
            out.append(character)
            used += w
        }
        return out + String(ellipsis) + String(repeating: " ", count: max(0, cells - 1 - used))
    }
}

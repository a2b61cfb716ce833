import FobStore
import FobViewModels
import FoundationEssentials

/// The logout review box (F8).
extension Renderer {
    /// The review: each token or OAuth item a logout may delete, in its
    /// group under a heading, `[x]` when ticked, scrolled to keep the
    /// cursor's row in view (`↑ N more` / `↓ N more`), then the question
    /// with the final count. The terminal cursor sits on the cursor's row.
    func drawLogoutReview(_ canvas: inout Canvas, _ review: LogoutReviewModel) {
        var lines: [(text: String, row: Int?)] = []
        for index in review.rows.indices {
            if let heading = review.heading(before: index) { lines.append((heading, nil)) }
            let row = review.rows[index]
            let mark = row.selected ? "[x]" : "[ ]"
            let name = row.key.account.isEmpty ? row.key.service : "\(row.key.service) / \(row.key.account)"
            lines.append(("\(mark) \(displaySafe(name))  \(row.kind.rawValue)", index))
        }
        if lines.isEmpty { lines.append(("No token or OAuth items to delete", nil)) }
        let question = Self.wrap(review.question, width: max(1, min(72, canvas.columns - 2) - 4))
        let room = max(1, canvas.rows - 2 - 2 - 2 - question.count)
        let box = dialogBox(
            &canvas, height: min(lines.count, room) + question.count + 4, width: 72, title: "Logout: review")
        let x = box.column + 2
        let inner = box.width - 4
        let cursorLine = lines.firstIndex { $0.row == review.cursor } ?? 0
        let visible = min(lines.count, room)
        // The cursor's row stays clear of the ↑ and ↓ rows.
        var first = 0
        if lines.count > visible {
            first = min(max(0, cursorLine - visible + 2), lines.count - visible)
        }
        for offset in 0..<visible {
            let line = lines[first + offset]
            let y = box.row + 1 + offset
            let focused = line.row == review.cursor
            var text = line.text
            if offset == 0 && first > 0 { text = "↑ \(first) more" }
            if offset == visible - 1 && first + visible < lines.count {
                text = "↓ \(lines.count - first - visible) more"
            }
            let role: Role = line.row == nil ? .label : (focused ? .selection : .normal)
            canvas.put(text, row: y, column: x, width: inner, role: role)
            if focused { canvas.cursor = (y, x + 1) }
        }
        for (i, line) in question.enumerated() {
            canvas.put(line, row: box.row + 2 + visible + i, column: x, width: inner, role: .warning)
        }
    }
}

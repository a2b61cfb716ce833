import FobStore
import FobViewModels
import FoundationEssentials

/// Sizes and texts the main screen is laid out with at any terminal size,
/// 80×24 first: the list's columns, the status line's rows, the key legend.
enum Layout {
    /// The list's columns, in cells (0 for a column not shown).
    struct ListColumns: Equatable {
        var service: Int, account: Int, oneTimeCode: Int, kind: Int, expiry: Int
        /// The label column (0 when not shown).
        var label = 0
    }

    /// From this many screen columns the list has a label column (imports
    /// put folders and tags there), when some item has a label.
    static let labelColumns = 120
    /// The widest label column, in cells; a longer label is cut.
    static let labelWidth = 20

    /// The list pane's width on a screen `columns` wide, the same beside the
    /// preview and beside the editor (which take the rest), so that opening
    /// the editor never moves the list's columns: 11/20 (44 of 80, 66 of
    /// 120), which leaves the editor room for its access rows at 80.
    static func listWidth(columns: Int) -> Int {
        max(34, columns * 11 / 20)
    }

    /// The 2FA mark of an item with a one-time seed.
    static let oneTimeMark = "2fa"
    /// The expiry column's width: `in 52m`, `!2h ago`, `*in 4m` (``ItemPreview/listExpiry(_:now:)``).
    static let expiryWidth = 8

    /// The columns for a list `inner` cells wide whose items need `needs`:
    /// every column shown for one item is shown for all, whatever the
    /// filter; service and account get what they need when it fits, and
    /// share what is left when not (the service first).
    /// - Parameter labels: whether the screen is wide enough for a label
    ///   column (``labelColumns``); it shows only when the names keep 30 cells.
    static func listColumns(_ needs: ListColumnNeeds, inner: Int, labels: Bool = false) -> ListColumns {
        var columns = ListColumns(
            service: 0, account: 0, oneTimeCode: needs.hasOneTimeCode ? oneTimeMark.count : 0, kind: needs.kind,
            expiry: needs.hasExpiry ? expiryWidth : 0, label: labels ? min(needs.label, labelWidth) : 0)
        func names() -> Int {
            // The pointer and a space before the names, a blank cell before the border.
            inner - 3
                - [columns.oneTimeCode, columns.kind, columns.expiry, columns.label].filter { $0 > 0 }
                .reduce(0) { $0 + $1 + 1 }
        }
        if names() < 30 { columns.label = 0 }
        // A very narrow list gives up the kind, then the 2FA mark, before the names.
        if names() < 16 { columns.kind = 0 }
        if names() < 16 { columns.oneTimeCode = 0 }
        let room = max(2, names())
        let service = max(needs.service, 1)
        let account = needs.account
        if service + 1 + account <= room {
            columns.service = service
        } else {
            // The split that cuts the fewest names: every row aligned on it.
            columns.service = min(service, needs.serviceColumn(room: room))
        }
        columns.account = max(0, room - columns.service - 1)
        return columns
    }

    /// One row's service and account widths, `needs` cells wide, in
    /// `columns` (the service column, the account column with the cells its
    /// row's missing marks leave): a name longer than its column takes the
    /// blank cells the other name leaves on its row, the other name moving
    /// no further than it must; only when both are too long is either cut.
    static func rowNames(needs: (service: Int, account: Int), columns: (service: Int, account: Int))
        -> (service: Int, account: Int)
    {
        let total = columns.service + 1 + columns.account
        var service = columns.service
        if needs.service > columns.service, needs.account < columns.account {
            service = min(needs.service, total - 1 - needs.account)
        } else if needs.account > columns.account, needs.service < columns.service {
            service = max(needs.service, total - 1 - needs.account)
        }
        return (service, max(0, total - 1 - service))
    }

    /// The cells of the 2FA mark and expiry columns with their separators
    /// (the block between the names and the kind).
    static func markBlockWidth(_ columns: ListColumns) -> Int {
        (columns.oneTimeCode > 0 ? columns.oneTimeCode + 1 : 0) + (columns.expiry > 0 ? columns.expiry + 1 : 0)
    }

    /// The status line's rows for `message` on a screen `columns` wide:
    /// its tone's symbol, then the text, wrapped onto a second row when
    /// longer than one; beyond two rows the middle is dropped (messages name
    /// their item first, so the name stays, and end with what happened or
    /// why). Always at least one row.
    static func statusRows(_ message: StatusLine, columns: Int, unicode: Bool) -> [String] {
        guard !message.isEmpty else { return [""] }
        let text = "\(message.tone.symbol(unicode: unicode)) \(message.text)"
        let width = max(1, columns - 2)
        guard DisplayWidth.cells(of: text) > width else { return [text] }
        let lines = wrapCells(text, width: width)
        if lines.count <= 2 { return lines }
        // Too long for two rows: the first (which names the item) stays
        // whole, the second shows the end (the outcome or its cause), the
        // middle gives way to `…`.
        var tail = Substring(lines[1...].joined(separator: " "))
        while DisplayWidth.cells(of: String(tail)) > width - 1 { tail = tail.dropFirst() }
        return [lines[0], "…" + tail]
    }

    /// Words of `text` in lines of at most `width` cells, line breaks kept.
    /// A word longer than a line (a host name, an address) is split after
    /// the last `.`, `-`, `/`, `@`, `_`, `:` or `,` that fits, and only
    /// where it has none cut at the line's end.
    static func wrapCells(_ text: String, width: Int) -> [String] {
        var out: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            for line in Renderer.wrap(String(paragraph), width: width) {
                var rest = Substring(line)
                while DisplayWidth.cells(of: String(rest)) > width {
                    let end = breakIndex(in: rest, width: width)
                    out.append(String(rest[..<end]))
                    rest = rest[end...]
                }
                out.append(String(rest))
            }
        }
        return out
    }

    /// Characters a long name may be split after.
    private static let breakAfter: Set<Character> = [".", "-", "/", "@", "_", ":", ","]

    /// Where to split `text` (wider than `width` cells): after the last
    /// break character within the first `width` cells, else at `width`
    /// cells (at least one character).
    private static func breakIndex(in text: Substring, width: Int) -> Substring.Index {
        var used = 0
        var end = text.startIndex
        var lastBreak: Substring.Index?
        while end < text.endIndex {
            let w = DisplayWidth.cells(of: text[end]) ?? 1
            if used + w > width { break }
            used += w
            let next = text.index(after: end)
            if breakAfter.contains(text[end]), next < text.endIndex { lastBreak = next }
            end = next
        }
        if let lastBreak { return lastBreak }
        return end == text.startIndex ? text.index(after: end) : end
    }

    /// The legend for `entries` in `width` cells: two spaces apart; when
    /// they do not fit, movement hints go first, then the others from the
    /// last, never the help (`F1 help`) nor a quit or close hint.
    static func fitLegend(_ entries: [String], width: Int) -> String {
        var kept = entries
        func length() -> Int { kept.map { DisplayWidth.cells(of: $0) }.reduce(0, +) + 2 * max(0, kept.count - 1) }
        func pinned(_ entry: String) -> Bool {
            entry.hasPrefix("? ") || entry.hasPrefix("F1 ") || entry.hasPrefix("F3 ") || entry.contains("quit")
                || entry.contains("close")
                || entry == "Ctrl-S save"
        }
        while length() > width {
            if let move = kept.lastIndex(where: { $0.hasSuffix(" move") }) {
                kept.remove(at: move)
            } else if let last = kept.lastIndex(where: { !pinned($0) }) {
                kept.remove(at: last)
            } else {
                break
            }
        }
        return kept.joined(separator: "  ")
    }

    /// The header's lock state: `unlocked · locks 20:45` (`unlocked` when
    /// the idle lock is off), `locked`, or `no vault yet`.
    static func lockState(_ app: AppModel) -> String {
        if case .createVault = app.screen { return "no vault yet" }
        guard case .main = app.screen else { return "locked" }
        guard let deadline = app.idleLockDeadline else { return "unlocked" }
        // The last minute counts down, so that a lock never comes as a surprise.
        let left = deadline.timeIntervalSince(app.now)
        if left <= 60 { return "unlocked · locks in \(max(0, Int(left.rounded(.up)))) s" }
        return "unlocked · locks \(ItemPreview.localTime(deadline, now: app.now))"
    }
}

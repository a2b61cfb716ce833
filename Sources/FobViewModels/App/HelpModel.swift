/// The help overlay (F1): which page shows and a search over the help's
/// text, as `less` and `man` search it. `/` opens a search field; Enter
/// shows the first page holding a match (letter case ignored); `n` and `N`
/// step to the next and previous match across pages, round the ends; Esc
/// ends the search, and a second Esc closes the help. Tab and Shift-Tab
/// jump to the first page of the next and previous section.
///
/// The help's text is laid out by the front end, in pages that depend on
/// the terminal's size: it hands them over with ``layOut(_:)`` before a key
/// reaches the help, and the search runs over them.
public final class HelpModel {
    /// One match of the search: a line of a page, both counted from 0.
    public struct Match: Sendable, Equatable {
        /// The page holding the match.
        public let page: Int
        /// The line of that page.
        public let line: Int
    }

    /// How a line of the help stands to the search in effect.
    public enum LineMatch: Sendable, Equatable {
        /// The line holds the current match (the last step went to it).
        case current
        /// The line holds one of the other matches.
        case other
    }

    /// Which page shows, counted from 0 when the help opens (a front end
    /// shows its last page for any larger number).
    public private(set) var page = 0
    /// The search field's text while it is open (after `/`), `nil` when closed.
    public private(set) var field: String?
    /// The search in effect (its matches are marked), empty when none.
    public private(set) var query = ""
    /// Every line holding ``query``, in reading order.
    public private(set) var matches: [Match] = []
    /// Which of ``matches`` is the current one (the last `n`, `N` or Enter went to).
    public private(set) var current: Int?
    /// The text of the last search when it found nothing ("no match for …"), else `nil`.
    public private(set) var missed: String?
    /// The help's text as last laid out: pages of lines.
    private var pages: [[String]] = []
    /// The first page of each section of the help as last laid out, in order.
    public private(set) var sectionStarts: [Int] = []

    /// A help on its first page, with no search.
    public init() {}

    /// The match the last step went to, if any.
    public var currentMatch: Match? { current.map { matches[$0] } }

    /// Whether line `line` of page `page` (both from 0) holds a match of
    /// the search in effect, and whether it is the current one; `nil` when
    /// it holds none (or no search is in effect).
    public func match(page: Int, line: Int) -> LineMatch? {
        let match = Match(page: page, line: line)
        if match == currentMatch { return .current }
        return matches.contains(match) ? .other : nil
    }

    /// How many pages the help takes as last laid out (0 before the first layout).
    public var pageCount: Int { pages.count }

    /// Whether a search is in effect or its "no match" shows: Esc then ends
    /// the search instead of closing the help.
    public var searching: Bool { !query.isEmpty || missed != nil }

    /// The help's text as the screen lays it out, `pages` of lines: a
    /// search runs over it; `sections` are the first page of each of its
    /// sections (Tab goes from one to the next; none: each page is one). A
    /// new layout (the terminal was resized) finds the search's matches
    /// again and shows the page of the current one.
    public func layOut(_ pages: [[String]], sections: [Int] = []) {
        sectionStarts = sections
        guard pages != self.pages else { return }
        let line = currentMatch.map { self.pages[$0.page][$0.line] }
        self.pages = pages
        if !query.isEmpty {
            matches = Self.find(query, in: pages)
            current = matches.firstIndex { pages[$0.page][$0.line] == line } ?? (matches.isEmpty ? nil : 0)
            if let match = currentMatch { page = match.page }
        }
        page = min(page, max(0, pages.count - 1))
    }

    /// Back to the first page with no search (the help opens).
    func reset() {
        page = 0
        field = nil
        endSearch()
    }

    /// An action while the help shows.
    /// - Returns: whether the help stays open.
    func handle(_ action: Action) -> Bool {
        if let text = field { return edit(text, action) }
        switch action {
        case .startFilter:
            field = ""
            missed = nil
        case .moveSelection(let step):
            // A help in pages turns them (the key map sends these only then).
            page = max(0, page + (step > 0 ? 1 : -1))
            if !pages.isEmpty { page = min(page, pages.count - 1) }
        case .nextMatch(let step):
            go(by: step)
        case .focusNext:
            jumpSection(by: 1)
        case .focusPrevious:
            jumpSection(by: -1)
        case .cancel:
            // Esc ends the search first, then closes the help.
            guard searching else { return false }
            endSearch()
        default:
            // q and Esc close the help like any other key: they never quit.
            return false
        }
        return true
    }

    /// A key while the search field is open: typing, Backspace, Ctrl-U,
    /// Enter to search, Esc to leave the search; other keys do nothing.
    private func edit(_ text: String, _ action: Action) -> Bool {
        switch action {
        case .insert(let typed):
            // Text only: no line break, tab or other control character.
            field =
                text + typed.filter { c in !c.unicodeScalars.contains { $0.properties.generalCategory == .control } }
        case .deleteBackward:
            // Backspace on an empty field closes it, as in less.
            field = text.isEmpty ? nil : String(text.dropLast())
        case .clearField:
            field = ""
        case .submit:
            field = nil
            search(text)
        case .cancel:
            field = nil
            endSearch()
        default:
            break
        }
        return true
    }

    /// Runs a search for `text`: the first match in the help becomes the
    /// current one and its page shows; an empty `text` steps to the next
    /// match of the search in effect.
    private func search(_ text: String) {
        guard !text.isEmpty else {
            go(by: 1)
            return
        }
        let found = Self.find(text, in: pages)
        guard let first = found.first else {
            endSearch()
            missed = text
            return
        }
        query = text
        matches = found
        current = 0
        page = first.page
    }

    /// Shows the first page of the section after the one shown (before it
    /// when `step` is negative), round the ends; Shift-Tab on a later page
    /// of a section goes back to its first.
    private func jumpSection(by step: Int) {
        let starts = sectionStarts.isEmpty ? Array(pages.indices) : sectionStarts
        guard !starts.isEmpty else { return }
        let at = starts.lastIndex { $0 <= page } ?? 0
        if step < 0 && starts[at] < page {
            page = starts[at]
            return
        }
        page = starts[((at + (step < 0 ? -1 : 1)) % starts.count + starts.count) % starts.count]
    }

    /// Steps `step` matches on (back when negative), round the ends.
    private func go(by step: Int) {
        guard let at = current, !matches.isEmpty else { return }
        let next = ((at + (step < 0 ? -1 : 1)) % matches.count + matches.count) % matches.count
        current = next
        page = matches[next].page
    }

    private func endSearch() {
        query = ""
        matches = []
        current = nil
        missed = nil
    }

    /// Every line of `pages` holding `query`, in reading order.
    static func find(_ query: String, in pages: [[String]]) -> [Match] {
        var out: [Match] = []
        for (p, lines) in pages.enumerated() {
            for (l, line) in lines.enumerated() where !ranges(of: query, in: line).isEmpty {
                out.append(Match(page: p, line: l))
            }
        }
        return out
    }

    /// Where `query` occurs in `line`, letter case ignored: ranges of
    /// character offsets, not overlapping, left to right (none for an empty query).
    public static func ranges(of query: String, in line: String) -> [Range<Int>] {
        let needle = query.map { $0.lowercased() }
        let hay = line.map { $0.lowercased() }
        guard !needle.isEmpty, needle.count <= hay.count else { return [] }
        var out: [Range<Int>] = []
        var i = 0
        while i + needle.count <= hay.count {
            if Array(hay[i..<i + needle.count]) == needle {
                out.append(i..<i + needle.count)
                i += needle.count
            } else {
                i += 1
            }
        }
        return out
    }
}

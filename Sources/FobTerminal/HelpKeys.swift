import FobViewModels

/// The help overlay's keys, as `less` and `man` readers expect them: `/`
/// searches, `n` and `N` step through the matches, Space and PgUp turn the
/// pages, Tab and Shift-Tab jump between its sections, Esc ends the search and then closes the help; any other key
/// closes it (q too: it never quits Fob). In the search field typing goes
/// to the search; Enter runs it, Esc leaves it.
enum HelpKeys {
    /// The rows of ``KeyBindings/table`` for ``KeyContext/help`` and ``KeyContext/helpSearch``.
    static let table: [KeyBinding] = [
        KeyBinding([.character("/")], in: [.help], .startFilter, legend: "/ search"),
        KeyBinding(.these([.character("n"), .character("N")]), in: [.help], legend: .computed(matchLegend)) {
            key, situation in
            // Without a search n and N are keys like any other: they close the help.
            guard !situation.app.help.query.isEmpty else { return .dismiss }
            return .nextMatch(key == .character("N") ? -1 : 1)
        },
        // The help's sections, one or more pages each: Tab and Shift-Tab go to the next and previous one.
        KeyBinding([.tab], in: [.help], .focusNext),
        KeyBinding([.backTab], in: [.help], .focusPrevious),
        // A help in pages names these keys in its own legend (``Renderer/helpLegend(_:rows:columns:)``).
        KeyBinding(.these([.character(" "), .pageDown, .down, .pageUp, .up]), in: [.help]) { key, situation in
            // A help taller than the screen comes in pages; past the last one, Space closes it.
            guard situation.helpPages > 1 else { return .dismiss }
            if [.pageUp, .up].contains(key) { return .moveSelection(-1) }
            return situation.app.helpPage + 1 < situation.helpPages ? .moveSelection(1) : .dismiss
        },
        // Esc ends a search, then closes the help, as any other key does.
        KeyBinding(.any, in: [.help], legend: .computed(escapeLegend)) { key, _ in key == .escape ? .cancel : .dismiss
        },
        KeyBinding(.text, in: [.helpSearch], legend: .text("type a word")) { key, _ in
            switch key {
            case .character(let c): return .insert(String(c))
            case .paste(let text): return .insert(text)
            default: return .insert("")
            }
        },
        KeyBinding([.enter], in: [.helpSearch], .submit, legend: "Enter find"),
        KeyBinding([.backspace], in: [.helpSearch], .deleteBackward),
        KeyBinding([.control("u")], in: [.helpSearch], .clearField),
        KeyBinding([.escape], in: [.helpSearch], .cancel, legend: "Esc cancel"),
    ]

    /// n and N's legend while a search is in effect, else nothing.
    @Sendable private static func matchLegend(_ app: AppModel) -> String {
        app.help.query.isEmpty ? "" : "n/N next/previous match"
    }

    /// Esc's legend, with the other keys': Esc ends the search first, then closes the help.
    @Sendable private static func escapeLegend(_ app: AppModel) -> String {
        guard app.help.searching else { return "Esc or any other key closes" }
        return app.help.query.isEmpty ? "Esc clear, other keys close" : "Esc end search, other keys close"
    }
}

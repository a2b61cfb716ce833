import FobViewModels

/// The help overlay's text (`?`): every key of the terminal UI in sections
/// (list, find, preview, editor, generator, dialogs, help), the section of
/// what has focus first. The key table of docs/tui.md says the same.
public enum HelpSections {
    /// One section: a title and its keys.
    public struct Section: Sendable {
        /// The title, such as `List`.
        public let title: String
        /// Where the section comes first (``KeyContext``s it describes).
        public let contexts: [KeyContext]
        /// Keys as the help names them, and what they do.
        public let lines: [(keys: String, text: String)]
    }

    /// Every section in their usual order.
    public static let all: [Section] = [
        Section(
            title: "List", contexts: [.list],
            lines: [
                ("Up/Down, j/k", "move the selection; the preview follows"),
                ("PgUp/PgDn", "move a page"),
                ("Home/End", "first / last item"),
                ("/", "find: type words (Enter keeps, Esc clears)"),
                ("Enter, e", "open the highlighted item in the editor"),
                ("n", "new item in the editor"),
                ("d", "delete the highlighted item at once; z undoes (10 s)"),
                ("z", "undo the last delete, or a Save that replaced a password (10 s)"),
                ("V", "settle a sync conflict (! before the name): keep this vault's version or the other"),
                ("l", "lock the vault for every process, as fob lock"),
                ("W", "logout: review the tokens it deletes, then delete and lock"),
                ("m", "the last 20 messages"),
                ("Tab, Shift-Tab", "into the editor's fields"),
                ("Alt-G", "password generator settings"),
                ("?, F1", "this help"),
                ("q", "quit"),
            ]),
        Section(
            title: "Find", contexts: [.filter],
            lines: [
                (
                    "typing",
                    "words, all required, over service, user ID, label, URL, kind; "
                        + "letters in order match (ghub finds github); best match first"
                ),
                ("Up/Down, PgUp/PgDn", "move in the matches"),
                ("Left/Right, Ctrl-B/F", "move the cursor"),
                ("Home/End, Ctrl-A/E", "start / end of the text"),
                ("Backspace, Delete", "delete a character (Ctrl-D deletes forward)"),
                ("Ctrl-U", "clear the text"),
                ("Enter", "keep the matches, back to the list"),
                ("Esc", "clear the text, back to the list"),
            ]),
        Section(
            title: "Preview", contexts: [.list, .filter],
            lines: [
                ("c", "copy the secret (the clipboard clears itself)"),
                ("u", "copy the user ID"),
                ("o", "copy the current one-time code"),
                ("r", "refresh an OAuth item's access token"),
                ("Ctrl-R", "reveal or hide the secret and hidden fields"),
                (
                    "marks",
                    "2fa: has a one-time code; !: expired (by the kind) or a sync conflict (before the name); "
                        + "*: expires within 5 minutes"
                ),
            ]),
        Section(
            title: "Editor", contexts: [.field, .button, .choice, .generatorRow],
            lines: [
                ("Tab, Shift-Tab", "next / previous field or button (also Down/Up)"),
                ("Enter", "next field; press the focused button; on Notes a new line"),
                ("Space", "press the focused button"),
                ("Left/Right, Ctrl-B/F", "move the cursor"),
                ("Home/End, Ctrl-A/E", "start / end of the field"),
                ("Backspace, Delete", "delete a character (Ctrl-D deletes forward)"),
                ("Ctrl-U", "clear the field"),
                ("Ctrl-R", "reveal or hide the typed or retrieved password"),
                ("Ctrl-G", "in Password: fill in a generated password"),
                ("Kind: Space, Left/Right", "choose password, token, oauth or note"),
                ("Field hidden: Space", "switch yes / no"),
                ("Generator: Enter", "open the generator settings"),
                ("Ctrl-S", "save from any field"),
                ("Esc", "back to the list (asks first with unsaved edits)"),
            ]),
        Section(
            title: "Generator", contexts: [.generatorField, .generatorChoice],
            lines: [
                ("Tab, Shift-Tab", "next / previous setting (also Down/Up)"),
                ("Space, Left/Right", "switch the mode or a class"),
                ("Ctrl-G", "a new preview"),
                ("Ctrl-R", "reveal or hide the preview"),
                ("Ctrl-U", "clear the field"),
                ("Enter", "put the preview in Password, keep the settings"),
                ("Esc", "close, changing nothing"),
            ]),
        Section(
            title: "Dialogs", contexts: [.confirm, .logoutReview],
            lines: [
                ("y", "yes; unsaved edits: save; changed elsewhere: write yours over; logout review: delete and lock"),
                ("n, Esc", "no; unsaved edits, changed elsewhere: keep editing"),
                ("d", "unsaved edits: discard them"),
                ("r", "changed elsewhere: reload the item as stored now, dropping your edits"),
                ("Space, Up/Down", "logout review: tick or untick (session tokens come ticked), move"),
            ]),
        Section(
            title: "Help", contexts: [.help],
            lines: [
                ("Space, PgDn", "next page (when the help has pages)"),
                ("PgUp", "previous page"),
                ("q, Esc, any key", "close the help (q does not quit Fob here)"),
            ]),
    ]

    /// The sections with those for `context` first, the others in their order.
    public static func ordered(for context: KeyContext) -> [Section] {
        let first = all.filter { $0.contexts.contains(context) }
        return first + all.filter { !$0.contexts.contains(context) }
    }

    /// The help's lines for `context`: each section's title (with an empty
    /// key), then its keys.
    public static func lines(for context: KeyContext) -> [(key: String, action: String, title: Bool)] {
        var out: [(key: String, action: String, title: Bool)] = []
        for (i, section) in ordered(for: context).enumerated() {
            if i > 0 { out.append(("", "", false)) }
            out.append((section.title, "", true))
            out += section.lines.map { ($0.keys, $0.text, false) }
        }
        return out
    }
}

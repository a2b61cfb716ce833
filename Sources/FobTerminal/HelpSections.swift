import FobViewModels

/// The help overlay's text (F1): every key of the terminal UI in sections
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
                ("typing", "find: every printable key, space too, goes to the query; no letter is a command"),
                ("Enter", "copy the highlighted item's password (the clipboard clears itself)"),
                ("Ctrl-B", "copy the user name (user ID)"),
                ("Ctrl-T", "copy the one-time code (the next one when fewer than 5 s are left)"),
                ("Up/Down, Ctrl-P/N", "move the selection; the preview follows"),
                ("Up", "on an empty query at the top: earlier queries that found what you copied or opened"),
                ("PgUp/PgDn, Home/End", "move a page; first / last item"),
                ("Ctrl-E, Tab", "edit the highlighted item (Shift-Tab: from the last button)"),
                ("Ctrl-O", "new item in the editor"),
                ("Delete", "delete the highlighted item (asks; Ctrl-Y undoes for 10 s)"),
                ("Ctrl-Y", "undo the last delete, rename or Save (10 s; asks if changed since)"),
                ("Ctrl-F", "select the kept query, so that typing replaces it"),
                ("Esc", "clear the query"),
                ("Ctrl-L", "lock the vault for every process, as fob lock (asks)"),
                ("F5", "refresh an OAuth item's access token"),
                ("F6", "settle a sync conflict (! before the name)"),
                ("F8", "logout: review the tokens it deletes; Enter deletes them, clears the clipboard, locks"),
                ("F2", "the last 20 messages"),
                ("F4", "the access log, newest first: typing finds, Enter an entry's details, Esc or F4 closes"),
                ("Alt-G", "password generator settings"),
                ("F1", "this help"),
                ("Ctrl-Q, F10", "quit (says when the agent keeps the vault unlocked; Ctrl-Q again locks too)"),
            ]),
        Section(
            title: "Find", contexts: [.list, .filter],
            lines: [
                (
                    "words",
                    "all required, over service, user ID, label, URL, kind; "
                        + "letters in order match (ghub finds github); best match first"
                ),
                ("is:", "is:expired, is:soon, is:2fa, is:token, is:conflict, is:shared narrow the words"),
                ("Backspace, Left/Right", "edit the query"),
                ("Ctrl-U", "clear the query"),
            ]),
        Section(
            title: "Preview", contexts: [.list, .filter],
            lines: [
                ("Ctrl-R", "reveal or hide the secret and hidden fields"),
                ("Shift-Up, Shift-Down", "scroll the preview a line (a long note)"),
                ("Shift-PgUp, Shift-PgDn", "scroll the preview a page"),
                ("mouse", "a click highlights a row; the wheel moves the highlight, or scrolls the preview under it"),
                (
                    "marks",
                    "2fa: has a one-time code; !: expired (by the kind) or a sync conflict (before the name); "
                        + "*: expires within 5 minutes"
                ),
            ]),
        Section(
            title: "Editor", contexts: [.field, .button, .choice, .generatorRow, .programs],
            lines: [
                ("Tab, Shift-Tab", "next / previous field or button (also Down/Up)"),
                ("Enter", "next field or button; press the focused button; on Notes a new line"),
                ("Notes: Up/Down", "the line above / below; past the first or last line, the field"),
                ("Space", "press the focused button"),
                ("Left/Right, Ctrl-B/F", "move the cursor"),
                ("Home/End, Ctrl-A/E", "start / end; in Notes of the line, then of the note"),
                ("Backspace, Delete", "delete a character (Ctrl-D deletes forward)"),
                ("Ctrl-U", "clear the field"),
                ("Ctrl-R", "reveal or hide the typed or retrieved password"),
                ("Ctrl-G", "in Password: fill in a generated password"),
                ("Kind: Left/Right", "choose password, token, oauth or note (a typed space changes nothing)"),
                ("Field hidden: Left/Right", "switch yes / no"),
                ("Generator: Enter", "open the generator settings"),
                ("Access: Left/Right; Del", "the access rule: mode, Forwarded; on Programs Delete removes one"),
                ("Ctrl-S", "save from any field"),
                ("Ctrl-O", "new item (asks first with unsaved edits)"),
                ("Ctrl-L, F2, F4, F8", "lock, messages, access log, logout, as on the list"),
                ("Ctrl-Y", "undo this item's Save or rename just made; other changes: Ctrl-Y on the list"),
                (
                    "the list's keys",
                    "the others (Ctrl-T, F5 and so on) change nothing here and say they work on the list"
                ),
                ("Esc", "back to the list (asks first with unsaved edits)"),
                (
                    "Ctrl-Q, F10",
                    "quit; unsaved edits are asked about first: Enter save, Ctrl-D discard, Esc keep editing"
                ),
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
            title: "Dialogs", contexts: [.confirm, .logoutReview, .consent],
            lines: [
                ("Enter", "yes: delete, lock, save, write yours over, keep this vault's version, quit"),
                ("Esc", "no; unsaved edits, changed elsewhere: keep editing"),
                ("Ctrl-D", "unsaved edits: discard them; changed elsewhere: reload the item, dropping your edits"),
                ("Ctrl-O", "sync conflict: keep the other device's version"),
                ("Ctrl-R", "sync conflict: reveal or hide both versions' passwords"),
                ("Ctrl-Q", "quit question: lock the vault, then quit"),
                (
                    "Space, Up/Down",
                    "logout review: tick or untick (session tokens come ticked), move (when it lists any)"
                ),
                ("letters", "answer nothing: a typed word never confirms"),
                ("F3; t o m a d, Esc", "a program's request: until lock, once, 15 min, always, deny; Esc later"),
            ]),
        Section(
            title: "Help", contexts: [.help, .helpSearch],
            lines: [
                ("/", "search the help: type a word, Enter shows the first page holding it (any letter case)"),
                ("n, N", "next / previous match, across pages; the current one is marked ▸, others •"),
                ("Esc", "end the search; without a search, close the help"),
                ("Space, PgDn", "next page (on the last one, close the help)"),
                ("PgUp", "previous page"),
                ("Tab, Shift-Tab", "first page of the next / previous section (round the ends); Contents lists them"),
                ("any other key", "close the help (q and Ctrl-Q do not quit Fob here)"),
            ]),
    ]

    /// The help's first line, before its sections (on its Contents page): how to search it.
    public static let intro = (key: "/", text: "search this help (Enter finds, n / N next match)")

    /// The sections with those for `context` first, the others in their order.
    public static func ordered(for context: KeyContext) -> [Section] {
        let first = all.filter { $0.contexts.contains(context) }
        return first + all.filter { !$0.contexts.contains(context) }
    }

    /// The help's lines for `context`: ``intro``, then each section's title
    /// (with an empty action) and its keys, a blank line before each section.
    public static func lines(for context: KeyContext) -> [(key: String, action: String, title: Bool)] {
        var out: [(key: String, action: String, title: Bool)] = [(intro.key, intro.text, false)]
        for section in ordered(for: context) {
            out.append(("", "", false))
            out.append((section.title, "", true))
            out += section.lines.map { ($0.keys, $0.text, false) }
        }
        return out
    }
}

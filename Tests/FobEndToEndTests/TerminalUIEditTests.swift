import FobStore
import FobTestSupport
import Foundation
import Testing

/// The main editing jobs of the terminal UI at 80×24 and 120×40, driven through the
/// built `fob` in tmux, each waiting for the state it checks. The key table
/// of docs/tui.md lists the same keystrokes.
@Suite(.serialized) struct TerminalUIEditTests {
    let vault = TerminalUIVault(prefix: "fob-tui-edit")

    private func makeVault(_ items: [Item]) throws { try vault.make(items) }
    private func open() throws -> Vault { try vault.open() }

    /// Ctrl-O, Service, Tab, User ID, Tab, Ctrl-G, Ctrl-S.
    @Test(arguments: TerminalSize.both) func addALoginWithAGeneratedPassword(size: TerminalSize) throws {
        try makeVault([])
        let tmux = try vault.start(size)
        try tmux.press("C-o")
        try tmux.waitFor("New item")
        try tmux.type("github.com")
        try tmux.press("Tab")
        try tmux.type("ana")
        try tmux.press("Tab")
        try tmux.press("C-g")
        try tmux.waitFor("Generated a password")
        try tmux.waitFor("● New item")
        try tmux.press("C-s")
        try tmux.waitFor("Saved (new item)")
        try tmux.waitFor("Editing github.com / ana")
        let stored = try open().item(service: "github.com", account: "ana")
        #expect(stored.secret?.count == 20)
        // The compact buttons are never cut at 80 columns; wider, the full ones show.
        let buttons = size.width < 100 ? "[Save] [Retrieve] [Delete]" : "[ Save ]  [ Retrieve ]  [ Delete ]"
        #expect(try tmux.capture().contains(buttons))
    }

    /// Ctrl-E on the item, Tab to Label, type, Ctrl-S.
    @Test(arguments: TerminalSize.both) func editALabel(size: TerminalSize) throws {
        try makeVault([item("mail", "ana", "hunter2")])
        let tmux = try vault.start(size)
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        // Service, User ID, Password, Save, Retrieve, Delete, Kind, Label.
        for _ in 0..<7 { try tmux.press("Tab") }
        try tmux.type("Work")
        try tmux.waitFor("● Editing mail / ana")
        try tmux.press("C-s")
        try tmux.waitFor("Saved (mail / ana; password kept)")
        try tmux.waitForAbsence(of: "●")
        let stored = try open().item(service: "mail", account: "ana")
        #expect(stored.label == "Work")
        #expect(stored.secret == SecretBytes(utf8: "hunter2"))
    }

    /// Delete asks, Enter deletes; Ctrl-Y within 10 s puts the item back exactly.
    @Test(arguments: TerminalSize.both) func deleteAndUndo(size: TerminalSize) throws {
        var zoom = item("zoom.us", "", "pw")
        zoom.customFields = [CustomField(name: "pin", text: "1234", isHidden: true)]
        try makeVault([zoom])
        let before = try open().item(service: "zoom.us", account: "")
        let tmux = try vault.start(size)
        try tmux.press("DC")
        try tmux.waitFor("Delete zoom.us?")
        try tmux.press("Enter")
        try tmux.waitFor("Deleted zoom.us")
        try tmux.waitFor("Items 0")
        #expect(throws: KeychainError.itemNotFound(#"service "zoom.us", account """#)) {
            try open().item(service: "zoom.us", account: "")
        }
        try tmux.press("C-y")
        try tmux.waitFor("Restored zoom.us")
        try tmux.waitFor("Items 1")
        // Put back whole, going on from its last revision (a writer that read it before cannot write over it).
        var restored = try open().item(service: "zoom.us", account: "")
        #expect(restored.revision > before.revision)
        restored.revision = before.revision
        #expect(restored == before)
    }

    /// F8, Down, Down, Space, Enter: the review ticks session tokens only.
    @Test(arguments: TerminalSize.both) func logoutWithReview(size: TerminalSize) throws {
        try makeVault([
            item("gh", "ci", jwt(exp: 4_000_000_000), kind: .token),
            oauthItem("idp", "ana", expiresAt: 4_000_000_000),
            item("npm", "publish", "npm_live", kind: .token),
            item("stripe", "live", "sk_live", kind: .token),
            item("mail", "ana", "pw"),
        ])
        let tmux = try vault.start(size)
        try tmux.press("F8")
        try tmux.waitFor("Session tokens (2)")
        try tmux.waitFor("Tokens with no expiry (2)")
        try tmux.waitFor("Delete 2 items, clear the clipboard and lock? Enter deletes")
        // Down to npm (after gh and idp), Space ticks it.
        try tmux.press("Down")
        try tmux.press("Down")
        try tmux.type(" ")
        try tmux.waitFor("Delete 3 items, clear the clipboard and lock? Enter deletes")
        try tmux.press("Enter")
        try tmux.waitFor("Master password")
        try tmux.waitFor("Logged out: deleted 3")
        let left = try open().allItems().map { "\($0.service)/\($0.account)" }
        #expect(left == ["mail/ana", "stripe/live"])
    }

    /// Ctrl-L asks, Enter locks; the master password and Enter unlock again.
    @Test(arguments: TerminalSize.both) func lockAndUnlock(size: TerminalSize) throws {
        try makeVault([item("mail", "ana", "pw")])
        let tmux = try vault.start(size)
        try tmux.press("C-l")
        try tmux.waitFor("Lock the vault for every process")
        try tmux.press("Enter")
        try tmux.waitFor("Master password")
        #expect(try !tmux.capture().contains("mail"))
        try tmux.type(TerminalUIVault.password)
        try tmux.press("Enter")
        try tmux.waitFor("Items 1")
        try tmux.waitFor("mail")
    }

    /// Another process renames the item the editor has open (as `fob mv`):
    /// the highlight and the editor follow it to its new name, and the
    /// status line says it was renamed, not deleted.
    @Test(arguments: TerminalSize.both) func aRenameElsewhereIsFollowed(size: TerminalSize) throws {
        try makeVault([item("aaa", "x", "1"), item("mail", "ana", "hunter2"), item("zzz", "y", "2")])
        let tmux = try vault.start(size)
        try tmux.type("mail")
        // The filtered list (the unfiltered one is "Items 1/3" too, before the keys arrive).
        try tmux.waitFor("Items 1/1 of 3")
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        let other = try open()
        let moved = try other.update(
            matching: ItemQuery(service: "mail", account: "ana"), with: ItemChanges(service: "zzzz", account: "ana"))
        #expect(moved == 1)
        let screen = try tmux.waitFor("Renamed elsewhere: mail / ana is now zzzz / ana")
        #expect(!screen.contains("Deleted elsewhere"))
        try tmux.waitFor("Editing zzzz / ana")
        // The highlight is on the renamed item.
        try tmux.waitFor("▸ zzzz")
    }

    /// A 40-line note at 80×24: the editor's Notes area shows 8 of its
    /// lines, one a row, with the buttons still in view; Down moves the
    /// cursor a line at a time and the area scrolls with it.
    @Test func aLongNoteShowsSeveralLinesAndScrollsWithTheCursor() throws {
        let note = { (n: Int) in n < 10 ? "note 0\(n)" : "note \(n)" }
        var noted = item("mail", "ana", "hunter2")
        noted.notes = (1...40).map(note).joined(separator: "\n")
        try makeVault([noted])
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        // Service, User ID, Password, Save, Retrieve, Delete, Kind, Label, URL, Notes.
        for _ in 0..<9 { try tmux.press("Tab") }
        // The cursor is at the note's end: its last 8 lines show, the lines
        // shown of how many below the label.
        var screen = try tmux.waitFor("33-40/40")
        #expect(Self.noteLines(screen) == (33...40).map(note))
        #expect(screen.contains("[Save] [Retrieve] [Delete]"))
        // Home goes to the start of the cursor's line, then to the note's start.
        try tmux.press("Home")
        try tmux.press("Home")
        screen = try tmux.waitFor("1-8/40")
        #expect(Self.noteLines(screen) == (1...8).map(note))
        for _ in 0..<5 { try tmux.press("Down") }
        // The cursor on line 6, the fourth row: the area scrolled by 2.
        screen = try tmux.waitFor("3-10/40")
        #expect(Self.noteLines(screen) == (3...10).map(note))
        #expect(screen.contains("[Save] [Retrieve] [Delete]"))
    }

    /// The `note NN` texts of `screen`, top to bottom.
    static func noteLines(_ screen: String) -> [String] {
        screen.split(separator: "\n").compactMap { line in
            line.range(of: "note ").map { String(line[$0.lowerBound...].prefix(7)) }
        }
    }

    /// Issue 32's sequence at 80×24: save one item, Ctrl-O, type the next
    /// (service, Tab, user ID, Tab, password), Ctrl-S: two items, the first
    /// unchanged (Ctrl-O did nothing in the editor, so the next item's text
    /// went into the saved one).
    @Test func ctrlOAfterSavingStartsTheNextItem() throws {
        try makeVault([])
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.press("C-o")
        try tmux.waitFor("New item")
        for (field, text) in ["dropbox", "ana", "Dr0p-pass"].enumerated() {
            if field > 0 { try tmux.press("Tab") }
            try tmux.type(text)
        }
        try tmux.press("C-s")
        try tmux.waitFor("Saved (new item)")
        try tmux.waitFor("Editing dropbox / ana")
        let saved = try open().item(service: "dropbox", account: "ana")
        try tmux.press("C-o")
        try tmux.waitForAbsence(of: "Editing dropbox / ana")
        try tmux.waitFor("New item")
        for (field, text) in ["slack", "ana", "Sl4ck-pass"].enumerated() {
            if field > 0 { try tmux.press("Tab") }
            try tmux.type(text)
        }
        try tmux.press("C-s")
        try tmux.waitFor("Editing slack / ana")
        let vault = try open()
        #expect(try vault.item(service: "dropbox", account: "ana") == saved)
        #expect(saved.secret == SecretBytes(utf8: "Dr0p-pass"))
        #expect(try vault.item(service: "slack", account: "ana").secret == SecretBytes(utf8: "Sl4ck-pass"))
        #expect(try vault.allItems().count == 2)
    }

    /// A new user's steps at 80×24: github.com edited, Esc, `zzzq` so that
    /// nothing matches; Ctrl-E says no item is selected, and so does Tab,
    /// which opens nothing: the Service typed next goes to the query, and
    /// Ctrl-S renames nothing (Tab opened github.com, and Save renamed it).
    @Test func tabWithNoMatchOpensNothing() throws {
        try makeVault([
            item("dropbox.com", "ana@example.com"), item("github.com", "ana-dev"),
            item("netflix.com", "family@example.com"), item("zoom.us", "ana"),
        ])
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.press("Down")
        try tmux.waitFor("▸ github.com")
        try tmux.press("C-e")
        try tmux.waitFor("Editing github.com / ana-dev")
        try tmux.press("Escape")
        try tmux.waitForAbsence(of: "Editing github.com / ana-dev")
        try tmux.type("zzzq")
        try tmux.waitForAll("No matches", "Items 0 of 4")
        try tmux.press("C-e")
        try tmux.waitFor("! No item selected")
        try tmux.press("Tab")
        try tmux.type("gitlab.com")
        let screen = try tmux.waitFor("zzzqgitlab.com")
        #expect(!screen.contains("Editing github.com"))
        #expect(screen.contains("! No item selected"))
        try tmux.press("C-s")
        // Esc clears the query: once it is gone, Ctrl-S before it was handled.
        try tmux.press("Escape")
        try tmux.waitForAbsence(of: "zzzq")
        let vault = try open()
        #expect(try vault.item(service: "github.com", account: "ana-dev").service == "github.com")
        #expect(try vault.allItems().count == 4)
    }
}

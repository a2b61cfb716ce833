import FobStore
import FobTestSupport
import Foundation
import Testing

/// The whole item in the terminal UI, driven through the built `fob` in tmux:
/// a token saved from the form goes with `W`, `o` copies the code oathtool
/// computes, Ctrl-G fills the Password field, Save keeps an opened secret.
@Suite(.serialized) struct TerminalUIItemTests {
    static let seed = "otpauth://totp/Example:ana?secret=JBSWY3DPEHPK3PXP&issuer=Example"
    static let password = TerminalUIVault.password

    let vault = TerminalUIVault(prefix: "fob-tui-item")
    var vaultURL: URL { vault.url }

    private func makeVault(_ items: [Item]) throws { try vault.make(items) }
    private func open() throws -> Vault { try vault.open() }

    /// The legend of the item list, kept at every width from 80 columns:
    /// Esc has reached the list.
    static let listLegend = "type to find"

    private func start(clipboard: String = "none") throws -> TmuxSession {
        try vault.start(TerminalSize(width: 120, height: 40), clipboard: clipboard) {
            $0.contains("Items ") && $0.contains(Self.listLegend)
        }
    }

    @Test func aTokenSavedFromTheFormIsRemovedByTheLogout() throws {
        try makeVault([])
        let tmux = try start()
        try tmux.press("C-o")
        try tmux.waitFor("New item")
        try tmux.type("api")
        try tmux.press("Tab")
        try tmux.type("ci")
        try tmux.press("Tab")
        try tmux.type("tok-123")
        // Tab past Password and the three buttons under it to Kind; Right chooses token.
        for _ in 0..<4 { try tmux.press("Tab") }
        try tmux.waitFor("Left/Right change")
        try tmux.press("Right")
        try tmux.waitFor("< token >")
        // Ctrl-S saves from any field.
        try tmux.press("C-s")
        try tmux.waitFor("Saved (new item)")
        #expect(try open().item(service: "api", account: "ci").kind == .token)
        try tmux.press("Escape")
        try tmux.waitFor(Self.listLegend)
        try tmux.press("F8")
        // A token with no expiry is listed but not ticked: Space ticks it.
        try tmux.waitFor("Tokens with no expiry (1)")
        try tmux.type(" ")
        try tmux.waitFor("Delete 1 item, clear the clipboard and lock? Enter deletes")
        try tmux.press("Enter")
        try tmux.waitFor("Master password")
        #expect(throws: KeychainError.itemNotFound(#"service "api", account "ci""#)) {
            try open().item(service: "api", account: "ci")
        }
    }

    @Test func ctrlTCopiesTheCodeOathtoolComputes() throws {
        var seeded = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "pw"))
        seeded.oneTimePassword = SecretBytes(utf8: Self.seed)
        try makeVault([seeded])
        let tmux = try start(clipboard: "tmux")
        let before = try oathtool()
        try tmux.press("C-t")
        try tmux.waitUntil("the copy") { $0.contains("Copied ") && $0.contains("one-time code of mail / ana") }
        let after = try oathtool()
        let next = try oathtool(["--totp", "-b", "JBSWY3DPEHPK3PXP", "--now", "now + 5 seconds"])
        let copied = try tmux.run(["show-buffer", "-b", "fob"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect([before, after, next].contains(copied), "\(copied) vs \(before)/\(after)/\(next)")
        // The editor (Ctrl-E) shows the code masked with the seconds left; Ctrl-R reveals it.
        try tmux.press("C-e")
        try tmux.waitFor("Retrieved Password") // the form, not the preview
        var screen = try tmux.waitFor("s left")
        #expect(screen.contains("One-time code"))
        #expect(!screen.contains(before) || before == after)
        try tmux.press("C-r")
        screen = try tmux.waitUntil(timeout: 10, "the code revealed") { screen in
            let code = (try? oathtool()) ?? ""
            return screen.contains(code + "  ")
        }
        #expect(screen.contains("s left"))
    }

    @Test func ctrlGFillsThePasswordAndEnterTabSaveKeepsTheSecret() throws {
        try makeVault([Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "hunter2"))])
        let tmux = try start()
        // Ctrl-E on the item opens the editor; Ctrl-S without edits writes nothing (issue 13 #2, issue 20).
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        try tmux.press("C-s")
        try tmux.waitFor("No edits to save")
        #expect(try open().item(service: "mail", account: "ana").secret == SecretBytes(utf8: "hunter2"))
        // Ctrl-G in the Password field fills it (20 characters by default).
        try tmux.press("Tab", "Tab")
        try tmux.press("C-g")
        try tmux.waitFor("Generated a password (20")
        let screen = try tmux.waitFor("characters, 130.9 bits);") // the entropy, as the dialog says it
        #expect(screen.contains(String(repeating: "•", count: 20)))
        try tmux.press("C-s")
        try tmux.waitFor("Saved (replaced the password")
        let stored = try #require(try open().item(service: "mail", account: "ana").secret)
        #expect(stored.count == 20)
        #expect(stored != SecretBytes(utf8: "hunter2"))
        // Ctrl-G in Service (after Ctrl-E) fills nothing and says where it works.
        try tmux.press("Escape")
        try tmux.waitFor(Self.listLegend)
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        try tmux.press("C-g")
        try tmux.waitFor("Ctrl-G fills the Password")
        try tmux.press("C-s")
        try tmux.waitFor("No edits to save")
        #expect(try open().item(service: "mail", account: "ana").secret == stored)
    }

    /// The stored secret of `mail`/`ana` as `fob get` prints it (without its newline).
    private func fobGet() throws -> String {
        let result = try FobProcess.run(
            ["--no-agent", "--vault", vaultURL.path, "--password-file", "-", "get", "mail", "ana"],
            input: Self.password + "\n")
        #expect(result.status == 0)
        var text = result.stdoutText
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    @Test func theGeneratorDialogSetsDigitsOnlyThenWordsAndSaveStoresWhatItMade() throws {
        try makeVault([Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "hunter2"))])
        let tmux = try start()
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        // Alt-G opens the dialog on the settings in use: 20 characters of all four classes.
        try tmux.press("M-g")
        // The dialog with its rows drawn, not only its title.
        var screen = try tmux.waitForAll("Password generator", "130.9 bits", String(repeating: "•", count: 20))
        #expect(screen.contains("130.9 bits"))
        #expect(screen.contains(String(repeating: "•", count: 20)))
        // Length 32, then lower, upper and symbols off: digits only.
        try tmux.press("Tab")
        try tmux.press("C-u")
        try tmux.type("32")
        try tmux.press("Tab")
        try tmux.type(" ")
        try tmux.press("Tab")
        try tmux.type(" ")
        try tmux.press("Tab", "Tab")
        try tmux.type(" ")
        try tmux.waitFor("106.3 bits")
        try tmux.press("Enter")
        try tmux.waitFor("characters, 106.3 bits);") // the Message line wraps
        screen = try tmux.waitUntil("the dialog closed and the Generator row updated") {
            $0.contains("32 characters · 0-9") && !$0.contains("Password generator")
        }
        #expect(!screen.contains("Password generator"))
        // Ctrl-S saves (focus is on Password).
        try tmux.press("C-s")
        try tmux.waitFor("Saved (replaced the password")
        let digits = try fobGet()
        #expect(digits.count == 32 && digits.allSatisfy { "0123456789".contains($0) }, "\(digits.count) characters")
        // Enter on the Generator row opens it again; Space makes words; 6 of them.
        try tmux.press("Escape")
        try tmux.waitFor(Self.listLegend)
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        // User ID, Password, Save, Retrieve, Delete, Kind, Label, URL, Notes, One-time seed, Generator.
        for _ in 0..<11 { try tmux.press("Tab") }
        try tmux.waitFor("Enter/Ctrl-G settings")
        try tmux.press("Enter")
        try tmux.waitFor("Password generator")
        try tmux.type(" ")
        try tmux.waitFor("Separator")
        try tmux.press("Tab")
        try tmux.press("C-u")
        try tmux.type("6")
        try tmux.waitFor("77.5 bits")
        try tmux.press("Enter")
        try tmux.waitFor("words, 77.5 bits);")
        // Esc from the dialog changes nothing.
        try tmux.press("M-g")
        try tmux.waitFor("Password generator")
        try tmux.press("Escape")
        try tmux.waitFor("Generator closed; nothing")
        try tmux.press("C-s")
        try tmux.waitFor("Saved (replaced the password")
        let words = try fobGet().split(separator: " ")
        #expect(words.count == 6)
        #expect(words.allSatisfy { $0.allSatisfy { $0 == "-" || ("a"..."z").contains($0) } })
        // Ctrl-G in Password now makes six words too.
        try tmux.press("C-g")
        try tmux.waitFor("Generated a password (6")
        try tmux.waitFor("words, 77.5 bits);")
    }
}

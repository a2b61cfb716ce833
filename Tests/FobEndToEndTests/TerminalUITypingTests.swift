import FobStore
import FobTestSupport
import FobTokens
import Foundation
import Testing

/// Typing on the list searches and nothing else (issue 32): words, a master
/// password typed blind, letters in a dialog change nothing in the vault and
/// never lock it. Driven through the built `fob` in tmux at 80×24.
@Suite(.serialized) struct TerminalUITypingTests {
    let vault = TerminalUIVault(prefix: "fob-tui-typing")

    /// 56 items of every kind, a one-time seed and custom fields among them.
    private func makeVault() throws {
        var items = (1...50).map { item("site\($0).example.org", "user\($0)", "pw-\($0)") }
        var github = item("github.com", "ana", "gh-pass", label: "Work")
        github.oneTimePassword = SecretBytes(utf8: "otpauth://totp/GitHub:ana?secret=JBSWY3DPEHPK3PXP")
        github.customFields = [CustomField(name: "pin", text: "1234", isHidden: true)]
        items.append(github)
        items.append(item("dropbox.com", "ana", "db-pass"))
        items.append(item("slack.com", "ana", "sl-pass"))
        items.append(item("netflix.com", "ana", "nf-pass"))
        items.append(item("api.example.com", "ci", jwt(exp: 4_000_000_000), kind: .token))
        items.append(item("notes", "", "a note", kind: .note))
        try vault.make(items)
    }

    /// Every item with its secret and attributes, as another process reads them.
    private func snapshot() throws -> [Item] { try vault.open().allItemsWithSecrets() }

    /// `fob ls --json` on the vault, without the agent.
    private func listing() throws -> String {
        let result = try FobProcess.run(
            ["--no-agent", "--vault", vault.url.path, "--password-file", "-", "ls", "--json"],
            input: TerminalUIVault.password + "\n")
        #expect(result.status == 0)
        return result.stdoutText
    }

    /// Types `text` on the list, waits until the screen shows `marker`
    /// (the query's end), then clears the query with Esc.
    private func typeAndClear(_ text: String, marker: String, in tmux: TmuxSession) throws {
        try tmux.type(text)
        try tmux.waitFor(marker)
        try tmux.press("Escape")
        try tmux.waitUntil("the query cleared") { $0.contains("Items ") && !$0.contains(" of 56") }
    }

    /// 1,000 words of the EFF list typed into the list of a 56-item vault
    /// (`dropbox` deleted, `slack` locked and `netflix` opened a new item
    /// when letters were commands): `fob ls --json` and every secret are
    /// what they were, and the vault is still unlocked.
    @Test func aThousandTypedWordsChangeNothing() throws {
        try makeVault()
        let before = try snapshot()
        let listedBefore = try listing()
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        let words = stride(from: 0, to: 7000, by: 7).map { EFFWordlist.words[$0] }
        #expect(words.count == 1000)
        for (index, batch) in stride(from: 0, to: words.count, by: 25).map({ words[$0..<min($0 + 25, words.count)] })
            .enumerated()
        {
            // A unique end the screen shows once every key of the batch was read.
            let marker = "qz\(index)x"
            try typeAndClear(batch.joined(separator: " ") + " " + marker, marker: marker, in: tmux)
        }
        for word in ["dropbox", "slack", "netflix", "W", "q", "l", "d", "y"] {
            try typeAndClear(word + " qzend", marker: "qzend", in: tmux)
        }
        let screen = try tmux.capture()
        #expect(!screen.contains("Master password"), "\(screen)")
        #expect(screen.contains("Items "), "\(screen)")
        #expect(!screen.contains("New item"), "\(screen)")
        #expect(try snapshot() == before)
        #expect(try listing() == listedBefore)
    }

    /// A master password typed blind, with Enter, into a UI already
    /// unlocked: it is a query (Enter copies what it finds, if anything),
    /// never a command; the vault is unchanged and stays unlocked.
    @Test func aMasterPasswordTypedIntoAnUnlockedUIChangesNothing() throws {
        try makeVault()
        let before = try snapshot()
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.type(TerminalUIVault.password)
        try tmux.press("Enter")
        // Nothing matches, or Enter tried to copy what matched: either way no command ran.
        let screen = try tmux.waitUntil("Enter's answer") { $0.contains("No item selected") || $0.contains("Cop") }
        #expect(!screen.contains("Master password"), "\(screen)")
        #expect(!screen.contains("Editing"), "\(screen)")
        #expect(try snapshot() == before)
    }

    /// A master password typed at the list by mistake and cleared is not
    /// kept: Up on the empty query does not bring it back, and after quitting
    /// no file under the home directory or beside the vault holds it.
    @Test func aPasswordTypedAtTheListIsNotKept() throws {
        try makeVault()
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        let typed = "zq-Hunter2-typed"
        try tmux.type(typed)
        try tmux.waitFor(typed)
        try tmux.press("Enter")
        try tmux.waitFor("No item selected")
        try tmux.press("Escape")
        try tmux.waitUntil("the query cleared") { !$0.contains(typed) && $0.contains("Items 1/56") }
        try tmux.press("Up")
        try tmux.type("qzend")
        let screen = try tmux.waitFor("qzend")
        #expect(!screen.contains(typed), "Up recalled it:\n\(screen)")
        try tmux.press("C-q")
        try tmux.waitUntil("fob quit") { !$0.contains("Items ") }
        for root in [tmux.home.url, vault.directory.url] {
            let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard let data = try? Data(contentsOf: file) else { continue }
                #expect(data.range(of: Data(typed.utf8)) == nil, "\(file.path) holds the typed password")
            }
        }
    }

    /// Delete asks; a typed word does not answer (y, n, yes), Esc keeps
    /// the item, Enter deletes it.
    @Test func deleteAsksAndOnlyEnterAnswers() throws {
        try makeVault()
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.type("dropbox")
        try tmux.waitFor("Items 1/1 of 56")
        try tmux.press("DC")
        try tmux.waitFor("Delete dropbox.com / ana?")
        try tmux.type("yes y n")
        #expect(try snapshot().count == 56)
        try tmux.press("Escape")
        try tmux.waitFor("Cancelled")
        #expect(try snapshot().count == 56)
        try tmux.press("DC")
        try tmux.waitFor("Delete dropbox.com / ana?")
        try tmux.press("Enter")
        try tmux.waitFor("Deleted dropbox.com / ana")
        #expect(try snapshot().count == 55)
    }

    /// Enter on item 1, Esc, three rows down, Tab: the editor opens on the
    /// highlighted item (it stayed on item 1, and `X` Ctrl-S renamed it).
    @Test func tabOpensTheEditorOnTheHighlightedItem() throws {
        try makeVault()
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.press("C-e")
        let first = try tmux.waitFor("Editing ")
        try tmux.press("Escape")
        try tmux.waitFor("type to find")
        try tmux.press("Down", "Down", "Down")
        try tmux.waitFor("Items 4/56")
        try tmux.press("Tab")
        let screen = try tmux.waitFor("Editing ")
        let opened = screen.components(separatedBy: "Editing ")[1].prefix(while: { $0 != " " && $0 != "\n" })
        let firstOpened = first.components(separatedBy: "Editing ")[1].prefix(while: { $0 != " " && $0 != "\n" })
        #expect(opened != firstOpened, "\(screen)")
        // The 4th item in the list's order.
        let fourth = try #require(try snapshot().map(\.service).sorted().dropFirst(3).first)
        #expect(String(opened) == fourth, "\(screen)")
    }
}

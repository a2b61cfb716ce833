import FobStore
import FobTestSupport
import Foundation
import Testing

/// Browsing in the terminal UI at 80×24 and 120×40, driven through the
/// built `fob` in tmux: find and copy a password, copy a user ID, copy a
/// one-time code, see a token's expiry (docs/tui.md).
@Suite(.serialized) struct TerminalUIBrowseTests {
    static let sizes = TerminalSize.both.map { (width: $0.width, height: $0.height) }

    let vault = TerminalUIVault(prefix: "fob-tui-browse")

    /// A vault with a few ordinary logins, GitHub (with a one-time seed)
    /// and a token expiring in 52 minutes.
    private func makeVault(tokenExpiry: Date) throws {
        var items = (1...30).map { item("site\($0).example.org", "user\($0)", "pw-\($0)") }
        var github = item("GitHub", "ana@example.com", "gh-S3CRET-pass", label: "Work")
        github.oneTimePassword = SecretBytes(utf8: "otpauth://totp/GitHub:ana?secret=JBSWY3DPEHPK3PXP")
        items.append(github)
        items.append(item("gitlab.com", "bob", "gl-secret"))
        items.append(
            item("api.example.com", "deploy", jwt(exp: Int(tokenExpiry.timeIntervalSince1970)), kind: .token))
        try vault.make(items)
    }

    /// `fob` unlocked in a `width` × `height` pane, copying to tmux's buffer `fob`.
    private func start(width: Int, height: Int) throws -> TmuxSession {
        try vault.start(TerminalSize(width: width, height: height), clipboard: "tmux") { $0.contains("Items 1/33") }
    }

    /// Types `query` on the list (typing searches) and waits for the single match.
    private func find(_ query: String, in tmux: TmuxSession) throws {
        try tmux.type(query)
        try tmux.waitFor("Items 1/1 of 33")
    }

    private func copied(_ tmux: TmuxSession) throws -> String {
        try tmux.run(["show-buffer", "-b", "fob"])
    }

    /// `ghub ana` Enter: the password of GitHub on the clipboard, the status
    /// line naming it: the query and one key.
    @Test func findAndCopyAPassword() throws {
        try makeVault(tokenExpiry: Date().addingTimeInterval(52 * 60))
        for size in Self.sizes {
            let tmux = try start(width: size.width, height: size.height)
            try find("ghub ana", in: tmux)
            let screen = try tmux.waitFor("ana@example.com")
            #expect(!screen.contains("gh-S3CRET-pass"))
            try tmux.press("Enter")
            try tmux.waitFor("Copied password of GitHub / ana@example.com")
            #expect(try copied(tmux) == "gh-S3CRET-pass", "at \(size)")
        }
    }

    /// `gitlab` Ctrl-B: the user ID on the clipboard.
    @Test func copyAUserID() throws {
        try makeVault(tokenExpiry: Date().addingTimeInterval(52 * 60))
        for size in Self.sizes {
            let tmux = try start(width: size.width, height: size.height)
            try find("gitlab", in: tmux)
            try tmux.press("C-b")
            try tmux.waitFor("Copied user ID of gitlab.com / bob")
            #expect(try copied(tmux) == "bob", "at \(size)")
        }
    }

    /// `github`: the preview shows the one-time code in clear with its
    /// seconds left; Ctrl-T copies it (the next one with fewer than 5 s left).
    @Test func copyAOneTimeCode() throws {
        try makeVault(tokenExpiry: Date().addingTimeInterval(52 * 60))
        for size in Self.sizes {
            let tmux = try start(width: size.width, height: size.height)
            try find("github", in: tmux)
            try tmux.waitUntil(timeout: 10, "the code in the preview") { screen in
                let code = (try? oathtool()) ?? "-"
                return screen.contains("\(code) · ") && screen.contains(" s left")
            }
            let before = try oathtool()
            try tmux.press("C-t")
            try tmux.waitUntil("the copy") {
                $0.contains("Copied ") && $0.contains("one-time code of GitHub / ana@example.com")
            }
            let after = try oathtool()
            let next = try oathtool(["--totp", "-b", "JBSWY3DPEHPK3PXP", "--now", "now + 5 seconds"])
            let code = try copied(tmux)
            #expect([before, after, next].contains(code), "\(code) vs \(before)/\(after)/\(next) at \(size)")
        }
    }

    /// `api`: the token's expiry as local time and relative, in the
    /// preview and in the list.
    @Test func seeATokensExpiry() throws {
        let expiry = Date().addingTimeInterval(52 * 60 + 30)
        try makeVault(tokenExpiry: expiry)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm"
        let local = formatter.string(from: expiry)
        for size in Self.sizes {
            let tmux = try start(width: size.width, height: size.height)
            try find("api", in: tmux)
            // An expiry on another day (near midnight) shows its date too and
            // may wrap its relative part onto the next line at 80 columns.
            let screen = try tmux.waitUntil(timeout: 10, "the expiry in the preview") {
                $0.contains("Expires") && $0.contains("\(local) ·") && $0.contains("in 5")
            }
            #expect(screen.contains("in 52m") || screen.contains("in 51m"), "at \(size)")
        }
    }

    /// A 40-line note in the preview at 80×24: Shift-PgDn and Shift-Down
    /// scroll it to its last line, Shift-PgUp back to its first.
    @Test func aLongNoteScrollsInThePreview() throws {
        var note = item("notes.example", "me", "pw")
        note.notes = (1...40).map { "note line \($0)" }.joined(separator: "\n")
        try vault.make([note, item("zzz.example", "bob", "pw")])
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        var screen = try tmux.waitFor("note line 1")
        #expect(!screen.contains("note line 40") && screen.contains("more"), "\(screen)")
        for _ in 0..<3 { try tmux.press("S-NPage") }
        try tmux.waitFor("↑")
        for _ in 0..<40 { try tmux.press("S-Down") }
        screen = try tmux.waitFor("note line 40")
        #expect(!screen.contains("↓"), "\(screen)")
        for _ in 0..<10 { try tmux.press("S-PPage") }
        screen = try tmux.waitForAbsence(of: "↑")
        #expect(screen.contains("note line 1 "), "\(screen)")
    }

    /// The mouse at 80×24 (xterm SGR reports, a click as press and release):
    /// a click highlights the row under it, the wheel over the list moves
    /// the highlight, over the preview it scrolls a long note.
    @Test func aClickSelectsAndTheWheelScrolls() throws {
        var note = item("a-notes.example", "me", "pw")
        note.notes = (1...40).map { "note line \($0)" }.joined(separator: "\n")
        try vault.make([note] + (1...20).map { item("site\($0).example", "user\($0)", "pw") })
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        var screen = try tmux.waitFor("note line 1")
        // Screen row 6 (from 1) is the list's 4th item: site11.example.
        let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[5].contains("site11.example"), "\(screen)")
        try tmux.type("\u{1B}[<0;6;6M\u{1B}[<0;6;6m")
        screen = try tmux.waitFor("▸ site11.example")
        // The wheel down over the list: three rows on.
        try tmux.type("\u{1B}[<65;6;6M")
        screen = try tmux.waitFor("▸ site14.example")
        // Back to the note, then the wheel over the preview scrolls it.
        try tmux.type("\u{1B}[<0;6;3M\u{1B}[<0;6;3m")
        try tmux.waitFor("▸ a-notes.example")
        try tmux.type("\u{1B}[<65;60;8M")
        screen = try tmux.waitFor("↑ 3 more")
        #expect(screen.contains("▸ a-notes.example"), "\(screen)")
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

/// The help searched as in `less` (issue 32: help that fits small
/// terminals, one section per page, searchable), through the built `fob`
/// in tmux at 80×24: F1, `/` and a word on a later page, Enter shows that
/// page; Esc ends the search, a second Esc closes the help.
@Suite(.serialized) struct TerminalUIHelpTests {
    let vault = TerminalUIVault(prefix: "fob-tui-help")

    @Test func searchingTheHelpShowsTheLaterPageOfTheWord() throws {
        try vault.make([item("github.com", "ana", "gh-pass"), item("gitlab.com", "bob", "gl-pass")])
        let tmux = try vault.start(TerminalSize(width: 80, height: 24))
        try tmux.press("F1")
        var screen = try tmux.waitFor("Help: Contents")
        #expect(screen.contains("search this help"), "\(screen)")
        #expect(!screen.contains("Forwarded"), "the word is on a later page:\n\(screen)")
        try tmux.type("/")
        try tmux.waitFor("type a word")
        try tmux.type("forwarded")
        try tmux.waitFor("│ /forwarded")
        try tmux.press("Enter")
        screen = try tmux.waitFor("match 1 of 1")
        #expect(screen.contains("Forwarded"), "\(screen)")
        #expect(!screen.contains("Help: Contents"), "\(screen)")
        #expect(screen.contains("│▸"), "the match's line is marked:\n\(screen)")
        // n with a single match stays on it; Esc ends the search, on the same page.
        try tmux.type("n")
        try tmux.waitFor("match 1 of 1")
        try tmux.press("Escape")
        screen = try tmux.waitUntil("the search ended") { !$0.contains("match 1 of 1") && $0.contains("Forwarded") }
        try tmux.type("/")
        try tmux.waitFor("type a word")
        try tmux.type("zebra")
        try tmux.press("Enter")
        try tmux.waitFor("No match for \u{201C}zebra\u{201D}")
        try tmux.press("Escape")
        try tmux.waitUntil("the no-match line gone") { !$0.contains("No match") && $0.contains("Help") }
        try tmux.press("Escape")
        try tmux.waitUntil("the help closed") { !$0.contains("Help: ") && $0.contains("Items 1/2") }
    }

    /// At 40×12 the help (39 pages) is one section a page or a few, its
    /// title in the box's top border: Tab from the contents goes to the
    /// List's first page, Tab again to Find's, Shift-Tab back to List.
    @Test func tabJumpsBetweenTheHelpsSectionsAtFortyByTwelve() throws {
        try vault.make([item("github.com", "ana", "gh-pass")])
        let tmux = try vault.start(TerminalSize(width: 40, height: 12))
        try tmux.press("F1")
        var screen = try tmux.waitFor("Help: Contents")
        #expect(screen.contains("next section: List,"), "\(screen)")
        try tmux.press("Tab")
        screen = try tmux.waitFor("Help: List")
        #expect(screen.contains("List 1/10 · Tab section · PgDn more"), "\(screen)")
        try tmux.press("PgDn")
        try tmux.waitFor("List 2/10")
        try tmux.press("Tab")
        screen = try tmux.waitFor("Help: Find")
        #expect(screen.contains("Find 1/2"), "\(screen)")
        #expect(!screen.contains("typing"), "no line of List on Find's page:\n\(screen)")
        try tmux.press("BTab")
        try tmux.waitFor("List 1/10")
        try tmux.press("Escape")
        try tmux.waitUntil("the help closed") { !$0.contains("Help: ") && $0.contains("github.com") }
    }
}

import Foundation
import Testing

@testable import FobViewModels

/// The help's search, as `less` and `man` readers expect it (issue 32: "help
/// that fits small terminals, one section per page, searchable"): `/` opens
/// a field, Enter shows the first page holding a match whatever its letter
/// case, n and N step through the matches across pages, a search that finds
/// nothing says so, Esc ends the search and then closes the help.
@Suite struct HelpSearchTests {
    /// Three pages of help text as a front end lays them out.
    static let pages = [
        ["List", "Enter  copy the password", "Ctrl-B  copy the user name"],
        ["Editor", "Kind: Space  choose password, token, oauth or note", "Ctrl-S  save"],
        ["Help", "/  search this help", "Esc  close; the KIND of key"],
    ]

    /// A main screen with the help open over it, laid out in ``pages``.
    private func openHelp() throws -> Harness {
        let h = try Harness.unlocked()
        h.send(.showHelp)
        h.app.help.layOut(Self.pages)
        return h
    }

    /// Opens the search field and types `text`, then Enter.
    private func search(_ text: String, _ h: Harness) {
        h.send(.startFilter, .insert(text), .submit)
    }

    @Test func enterShowsTheFirstPageHoldingAMatchWhateverItsCase() throws {
        let h = try openHelp()
        h.send(.startFilter)
        #expect(h.app.help.field == "")
        h.send(.insert("KiN"), .insert("d"))
        #expect(h.app.help.field == "KiNd")
        #expect(h.app.helpPage == 0, "typing does not move before Enter")
        h.send(.submit)
        #expect(h.app.overlay == .help)
        #expect(h.app.help.field == nil)
        #expect(h.app.help.query == "KiNd")
        #expect(h.app.helpPage == 1)
        #expect(h.app.help.matches == [.init(page: 1, line: 1), .init(page: 2, line: 2)])
        #expect(h.app.help.currentMatch == .init(page: 1, line: 1))
    }

    @Test func nAndCapitalNStepThroughTheMatchesAcrossPagesRoundTheEnds() throws {
        let h = try openHelp()
        search("copy", h)
        // Every match of a page counts: "copy" is twice on the first.
        #expect(h.app.help.matches == [.init(page: 0, line: 1), .init(page: 0, line: 2)])
        search("password", h)
        #expect(h.app.help.matches == [.init(page: 0, line: 1), .init(page: 1, line: 1)])
        #expect(h.app.helpPage == 0)
        h.send(.nextMatch(1))
        #expect(h.app.help.currentMatch == .init(page: 1, line: 1))
        #expect(h.app.helpPage == 1)
        h.send(.nextMatch(1))
        #expect(h.app.help.currentMatch == .init(page: 0, line: 1), "past the last match: the first")
        #expect(h.app.helpPage == 0)
        h.send(.nextMatch(-1))
        #expect(h.app.help.currentMatch == .init(page: 1, line: 1), "before the first: the last")
        #expect(h.app.overlay == .help)
        // An empty search runs the one in effect again: the next match.
        h.send(.startFilter, .submit)
        #expect(h.app.help.query == "password")
        #expect(h.app.help.currentMatch == .init(page: 0, line: 1))
    }

    @Test func aSearchThatFindsNothingSaysSoAndStaysPut() throws {
        let h = try openHelp()
        h.send(.moveSelection(1))
        search("zebra", h)
        #expect(h.app.help.missed == "zebra")
        #expect(h.app.help.query.isEmpty)
        #expect(h.app.help.matches.isEmpty)
        #expect(h.app.helpPage == 1, "the page shown stays")
        #expect(h.app.overlay == .help)
        // The next search clears the "no match".
        search("save", h)
        #expect(h.app.help.missed == nil)
        #expect(h.app.help.currentMatch == .init(page: 1, line: 2))
    }

    @Test func escEndsTheSearchThenClosesTheHelp() throws {
        let h = try openHelp()
        // Esc in the field leaves the search, not the help.
        h.send(.startFilter, .insert("kind"), .cancel)
        #expect(h.app.help.field == nil)
        #expect(h.app.help.query.isEmpty)
        #expect(h.app.overlay == .help)
        search("kind", h)
        #expect(h.app.help.searching)
        h.send(.cancel)
        #expect(h.app.overlay == .help, "the first Esc ends the search")
        #expect(!h.app.help.searching)
        #expect(h.app.help.matches.isEmpty && h.app.help.currentMatch == nil)
        #expect(h.app.helpPage == 1, "on the page it showed")
        h.send(.cancel)
        #expect(h.app.overlay == nil, "the second closes the help")
        #expect(!h.app.shouldQuit)
        // A "no match" ends with Esc too.
        h.send(.showHelp)
        search("zebra", h)
        h.send(.cancel)
        #expect(h.app.overlay == .help && h.app.help.missed == nil)
    }

    @Test func theFieldEditsAndKeepsOnlyText() throws {
        let h = try openHelp()
        h.send(.startFilter, .insert("ab\u{1B}[2~\tc\n"))
        #expect(h.app.help.field == "ab[2~c", "control characters of a paste are dropped")
        h.send(.deleteBackward)
        #expect(h.app.help.field == "ab[2~")
        h.send(.clearField)
        #expect(h.app.help.field == "")
        // Other keys do nothing while the field is open: they neither close the help nor turn pages.
        h.send(.dismiss, .moveSelection(1), .quit)
        #expect(h.app.overlay == .help && h.app.help.field == "" && h.app.helpPage == 0)
        #expect(!h.app.shouldQuit)
        // Backspace on an empty field closes it, as in less.
        h.send(.deleteBackward)
        #expect(h.app.help.field == nil)
        #expect(h.app.overlay == .help)
    }

    @Test func aNewLayoutKeepsTheCurrentMatch() throws {
        let h = try openHelp()
        search("kind", h)
        h.send(.nextMatch(1))
        #expect(h.app.help.currentMatch == .init(page: 2, line: 2))
        // The terminal grew: everything on one page.
        h.app.help.layOut([Self.pages.flatMap { $0 }])
        #expect(h.app.help.matches == [.init(page: 0, line: 4), .init(page: 0, line: 8)])
        #expect(h.app.help.currentMatch == .init(page: 0, line: 8))
        #expect(h.app.helpPage == 0)
    }

    @Test func theHelpOpensAgainWithoutTheSearch() throws {
        let h = try openHelp()
        search("kind", h)
        h.send(.dismiss)
        #expect(h.app.overlay == nil)
        h.send(.showHelp)
        #expect(h.app.helpPage == 0 && h.app.help.query.isEmpty && h.app.help.currentMatch == nil)
        // n without a search changes nothing in the help.
        h.send(.nextMatch(1))
        #expect(h.app.helpPage == 0 && h.app.overlay == .help)
    }

    /// Keys in the help and its search field count as input: reading and
    /// searching the help for minutes does not lock the vault under it.
    @Test func searchingTheHelpKeepsTheIdleLockAway() throws {
        let h = try openHelp()
        for _ in 0..<4 {
            h.clock.advance(by: 200)
            h.send(.startFilter, .insert("k"), .submit)
            h.app.tick()
        }
        #expect(h.app.mainModel != nil, "unlocked after 800 s of searching")
        h.clock.advance(by: 301)
        h.app.tick()
        #expect(h.app.unlockModel != nil, "locked 301 s after the last key")
        #expect(h.app.overlay == nil)
    }

    @Test func matchesIgnoreLetterCaseAndDoNotOverlap() {
        #expect(HelpModel.ranges(of: "aa", in: "AAAa b") == [0..<2, 2..<4])
        #expect(HelpModel.ranges(of: "Ctrl-y", in: "Ctrl-Y undo") == [0..<6])
        #expect(HelpModel.ranges(of: "", in: "abc").isEmpty)
        #expect(HelpModel.ranges(of: "abcd", in: "abc").isEmpty)
    }

    /// Tab and Shift-Tab (``Action/focusNext``, ``Action/focusPrevious``)
    /// go to the first page of the next and previous section, round the
    /// ends; Shift-Tab on a later page of a section goes to its first page.
    @Test func theSectionKeysJumpToTheFirstPageOfASection() throws {
        let h = try Harness.unlocked()
        h.send(.showHelp)
        h.app.help.layOut(Self.pages + [["Help 2", "n  next match"]], sections: [0, 1, 2])
        #expect(h.app.help.sectionStarts == [0, 1, 2])
        h.send(.focusNext)
        #expect(h.app.helpPage == 1)
        h.send(.focusNext)
        #expect(h.app.helpPage == 2)
        h.send(.moveSelection(1))
        #expect(h.app.helpPage == 3)
        h.send(.focusPrevious)
        #expect(h.app.helpPage == 2, "the first page of its own section")
        h.send(.moveSelection(1), .focusNext)
        #expect(h.app.helpPage == 0, "past the last section: the first")
        h.send(.focusPrevious)
        #expect(h.app.helpPage == 2, "before the first: the last section")
        #expect(h.app.overlay == .help)
    }
}

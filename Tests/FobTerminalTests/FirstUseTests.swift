import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Issue 32, a first use of the terminal UI: what the screen says agrees
/// with what the keys do. Each test failed before its fix.
@Suite struct FirstUseTests {
    /// `Creating the vault…` showed under a `The passwords do not match`
    /// left from the try before.
    @Test func creatingTheVaultReplacesAnEarlierMismatch() throws {
        try #require(unicodeLocale)
        let app = makeApp(vault: false)
        app.send(.insert("one"))
        app.send(.focusNext)
        app.send(.insert("two"))
        app.send(.submit)
        #expect(draw(app, rows: 24, columns: 80).text.contains(CreateVaultModel.mismatchMessage))
        var renderer = Renderer(vaultDescription: "~/vault.db")
        renderer.notice = "Creating the vault…"
        let text = renderer.render(app, rows: 24, columns: 80, glyphs: .unicodeSet).text
        #expect(text.contains("Creating the vault…"))
        #expect(!text.contains(CreateVaultModel.mismatchMessage))
    }

    /// The legend said `any key closes the help` on a page whose footer
    /// says `Space next`: before the last page it names Space and Esc.
    @Test func aPagedHelpsLegendSaysWhatSpaceDoes() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.send(.showHelp)
        let pages = Renderer.helpPages(rows: 24, columns: 80, context: .list)
        try #require(pages > 1)
        let first = draw(app, rows: 24, columns: 80)
        #expect(first.line(23).contains("Space next") && first.line(23).contains("Esc closes the help"))
        #expect(!first.line(23).contains("any key"))
        #expect(first.text.contains("Contents · Tab next section"), "\(first.text)")
        for _ in 1..<pages { app.send(.moveSelection(1)) }
        let last = draw(app, rows: 24, columns: 80)
        #expect(last.line(23).contains("other keys close the help"))
        #expect(!last.line(23).contains("Space next"))
    }

    /// F8 with no token or OAuth item opens the review, which says so and
    /// that Enter clears the clipboard and locks.
    @Test func theLogoutReviewWithNothingToDeleteSaysWhatEnterDoes() throws {
        try #require(unicodeLocale)
        let app = makeApp(items: [("github.com", "ana", "s3cret")])
        app.send(.logoutWipe(service: nil))
        let text = draw(app, rows: 24, columns: 80).text
        #expect(text.contains("No token or OAuth items to delete"))
        #expect(text.contains("Nothing to delete: clear the clipboard and lock? Enter locks, Esc"))
        #expect(text.contains("Enter lock  Esc cancel"))
        #expect(!text.contains("n/Esc"))
    }
}

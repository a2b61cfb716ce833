import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// The app model's copy key over the fake clipboard.
@Suite struct AppClipboardTests {
    @Test func copySelectedPutsTheSecretAndReportsTheDelay() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.copySelected)
        #expect(h.clipboard.contents == "pw")
        #expect(h.message == "Copied password of mail / ana · clears in 45 s")
        h.clock.advance(by: 45)
        h.app.tick()
        #expect(h.clipboard.contents == nil)
        #expect(h.message == "Clipboard cleared")
    }

    @Test func copyWithoutAutoClear() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")], clearAfter: 0)
        h.send(.copySelected)
        #expect(h.message == "Copied password of mail / ana")
    }

    @Test func copyFailureAndLeftAloneMessages() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.clipboard.fail(with: .unavailable("none"))
        h.send(.copySelected)
        #expect(h.message == "Copy of the password of mail / ana failed: \(ClipboardError.unavailable("none"))")
        h.clipboard.fail(with: nil)
        h.send(.copySelected)
        h.clipboard.userCopies("mine")
        h.clock.advance(by: 45)
        h.app.tick()
        #expect(h.message == "Clipboard left alone: it holds other text now")
        #expect(h.clipboard.contents == "mine")
    }

    @Test func copyOfAnItemGoneMeanwhileShowsTheError() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.store.externalRemove(ItemKey(service: "mail", account: "ana"))
        h.send(.copySelected)
        #expect(h.message.hasPrefix("item not found"))
        #expect(h.clipboard.calls.isEmpty)
    }

    @Test func noClipboardSaysHowToConfigureOne() throws {
        let clock = TestClock()
        let store = InMemoryStore(password: "pw")
        store.externalPut(item("mail", "ana"))
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(clipboard: NoClipboard(), clock: clock, runner: InlineRunner()), clock: clock
        )
        app.send(.insert("pw"))
        app.send(.submit)
        app.send(.copySelected)
        #expect(app.mainModel?.form.message.text.contains("no clipboard") == true)
    }
}

import FobClipboard
import FobStore
import FobTestSupport
import FobTokens
import FobViewModels
import Foundation
import Testing

/// An app model over a fake store, a fake clipboard and a test clock.
final class Harness {
    let store: InMemoryStore
    let clipboard: FakeClipboard
    let clock: TestClock
    let controller: ClipboardController
    let app: AppModel

    static let password = "correct horse"

    /// - Parameters:
    ///   - vault: whether a vault exists (with ``password``).
    ///   - items: items stored before start.
    init(
        vault: Bool = true, items: [Item] = [], lockAfter: TimeInterval = 300, clearAfter: TimeInterval = 45,
        canReadBack: Bool = true
    ) {
        clock = TestClock()
        let clock = self.clock
        store = InMemoryStore(password: vault ? Harness.password : nil, now: { clock.now })
        for item in items { store.externalPut(item) }
        clipboard = FakeClipboard(canReadBack: canReadBack)
        controller = ClipboardController(
            clipboard: clipboard, clearAfter: clearAfter, clock: clock, runner: InlineRunner())
        app = AppModel(store: store, clipboard: controller, clock: clock, lockAfter: lockAfter)
    }

    /// Types the master password and presses Enter.
    func unlock(_ password: String = Harness.password) {
        app.send(.insert(password))
        app.send(.submit)
    }

    /// A harness already on the main screen.
    static func unlocked(
        items: [Item] = [], lockAfter: TimeInterval = 300, clearAfter: TimeInterval = 45,
        canReadBack: Bool = true
    ) throws -> Harness {
        let h = Harness(items: items, lockAfter: lockAfter, clearAfter: clearAfter, canReadBack: canReadBack)
        h.unlock()
        _ = try #require(h.app.mainModel)
        return h
    }

    var main: MainModel { app.mainModel! }
    var form: HomeFormModel { main.form }
    var list: ItemListModel { main.list }
    var message: String { form.message.text }

    /// Sends each action in order.
    func send(_ actions: Action...) { for a in actions { app.send(a) } }
}

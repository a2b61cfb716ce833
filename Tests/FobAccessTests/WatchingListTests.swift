import FobAccess
import FobAgent
import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// The terminal UI's list hears of an item added through the agent by
/// another client, within 300 ms, from the agent's notifications: the test
/// clock moves less than the polling interval, so polling cannot be what
/// shows it.
@Suite struct WatchingListTests {
    @Test func aListShowsAnItemAddedThroughTheAgentWithin300Milliseconds() throws {
        let v = try TestVault()
        v.vault.lock()
        let agent = try InProcessAgent(vault: v)
        defer { agent.stop() }
        var environment = agent.environment
        environment["FOB_VAULT"] = v.vault.url.path
        let store = ItemAccess(settings: AccessSettings(environment: environment), password: .none("none"))
        store.linkToAgent()
        let clock = TestClock()
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(clipboard: FakeClipboard(), clock: clock, runner: InlineRunner()),
            clock: clock)
        let list = try #require(app.mainModel?.list)
        #expect(list.allRows.isEmpty)
        app.tick() // the first poll happens now, before the add

        // Another client (as `fob add` is) adds through the agent; the time
        // counts from the moment its answer came.
        let other = ItemAccess(settings: AccessSettings(environment: environment), password: .none("none"))
        try other.add(Item(service: "mail", account: "ana", secret: .text("s")))
        let start = Date()
        #expect(other.usesAgent)
        // The UI's tick, every 200 ms in the terminal; here as fast as the test can.
        while list.allRows.isEmpty && Date().timeIntervalSince(start) < 0.3 {
            usleep(10_000)
            clock.advance(0.01)
            app.tick()
        }
        #expect(list.allRows.map(\.key) == [ItemKey(service: "mail", account: "ana")])
        #expect(Date().timeIntervalSince(start) < 0.3)
    }
}

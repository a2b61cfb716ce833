import FobAccess
import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// The terminal UI's list over a real vault file that holds the sync state.
@Suite struct ReservedGroupListTests {
    @Test func theSyncStateIsNotListed() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("vault.db")
        let vault = try Vault.create(at: url, password: .text("master"), kdf: .testing)
        try vault.add(Item(service: "mail", account: "ana", secret: .text("m")))
        try vault.applyImport([
            .add(Item(service: "fob-sync", account: "state", accessGroup: "fob.sync", kind: .note, secret: .text("s")))
        ])
        vault.lock()
        let clock = TestClock()
        let app = AppModel(
            store: VaultStore(url: url, now: { clock.now }),
            clipboard: ClipboardController(clipboard: FakeClipboard(), clock: clock, runner: InlineRunner()),
            clock: clock, lockAfter: 300, kdfOverride: .testing)
        app.send(.insert("master"))
        app.send(.submit)
        let main = try #require(app.mainModel)
        #expect(main.list.rows.map(\.service) == ["mail"])
        app.send(.startFilter)
        app.send(.insert("fob"))
        #expect(main.list.rows.isEmpty)
    }
}

import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobTestSupport
import FobTokens
import FobViewModels
import Foundation
import Testing

/// The live store over a real vault file.
@Suite struct VaultStoreTests {
    private func app(_ store: VaultStore, clock: TestClock, board: FakeClipboard = FakeClipboard()) -> AppModel {
        AppModel(
            store: store, clipboard: ClipboardController(clipboard: board, clock: clock, runner: InlineRunner()),
            clock: clock, lockAfter: 300, kdfOverride: .testing)
    }

    @Test func createUnlockSaveRetrieveDeleteOnARealVault() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("vault.db")
        let clock = TestClock()
        let store = VaultStore(url: url)
        #expect(!store.vaultExists)
        let a = app(store, clock: clock)
        a.send(.insert("master"))
        a.send(.submit)
        a.send(.insert("master"))
        a.send(.submit)
        let main = try #require(a.mainModel)
        #expect(Vault.exists(at: url))
        #expect(try store.vault?.kdfParameters() == .testing)
        a.send(.newItem)
        a.send(.insert("mail"))
        a.send(.focusNext)
        a.send(.insert("ana"))
        a.send(.focusNext)
        a.send(.insert("pw"))
        a.send(.save)
        #expect(main.form.message.text == "Saved (new item)")
        a.send(.retrieve)
        #expect(main.form.retrievedPassword == SecretBytes(utf8: "pw"))
        a.send(.lock)
        #expect(store.isLocked)

        // A second process (a second store) sees the item; a wrong password counts.
        let other = VaultStore(url: url)
        let b = app(other, clock: clock)
        b.send(.insert("nope"))
        b.send(.submit)
        #expect(b.unlockModel?.failedAttempts == 1)
        b.send(.insert("master"))
        b.send(.submit)
        #expect(b.mainModel?.list.rows.map(\.service) == ["mail"])
        b.send(.focus(.service))
        b.send(.insert("mail"))
        b.send(.focus(.userID))
        b.send(.insert("ana"))
        b.send(.delete)
        b.send(.confirm)
        #expect(b.mainModel?.form.message.text == "Deleted mail / ana — Ctrl-Y undoes (10 s)")
    }

    @Test func anotherConnectionsCommitAppearsOnTheNextTick() throws {
        let test = try TestVault()
        let store = VaultStore(url: test.vault.url)
        let clock = TestClock()
        let a = app(store, clock: clock)
        a.send(.insert("correct horse"))
        a.send(.submit)
        let main = try #require(a.mainModel)
        #expect(main.list.rows.isEmpty)
        try test.vault.add(Item(service: "web", account: "x", secret: .text("1")))
        let token = Item(
            service: "api", account: "t", kind: .token,
            secret: .text(jwt(exp: clock.now.timeIntervalSince1970 + 660)))
        try test.vault.add(token)
        clock.advance(by: 0.5)
        a.tick()
        #expect(main.list.rows.map(\.service) == ["api", "web"])
        #expect(main.list.rows[0].expiryText == "expires in 10m")
        // Logout over the real store.
        a.send(.logoutWipe(service: nil))
        a.send(.confirm)
        #expect(a.unlockModel?.message.text == "Logged out: deleted 1 token/OAuth item")
        #expect(try test.vault.allItems().map(\.service) == ["web"])
    }

    @Test func openingSomethingThatIsNotAVaultShowsTheError() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("junk.db")
        try Data("not a vault".utf8).write(to: url)
        let a = app(VaultStore(url: url), clock: TestClock())
        a.send(.insert("x"))
        a.send(.submit)
        #expect(a.unlockModel?.message.text.contains("errSecDecode") == true)
    }
}

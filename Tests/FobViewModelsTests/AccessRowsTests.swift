import FobClipboard
import FobStore
import FobSystem
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// The editor's Access rows: the item's access rule shown in the Keychain's
/// terms, changed with Space, its programs removed with Delete, and written
/// by Save through the store's update as one more attribute.
@Suite struct AccessRowsTests {
    static let git = TrustedProgram(
        path: "/usr/bin/git",
        identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 0))
    static let curl = TrustedProgram(
        path: "/usr/bin/curl",
        identity: ExecutableIdentity(device: 1, inode: 5, size: 6, modifiedNanoseconds: 7, owner: 0))

    private func harness(rule: AccessRule, vaultDefault: AccessRule.Mode = .ask) throws -> Harness {
        var item = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "s3cret"))
        item.accessRule = rule
        let h = try Harness.unlocked(items: [item])
        h.store.accessDefaultMode = vaultDefault
        h.send(.editSelected)
        return h
    }

    private func stored(_ h: Harness) throws -> Item { try h.store.item(ItemKey(service: "mail", account: "ana")) }

    @Test func openingAnItemShowsItsRule() throws {
        let h = try harness(rule: AccessRule(mode: nil, forwarded: .deny, trusted: [Self.git], denied: [Self.curl]))
        #expect(h.form.access.modeText == "default (ask)")
        #expect(h.form.access.forwardedText == "deny")
        #expect(h.form.access.programs == ["trusted /usr/bin/git", "denied /usr/bin/curl"])
        #expect(!h.form.hasUnsavedEdits)
    }

    @Test func spaceStepsTheModeAndSaveWritesItThroughTheUpdate() throws {
        let h = try harness(rule: AccessRule())
        h.send(.focus(.accessMode))
        h.send(.cycleKind(1))
        #expect(h.form.access.modeText == "any")
        h.send(.cycleKind(1), .cycleKind(1))
        #expect(h.form.access.modeText == "deny")
        h.send(.cycleKind(1))
        #expect(h.form.access.modeText == "default (ask)")
        h.send(.cycleKind(-1))
        #expect(h.form.access.modeText == "deny")
        #expect(h.form.hasUnsavedEdits)
        #expect(h.form.editorTitle == "● Editing mail / ana")
        h.clock.advance(by: 90)
        let updates = h.store.calls["update", default: 0]
        h.send(.save)
        #expect(h.store.calls["update", default: 0] == updates + 1)
        let item = try stored(h)
        #expect(item.accessRule == AccessRule(mode: .deny))
        #expect(item.modified == h.clock.now)
        #expect(item.secret == SecretBytes(utf8: "s3cret"))
        #expect(!h.form.hasUnsavedEdits)
    }

    @Test func forwardedStepsAsOthersAskDeny() throws {
        let h = try harness(rule: AccessRule())
        h.send(.focus(.accessForwarded), .cycleKind(1))
        #expect(h.form.access.forwardedText == "ask")
        h.send(.cycleKind(1))
        #expect(h.form.access.forwardedText == "deny")
        h.send(.save)
        #expect(try stored(h).accessRule == AccessRule(forwarded: .deny))
    }

    @Test func deleteRemovesTheSelectedProgramAndSaveWritesTheRest() throws {
        let h = try harness(rule: AccessRule(mode: .ask, trusted: [Self.git], denied: [Self.curl]))
        h.send(.focus(.accessPrograms), .moveSelection(1))
        #expect(h.form.access.selection == 1)
        h.send(.moveSelection(1))
        // Past the last program, the last stop drawn, focus moves on as Tab does: to the list.
        #expect(h.main.focus == .list)
        h.send(.focus(.accessPrograms), .removeProgram)
        #expect(h.form.access.programs == ["trusted /usr/bin/git"])
        #expect(h.message == "Removed denied /usr/bin/curl from the access rule; Ctrl-S saves it")
        h.send(.removeProgram)
        #expect(h.form.access.programs.isEmpty)
        #expect(h.main.focus == .accessForwarded)
        h.send(.save)
        #expect(try stored(h).accessRule == AccessRule(mode: .ask))
    }

    @Test func tabSkipsProgramsWhenTheRuleNamesNone() throws {
        let h = try harness(rule: AccessRule())
        h.send(.focus(.accessForwarded), .focusNext)
        #expect(h.main.focus == .list)
        let g = try harness(rule: AccessRule(trusted: [Self.git]))
        g.send(.focus(.accessForwarded), .focusNext)
        #expect(g.main.focus == .accessPrograms)
    }

    @Test func aRuleChangedElsewhereIsNamedBeforeSaveWrites() throws {
        let h = try harness(rule: AccessRule())
        h.send(.focus(.accessMode), .cycleKind(1))
        var other = try stored(h)
        other.accessRule = AccessRule(mode: .deny)
        h.store.externalPut(other)
        h.send(.save)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.message.contains("access rule"))
        #expect(try stored(h).accessRule == AccessRule(mode: .deny))
    }

    @Test func aNewItemStartsWithTheVaultsDefault() throws {
        let h = try harness(rule: AccessRule(), vaultDefault: .any)
        h.send(.cancel, .newItem)
        #expect(h.form.access.modeText == "default (any)")
        #expect(h.form.access.programs.isEmpty)
    }
}

/// The one-time notice of a vault whose access default is still `any`.
@Suite struct AccessDefaultNoticeTests {
    private func app(_ store: InMemoryStore, _ memory: any NoticeMemory, clock: TestClock) -> AppModel {
        let controller = ClipboardController(
            clipboard: FakeClipboard(), clearAfter: 45, clock: clock, runner: InlineRunner())
        return AppModel(store: store, clipboard: controller, clock: clock, notices: memory)
    }

    @Test func saysItOnceAndRemembers() throws {
        let clock = TestClock()
        let store = InMemoryStore(password: Harness.password, now: { clock.now })
        store.accessDefaultMode = .any
        let memory = SessionNoticeMemory()
        let first = app(store, memory, clock: clock)
        first.send(.insert(Harness.password))
        first.send(.submit)
        #expect(first.mainModel?.form.message == .info(AccessDefaultNotice.text))
        #expect(memory.hasShown(AccessDefaultNotice.name))
        first.send(.lock)
        first.send(.insert(Harness.password))
        first.send(.submit)
        #expect(first.mainModel?.form.message.text != AccessDefaultNotice.text)
        // Another run with the same memory says nothing.
        let second = app(store, memory, clock: clock)
        second.send(.insert(Harness.password))
        second.send(.submit)
        #expect(second.mainModel?.form.message.text != AccessDefaultNotice.text)
    }

    @Test func aVaultThatAsksHearsNothing() throws {
        let clock = TestClock()
        let store = InMemoryStore(password: Harness.password, now: { clock.now })
        store.accessDefaultMode = .ask
        let memory = SessionNoticeMemory()
        let app = app(store, memory, clock: clock)
        app.send(.insert(Harness.password))
        app.send(.submit)
        #expect(app.mainModel?.form.message.text != AccessDefaultNotice.text)
        #expect(!memory.hasShown(AccessDefaultNotice.name))
    }

    @Test func anAgentHeldVaultSaysItAfterTheStartupWindow() throws {
        let clock = TestClock()
        let store = InMemoryStore(password: Harness.password, now: { clock.now })
        store.accessDefaultMode = .any
        try store.unlock(password: SecretBytes(utf8: Harness.password))
        let app = app(store, SessionNoticeMemory(), clock: clock)
        #expect(app.mainModel?.form.message == .warning(AppModel.alreadyUnlockedNote))
        clock.advance(by: 2)
        app.tick()
        #expect(app.mainModel?.form.message == .info(AccessDefaultNotice.text))
    }
}

/// A rule edited but not saved outlives a lock this UI made, as every other edit does.
@Suite struct AccessRowsLockTests {
    @Test func anUnsavedRuleIsKeptAcrossTheIdleLock() throws {
        var item = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "s3cret"))
        item.accessRule = AccessRule(trusted: [AccessRowsTests.git])
        let h = try Harness.unlocked(items: [item])
        h.send(.editSelected, .focus(.accessMode), .cycleKind(2))
        #expect(h.form.access.modeText == "ask")
        h.clock.advance(by: 301)
        h.app.tick()
        #expect(h.app.mainModel == nil)
        h.unlock()
        #expect(h.form.access.modeText == "ask")
        #expect(h.form.access.programs == ["trusted /usr/bin/git"])
        #expect(h.form.hasUnsavedEdits)
        h.send(.save)
        #expect(try h.store.item(ItemKey(service: "mail", account: "ana")).accessRule.mode == .ask)
    }
}

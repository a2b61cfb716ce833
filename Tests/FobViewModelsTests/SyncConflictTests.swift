import FobAccess
import FobClipboard
import FobStore
import FobSystem
import FobTestSupport
import FobViewModels
import Foundation
import Synchronization
import Testing

/// Sync's conflicts on the main screen: the list's mark, the preview's
/// line, `V` to keep one version, and the last sync on the status line.
@Suite struct SyncConflictTests {
    /// A sync source whose overview the test sets, recording each resolve.
    /// Its overview is read off the UI thread, through the store it is handed
    /// (whose calls run on the UI thread), and waits while ``held``.
    final class FakeSync: SyncConflictSource, @unchecked Sendable {
        private let shared = Mutex<(current: SyncOverview?, held: Bool, reads: Int)>((nil, false, 0))
        var current: SyncOverview? {
            get { shared.withLock { $0.current } }
            set { shared.withLock { $0.current = newValue } }
        }
        var held: Bool {
            get { shared.withLock { $0.held } }
            set { shared.withLock { $0.held = newValue } }
        }
        /// Reads that ended.
        var reads: Int { shared.withLock { $0.reads } }
        var resolved: [(ItemKey, Bool)] = []
        var failure: KeychainError?

        func overview(listed: [Item], store: any KeychainStore) throws -> SyncOverview? {
            _ = try store.allItems()
            while held { usleep(1000) }
            return shared.withLock {
                $0.reads += 1
                return $0.current
            }
        }

        func resolve(_ key: ItemKey, keepRemote: Bool) throws {
            if let failure { throw failure }
            resolved.append((key, keepRemote))
            current?.versions[key] = nil
        }
    }

    static let mail = ItemKey(service: "mail", account: "ana")

    static func start(_ sync: FakeSync) -> (AppModel, InMemoryStore, TestClock) {
        let clock = TestClock()
        let store = InMemoryStore(password: Harness.password, now: { clock.now })
        store.externalPut(item("mail", "ana"))
        store.externalPut(item("web", "bob"))
        let app = AppModel(
            store: store,
            clipboard: ClipboardController(clipboard: FakeClipboard(), clock: clock, runner: InlineRunner()),
            clock: clock, sync: sync)
        app.send(.insert(Harness.password))
        app.send(.submit)
        return (app, store, clock)
    }

    /// Ticks (as the UI's timer does) until `done`, for at most 10 s.
    static func tick(_ app: AppModel, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            app.tick()
            if done() { return true }
            usleep(2000)
        }
        return false
    }

    @Test func aConflictIsMarkedPreviewedAndKeptByV() throws {
        let sync = FakeSync()
        let synced = Date(timeIntervalSince1970: 1_767_000_000)
        sync.current = SyncOverview(lastSync: synced, merged: 3, conflicts: 1, versions: [Self.mail: 2])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        let time = DateText.local(synced, "%H:%M")
        #expect(main.form.message == .warning("Last sync \(time): merged 3, conflicts 1"))
        #expect(main.conflictNote == "2 versions; V keeps one")
        // An item without a conflict has nothing to settle.
        app.send(.moveSelection(1))
        #expect(main.conflictNote == nil)
        app.send(.resolveSelected)
        #expect(app.overlay == nil)
        #expect(main.form.message.text == #"No sync conflict on service "web", user ID "bob""#)
        // n leaves both versions.
        app.send(.moveSelection(-1))
        app.send(.resolveSelected)
        guard case .confirm(let dialog) = app.overlay else {
            Issue.record("no dialog: \(String(describing: app.overlay))")
            return
        }
        #expect(dialog.purpose == .resolveConflict(Self.mail))
        app.send(.dismiss)
        #expect(sync.resolved.isEmpty)
        // r keeps the other device's version.
        app.send(.resolveSelected)
        app.send(.keepOtherVersion)
        #expect(app.overlay == nil)
        #expect(sync.resolved.map(\.0) == [Self.mail])
        #expect(sync.resolved.map(\.1) == [true])
        #expect(main.list.rows.map(\.versions) == [0, 0])
        #expect(main.conflictNote == nil)
        #expect(
            main.form.message
                == .success(
                    #"Kept the other device's version of service "mail", user ID "ana"; the next sync carries it"#))
    }

    @Test func yKeepsThisVaultsVersionAndAFailureIsSaid() throws {
        let sync = FakeSync()
        sync.current = SyncOverview(
            lastSync: Date(timeIntervalSince1970: 1_767_000_000), merged: 0, conflicts: 1, versions: [Self.mail: 3])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.conflictNote == "3 versions; V keeps one" })
        sync.failure = .itemNotFound("no conflict")
        app.send(.resolveSelected)
        app.send(.confirm)
        #expect(main.form.message.tone == .error)
        #expect(main.list.rows.map(\.versions) == [3, 0])
        sync.failure = nil
        app.send(.resolveSelected)
        app.send(.confirm)
        #expect(sync.resolved.map(\.1) == [false])
        #expect(main.list.rows.map(\.versions) == [0, 0])
    }

    @Test func aSyncByAnotherProcessIsToldOnTheStatusLine() throws {
        let sync = FakeSync()
        let (app, store, clock) = Self.start(sync)
        let main = try #require(app.mainModel)
        // A vault that never synced says nothing of sync.
        #expect(Self.tick(app) { sync.reads == 1 })
        app.tick()
        #expect(main.sync == nil)
        #expect(main.form.message.text.hasPrefix("Last sync") == false)
        let synced = clock.now.addingTimeInterval(5)
        sync.current = SyncOverview(lastSync: synced, merged: 1, conflicts: 0, versions: [:])
        store.externalPut(item("mail", "ana", "merged"))
        clock.advance(by: 5)
        #expect(Self.tick(app) { main.sync?.merged == 1 })
        let time = DateText.local(synced, "%H:%M")
        #expect(main.form.message == .info("Last sync \(time): merged 1, conflicts 0"))
        #expect(main.sync?.merged == 1)
    }

    /// A slow read of the overview (a big tree) never holds up the UI:
    /// ticks and keys go on, and the marks land when it ends.
    @Test func aSlowOverviewNeverBlocksTheUI() throws {
        let sync = FakeSync()
        sync.held = true
        defer { sync.held = false }
        sync.current = SyncOverview(
            lastSync: Date(timeIntervalSince1970: 1_767_000_000), merged: 0, conflicts: 1, versions: [Self.mail: 2])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        let started = Date()
        for _ in 0..<20 { app.tick() }
        app.send(.moveSelection(1))
        #expect(main.list.selectedRow?.service == "web")
        app.send(.moveSelection(-1))
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(main.list.rows.map(\.versions) == [0, 0])
        #expect(sync.reads == 0)
        sync.held = false
        #expect(Self.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        #expect(main.conflictNote == "2 versions; V keeps one")
    }
}

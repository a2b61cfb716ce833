import FobAccess
import FobClipboard
import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Synchronization
import Testing

@testable import FobViewModels

/// Sync's conflicts on the main screen: the list's mark, the preview's
/// line, `V` to keep one version, and the last sync on the status line.
@Suite struct SyncConflictTests {
    /// A sync source whose overview the test sets, recording each resolve.
    /// Its overview is read off the UI thread, through the store it is handed
    /// (whose calls run on the UI thread), and waits while ``held``; a
    /// resolve likewise, waiting while its state's `resolveHeld`.
    final class FakeSync: SyncConflictSource, @unchecked Sendable {
        /// Everything the UI's threads and the test share.
        struct State {
            var current: SyncOverview?
            var held = false
            /// Reads that ended.
            var reads = 0
            var resolveHeld = false
            /// The resolves that ended, in order.
            var resolved: [(ItemKey, Bool)] = []
            var failure: KeychainError?
            /// The threads resolves ran on: the UI thread (the test's) must not be one.
            var resolveThreads: [pthread_t] = []
            var secretReads = 0
        }
        private let shared = Mutex(State())

        /// One field of the shared state, read or set under its lock.
        subscript<T: Sendable>(_ field: WritableKeyPath<State, T>) -> T {
            get { shared.withLock { $0[keyPath: field] } }
            set { shared.withLock { $0[keyPath: field] = newValue } }
        }
        var current: SyncOverview? {
            get { self[\.current] }
            set { self[\.current] = newValue }
        }
        var held: Bool {
            get { self[\.held] }
            set { self[\.held] = newValue }
        }
        var reads: Int { self[\.reads] }
        var resolved: [(ItemKey, Bool)] { self[\.resolved] }

        func overview(listed: [Item], store: any KeychainStore) throws -> SyncOverview? {
            _ = try store.allItems()
            while held { usleep(1000) }
            return shared.withLock {
                $0.reads += 1
                return $0.current
            }
        }

        /// How many times ``secrets(of:store:)`` was asked.
        var secretReads: Int { self[\.secretReads] }

        func secrets(of key: ItemKey, store: any KeychainStore) throws -> ConflictSecrets {
            shared.withLock { $0.secretReads += 1 }
            guard self[\.current]?.versions[key] != nil else { throw KeychainError.itemNotFound(key.shortName) }
            return ConflictSecrets(local: try store.item(key).secret, other: SecretBytes(utf8: "from the desk"))
        }

        func resolve(_ key: ItemKey, keepRemote: Bool, store: any KeychainStore) throws {
            shared.withLock { $0.resolveThreads.append(pthread_self()) }
            _ = try store.allItems()
            while self[\.resolveHeld] { usleep(1000) }
            if let failure = self[\.failure] { throw failure }
            shared.withLock {
                $0.resolved.append((key, keepRemote))
                $0.current?.versions[key] = nil
            }
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

    /// `V` names the device that wrote each version and when: the vault's
    /// version may be the other device's edit.
    @Test func vNamesTheDeviceAndTimeOfEachVersion() throws {
        let sync = FakeSync()
        let written = Date(timeIntervalSince1970: 1_767_000_000)
        let sources = ConflictSources(
            local: .init(device: "laptop (3f6c0a9e51d27b84)", written: written),
            other: .init(device: nil, written: written.addingTimeInterval(-20)), differences: ["secret", "notes"])
        sync.current = SyncOverview(
            lastSync: written, merged: 1, conflicts: 1, versions: [Self.mail: 2], sources: [Self.mail: sources])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        app.send(.resolveSelected)
        guard case .confirm(let dialog) = app.overlay else {
            Issue.record("no dialog: \(String(describing: app.overlay))")
            return
        }
        // Written 20 s apart, in the same minute: the seconds tell them apart;
        // the parts that differ are named, never their values; the device
        // by its name, without its id.
        let (mine, theirs) = (DateText.local(written, "%H:%M:%S"), DateText.local(written - 20, "%H:%M:%S"))
        #expect(mine != theirs)
        #expect(
            dialog.message
                == #"mail / ana has 2 versions. They differ in: secret, notes. "#
                + "Keep this vault's (laptop, \(mine)), "
                + "or the other device's (\(theirs))?")
    }

    /// Ctrl-R in the resolve dialog reveals both versions' passwords (read
    /// only then), a second Ctrl-R hides them, and closing the dialog drops them.
    @Test func ctrlRRevealsBothVersionsInTheResolveDialog() throws {
        let sync = FakeSync()
        sync.current = SyncOverview(lastSync: Date(), merged: 1, conflicts: 1, versions: [Self.mail: 2])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        app.send(.resolveSelected)
        #expect(main.conflictSecretTexts.map { [$0.local, $0.other] } == [ItemPreview.mask, ItemPreview.mask])
        #expect(sync.secretReads == 0, "nothing is read before Ctrl-R")
        app.send(.toggleReveal)
        #expect(main.conflictSecretTexts.map { [$0.local, $0.other] } == ["s3cret", "from the desk"])
        guard case .confirm = app.overlay else {
            Issue.record("Ctrl-R closed the dialog")
            return
        }
        app.send(.toggleReveal)
        #expect(main.conflictSecretTexts.map { [$0.local, $0.other] } == [ItemPreview.mask, ItemPreview.mask])
        app.send(.toggleReveal)
        app.send(.dismiss)
        #expect(main.conflictVersions == nil)
        #expect(main.conflictSecretTexts == nil)
    }

    /// `is:conflict` finds the items with conflicting versions, alone or with words.
    @Test func isConflictFindsTheConflicts() throws {
        let sync = FakeSync()
        sync.current = SyncOverview(lastSync: Date(), merged: 1, conflicts: 1, versions: [Self.mail: 2])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        func shown(_ query: String) -> [String] {
            app.send(.cancel)
            app.send(.insert(query))
            return main.list.rows.map { "\($0.service)/\($0.account)" }
        }
        #expect(shown("is:conflict") == ["mail/ana"])
        #expect(shown("mail is:conflict") == ["mail/ana"])
        #expect(shown("web is:conflict").isEmpty)
        #expect(shown("web") == ["web/bob"])
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
        #expect(main.conflictNote == "2 versions; F6 keeps one")
        // An item without a conflict has nothing to settle.
        app.send(.moveSelection(1))
        #expect(main.conflictNote == nil)
        app.send(.resolveSelected)
        #expect(app.overlay == nil)
        #expect(main.form.message.text == #"No sync conflict on web / bob"#)
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
        #expect(Self.tick(app) { main.form.message.tone == .success })
        #expect(sync.resolved.map(\.0) == [Self.mail])
        #expect(sync.resolved.map(\.1) == [true])
        #expect(main.list.rows.map(\.versions) == [0, 0])
        #expect(main.conflictNote == nil)
        #expect(
            main.form.message
                == .success(
                    #"Kept the other device's version of mail / ana; the next sync carries it"#))
    }

    @Test func yKeepsThisVaultsVersionAndAFailureIsSaid() throws {
        let sync = FakeSync()
        sync.current = SyncOverview(
            lastSync: Date(timeIntervalSince1970: 1_767_000_000), merged: 0, conflicts: 1, versions: [Self.mail: 3])
        let (app, _, _) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.conflictNote == "3 versions; F6 keeps one" })
        sync[\.failure] = .itemNotFound("no conflict")
        app.send(.resolveSelected)
        app.send(.confirm)
        #expect(Self.tick(app) { main.form.message.tone == .error })
        #expect(main.list.rows.map(\.versions) == [3, 0])
        sync[\.failure] = nil
        app.send(.resolveSelected)
        app.send(.confirm)
        #expect(Self.tick(app) { main.form.message.tone == .success })
        #expect(sync.resolved.map(\.1) == [false])
        #expect(main.list.rows.map(\.versions) == [0, 0])
    }

    /// A sync's summary comes by itself: it never hides a message the user
    /// has yet to read (here the undo of a delete), only goes to the history.
    @Test func aSyncSummaryNeverHidesAnUnreadWarningOrUndo() throws {
        let sync = FakeSync()
        let (app, store, clock) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { sync.reads == 1 })
        app.send(.deleteSelected)
        let deleted = main.form.message
        #expect(deleted.tone == .success && deleted.text.contains("Ctrl-Y undoes"), "\(deleted)")
        let synced = clock.now.addingTimeInterval(2)
        sync.current = SyncOverview(lastSync: synced, merged: 1, conflicts: 0, versions: [:])
        store.externalPut(item("new", "eve"))
        clock.advance(by: 2)
        #expect(Self.tick(app) { main.sync?.merged == 1 })
        #expect(main.form.message == deleted)
        let time = DateText.local(synced, "%H:%M")
        #expect(main.messages.entries.last?.line == .info("Last sync \(time): merged 1, conflicts 0"))
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
        #expect(main.conflictNote == "2 versions; F6 keeps one")
    }

    /// A started app whose list marks `mail ana` with 2 versions.
    static func startWithAConflict() throws -> (FakeSync, AppModel, TestClock, MainModel) {
        let sync = FakeSync()
        sync.current = SyncOverview(
            lastSync: Date(timeIntervalSince1970: 1_767_000_000), merged: 0, conflicts: 1, versions: [Self.mail: 2])
        let (app, _, clock) = Self.start(sync)
        let main = try #require(app.mainModel)
        #expect(Self.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        return (sync, app, clock, main)
    }

    /// `V` settles a conflict off the UI thread: while its vault write
    /// waits, ticks (the injected clock moving on) and keys go on, a second
    /// `V` is told to wait, and an idle lock keeps the store open for the
    /// write; the settled state lands at the tick after it ends.
    @Test func aSlowResolveNeverBlocksTheUI() throws {
        let (sync, app, clock, main) = try Self.startWithAConflict()
        sync[\.resolveHeld] = true
        defer { sync[\.resolveHeld] = false }
        let started = Date()
        let uiThread = pthread_self()
        app.send(.resolveSelected)
        app.send(.keepOtherVersion)
        #expect(
            main.form.message
                == .info(#"Keeping the other device's version of mail / ana…"#))
        for _ in 0..<20 {
            clock.advance(by: 0.2)
            app.tick()
        }
        app.send(.moveSelection(1))
        #expect(main.list.selectedRow?.service == "web")
        app.send(.moveSelection(-1))
        app.send(.resolveSelected)
        app.send(.keepOtherVersion)
        #expect(main.form.message == .info(#"Still settling mail / ana…"#))
        #expect(Date().timeIntervalSince(started) < 1)
        #expect(sync.resolved.isEmpty)
        #expect(main.list.rows.map(\.versions) == [2, 0])
        #expect(Self.tick(app) { sync[\.resolveThreads].count == 1 })
        #expect(sync[\.resolveThreads].allSatisfy { pthread_equal($0, uiThread) == 0 })
        // The idle lock (300 s on the injected clock) waits for the write to end before it locks the store.
        clock.advance(by: 301)
        app.tick()
        #expect(app.mainModel == nil)
        #expect(app.storeLockDeferred)
        sync[\.resolveHeld] = false
        #expect(Self.tick(app) { !app.storeLockDeferred })
        #expect(sync.resolved.map(\.0) == [Self.mail])
        #expect(sync.resolved.map(\.1) == [true])
    }

    /// The settled state lands at the tick after the resolve ends.
    @Test func aResolveLandsAtTheTickAfterItEnds() throws {
        let (sync, app, clock, main) = try Self.startWithAConflict()
        app.send(.resolveSelected)
        app.send(.keepOtherVersion)
        #expect(main.conflictNote == "2 versions; F6 keeps one")
        let deadline = Date().addingTimeInterval(10)
        var landed = false
        while !landed && Date() < deadline {
            clock.advance(by: 0.2)
            app.tick()
            landed = main.form.message.tone == .success
            usleep(2000)
        }
        #expect(landed)
        #expect(sync.resolved.map(\.0) == [Self.mail])
        #expect(main.list.rows.map(\.versions) == [0, 0])
        #expect(main.conflictNote == nil)
        // Told at the tick it landed, by the injected clock.
        #expect(main.messages.entries.last?.time == clock.now)
    }
}

import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

@testable import FobViewModels

/// The status line's sync summary follows the items marked `!`: its count,
/// its tone, after a newer sync and after a resolve made elsewhere.
@Suite struct SyncSummaryLineTests {
    typealias FakeSync = SyncConflictTests.FakeSync
    static let firstSync = Date(timeIntervalSince1970: 1_767_000_000)
    static let web = ItemKey(service: "web", account: "bob")

    /// The summary line for a sync at `time`.
    static func summary(_ time: Date, merged: Int, conflicts: Int) -> String {
        "Last sync \(DateText.local(time, "%H:%M")): merged \(merged), conflicts \(conflicts)"
    }

    /// A started app whose list marks `mail / ana` with 2 versions, after
    /// a sync whose own count (`conflicts`) is `lastConflicts`.
    static func startWithAConflict(lastConflicts: Int = 1) throws -> (FakeSync, AppModel, InMemoryStore, TestClock) {
        let sync = FakeSync()
        sync.current = SyncOverview(
            lastSync: firstSync, merged: 0, conflicts: lastConflicts, versions: [SyncConflictTests.mail: 2])
        let (app, store, clock) = SyncConflictTests.start(sync)
        let main = try #require(app.mainModel)
        #expect(SyncConflictTests.tick(app) { main.list.rows.map(\.versions) == [2, 0] })
        return (sync, app, store, clock)
    }

    /// Another process changed the store: the list and sync's overview are read again.
    static func changeElsewhere(_ store: InMemoryStore, _ clock: TestClock) {
        store.externalPut(item("web", "bob", "changed"))
        clock.advance(by: 5)
    }

    /// A conflict left by an earlier sync is marked `!`; the last sync left
    /// none of its own: the line counts the mark and warns, as the mark does.
    @Test func theToneFollowsTheMarkedItems() throws {
        let (_, app, _, _) = try Self.startWithAConflict(lastConflicts: 0)
        let main = try #require(app.mainModel)
        #expect(main.form.message == .warning(Self.summary(Self.firstSync, merged: 0, conflicts: 1)))
    }

    /// A newer sync replaces the older summary shown, even as a warning:
    /// the line said `conflicts 1` beside two items marked `!`.
    @Test func aNewerSyncReplacesTheOlderSummaryShown() throws {
        let (sync, app, store, clock) = try Self.startWithAConflict()
        let main = try #require(app.mainModel)
        #expect(main.form.message == .warning(Self.summary(Self.firstSync, merged: 0, conflicts: 1)))
        let second = Self.firstSync.addingTimeInterval(3600)
        sync.current = SyncOverview(
            lastSync: second, merged: 1, conflicts: 1, versions: [SyncConflictTests.mail: 2, Self.web: 2])
        Self.changeElsewhere(store, clock)
        #expect(SyncConflictTests.tick(app) { main.list.rows.map(\.versions) == [2, 2] })
        #expect(main.form.message == .warning(Self.summary(second, merged: 1, conflicts: 2)))
    }

    /// `fob resolve` elsewhere settles the last conflict: the summary shown
    /// says `conflicts 0`, as news, no longer a warning.
    @Test func aResolveElsewhereUpdatesTheSummaryShown() throws {
        let (sync, app, store, clock) = try Self.startWithAConflict()
        let main = try #require(app.mainModel)
        sync.current?.versions = [:]
        Self.changeElsewhere(store, clock)
        #expect(SyncConflictTests.tick(app) { main.list.rows.map(\.versions) == [0, 0] })
        #expect(main.form.message == .info(Self.summary(Self.firstSync, merged: 0, conflicts: 0)))
    }

    /// A line that already says the summary is not set again at each
    /// reload: the message history holds it once.
    @Test func anUnchangedSummaryIsNotRepeatedInTheHistory() throws {
        let (sync, app, store, clock) = try Self.startWithAConflict()
        let main = try #require(app.mainModel)
        sync.current?.conflicts = 7 // read again, but not a figure the line gives
        Self.changeElsewhere(store, clock)
        #expect(SyncConflictTests.tick(app) { main.sync?.conflicts == 7 })
        let line = StatusLine.warning(Self.summary(Self.firstSync, merged: 0, conflicts: 1))
        #expect(main.form.message == line)
        #expect(main.messages.entries.filter { $0.line == line }.count == 1)
    }

    /// A message the user has yet to read is not hidden by a resolve
    /// elsewhere: the line keeps it.
    @Test func aResolveElsewhereKeepsAnUnreadMessage() throws {
        let (sync, app, store, clock) = try Self.startWithAConflict()
        let main = try #require(app.mainModel)
        main.form.message = .warning("Clipboard unavailable")
        sync.current?.versions = [:]
        Self.changeElsewhere(store, clock)
        #expect(SyncConflictTests.tick(app) { main.list.rows.map(\.versions) == [0, 0] })
        #expect(main.form.message == .warning("Clipboard unavailable"))
    }
}

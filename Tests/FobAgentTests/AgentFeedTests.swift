import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobAgent

/// One change feed: each change is published once, with the item's
/// persistent ID, revision and summary, whether the agent wrote it or
/// another process changed the vault file; a rename is one `renamed` event.
@Suite struct AgentFeedTests {
    /// A subscriber of `core` and a way to drain what it heard.
    private struct Listener {
        let core: AgentCore
        let id: Int

        init(_ core: AgentCore) throws {
            self.core = core
            id = try #require(core.subscribe())
        }

        /// Every event queued so far, after one look of the watcher.
        func drain() -> [AgentEvent] {
            core.watch()
            var all: [AgentEvent] = []
            while let events = core.subscribers.next(id, timeout: 0.05), !events.isEmpty { all += events }
            return all
        }
    }

    private func otherProcess(_ v: TestVault) throws -> Vault {
        let other = try Vault(url: v.vault.url)
        try other.unlock(password: v.password)
        return other
    }

    @Test func theAgentsOwnWritesArePublishedOnceWithSummaries() throws {
        let v = try TestVault()
        let (core, _) = try AgentExactAnswersTests.core(v)
        let listener = try Listener(core)
        defer { core.subscribers.remove(listener.id) }
        guard case .written(_, let added) = core.handle(.add(Item(service: "mail", account: "ana", secret: .text("s"))))
        else {
            Issue.record("add")
            return
        }
        var changes = ItemChanges()
        changes.label = .some("Mail")
        guard case .written(_, let changed) = core.handle(.update(.key(service: "mail", account: "ana"), changes))
        else {
            Issue.record("update")
            return
        }
        let heard = listener.drain()
        #expect(heard == added + changed)
        #expect(heard.map(\.kind) == [.added, .changed])
        #expect(heard.last?.summary?.label == "Mail" && heard.last?.revision == 2)
        #expect(heard.allSatisfy { $0.summary?.secret == nil })
        // Nothing more on later looks: each change once.
        #expect(listener.drain().isEmpty)
    }

    /// Sync's own records (a reserved access group) written by the agent
    /// are told to the writer but reach neither the subscribers (the
    /// terminal UI, the Secret Service) nor the agent's listing.
    @Test func syncsOwnRecordsReachNoSubscriberAndNoListing() throws {
        let v = try TestVault()
        let (core, _) = try AgentExactAnswersTests.core(v)
        let listener = try Listener(core)
        defer { core.subscribers.remove(listener.id) }
        let state = Item(service: "fob-sync", account: "state", accessGroup: "fob.sync", secret: .text("s"))
        let mail = Item(service: "mail", account: "ana", secret: .text("s"))
        guard case .written(_, let written) = core.handle(.applyImport([.add(state), .add(mail)])) else {
            Issue.record("import")
            return
        }
        #expect(written.map { $0.key?.service } == ["fob-sync", "mail"])
        #expect(listener.drain().map { $0.key?.service } == ["mail"])
        guard case .items(let listed) = core.handle(.list(service: nil)) else {
            Issue.record("list")
            return
        }
        #expect(listed.map(\.service) == ["mail"])
    }

    @Test func anotherProcessesChangesArePublishedWithSummaries() throws {
        let v = try TestVault()
        let (core, _) = try AgentExactAnswersTests.core(v)
        let listener = try Listener(core)
        defer { core.subscribers.remove(listener.id) }
        let other = try otherProcess(v)
        try other.add(Item(service: "mail", account: "ana", label: "Post", secret: .text("s")))
        let stored = try other.item(service: "mail", account: "ana")
        let heard = listener.drain()
        #expect(heard == [AgentEvent(kind: .added, summary: stored)])
        #expect(heard.first?.id == stored.persistentID && heard.first?.summary?.label == "Post")

        var rename = ItemChanges()
        rename.service = "post"
        try other.update(matching: .key(service: "mail", account: "ana"), with: rename)
        let moved = try other.item(service: "post", account: "ana")
        #expect(
            listener.drain() == [
                AgentEvent(kind: .renamed, summary: moved, oldKey: ItemKey(service: "mail", account: "ana"))
            ])

        try other.delete(matching: .key(service: "post", account: "ana"))
        #expect(listener.drain() == [AgentEvent(kind: .deleted, summary: moved)])
        #expect(listener.drain().isEmpty)
    }

    /// An agent write after another process's change: both are heard, each once.
    @Test func mixedWritersAreEachHeardOnce() throws {
        let v = try TestVault()
        let (core, _) = try AgentExactAnswersTests.core(v)
        let listener = try Listener(core)
        defer { core.subscribers.remove(listener.id) }
        try otherProcess(v).add(Item(service: "other", account: "ana", secret: .text("s")))
        _ = core.handle(.add(Item(service: "agent", account: "ana", secret: .text("s"))))
        let heard = listener.drain()
        #expect(heard.map { $0.key?.service }.sorted { ($0 ?? "") < ($1 ?? "") } == ["agent", "other"])
        #expect(heard.allSatisfy { $0.kind == .added && $0.summary != nil })
        #expect(listener.drain().isEmpty)
    }

    /// A rename through the agent is one `renamed` event carrying the old key.
    @Test func aRenameIsOneRenamedEvent() throws {
        let v = try TestVault()
        let (core, _) = try AgentExactAnswersTests.core(v)
        _ = core.handle(.add(Item(service: "mail", account: "ana", secret: .text("s"))))
        let listener = try Listener(core)
        defer { core.subscribers.remove(listener.id) }
        var rename = ItemChanges()
        rename.account = "bea"
        _ = core.handle(.update(.key(service: "mail", account: "ana"), rename))
        let heard = listener.drain()
        #expect(heard.map(\.kind) == [.renamed])
        #expect(heard.first?.oldKey == ItemKey(service: "mail", account: "ana"))
        #expect(heard.first?.key == ItemKey(service: "mail", account: "bea"))
    }

    @Test func lockAndUnlockArePublished() throws {
        let v = try TestVault()
        let (core, _) = try AgentExactAnswersTests.core(v)
        let listener = try Listener(core)
        defer { core.subscribers.remove(listener.id) }
        _ = core.handle(.lock)
        #expect(listener.drain() == [AgentEvent(kind: .locked, key: nil)])
        _ = core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0))
        #expect(listener.drain() == [AgentEvent(kind: .unlocked, key: nil)])
        #expect(listener.drain().isEmpty)
    }

    /// Events survive the wire: every kind, with its summary and old key.
    @Test func eventsRoundTrip() throws {
        var item = Item(service: "mail", account: "ana", label: "L", secret: .text("never sent"))
        item.created = Date(timeIntervalSince1970: 1_700_000_000)
        item.modified = item.created
        item.revision = 4
        let events = [
            AgentEvent(kind: .added, summary: item),
            AgentEvent(kind: .renamed, summary: item, oldKey: ItemKey(service: "m", account: "a")),
            AgentEvent(kind: .deleted, summary: item), AgentEvent(kind: .locked, key: nil),
            AgentEvent(kind: .unlocked, key: nil),
        ]
        for event in events {
            let bytes = AgentResponse.event(event).encoded()
            guard case .event(let decoded) = try bytes.withUnsafeBytes({ try AgentResponse.decode($0) }) else {
                Issue.record("not an event")
                continue
            }
            #expect(decoded == event)
            #expect(decoded.summary?.secret == nil)
        }
        let written = AgentResponse.written(count: 2, changes: Array(events.prefix(2))).encoded()
        guard case .written(2, let changes) = try written.withUnsafeBytes({ try AgentResponse.decode($0) }) else {
            Issue.record("not a write's answer")
            return
        }
        #expect(changes == Array(events.prefix(2)))
    }

    /// A rename without its old key, or an event of too few fields, is a typed error.
    @Test func malformedEventsAreBadFields() throws {
        var broken = AgentEvent(kind: .renamed, summary: Item(service: "s", account: "a", secret: nil))
        broken.oldKey = nil
        let bytes = AgentResponse.event(broken).encoded()
        #expect(throws: AgentProtocolError.badField("an event's old key")) {
            try bytes.withUnsafeBytes { try AgentResponse.decode($0) }
        }
        var w = MessageWriter(code: 5)
        w.field([1])
        #expect(throws: AgentProtocolError.badField("1 fields where 6 belong")) {
            try w.bytes.withUnsafeBytes { try AgentResponse.decode($0) }
        }
    }

    /// A request by ID round-trips; a wrong length of IDs is a bad field.
    @Test func getItemsRoundTrips() throws {
        let ids = [UUID(), UUID()]
        let bytes = AgentRequest.getItems(ids: ids, detail: .secretOnly).encoded()
        guard case .getItems(let decoded, .secretOnly) = try bytes.withUnsafeBytes({ try AgentRequest.decode($0) })
        else {
            Issue.record("not getItems")
            return
        }
        #expect(decoded == ids)
        var w = MessageWriter(code: 13)
        w.field([1, 2, 3])
        w.field([2])
        #expect(throws: AgentProtocolError.badField("persistent IDs")) {
            try w.bytes.withUnsafeBytes { try AgentRequest.decode($0) }
        }
    }
}

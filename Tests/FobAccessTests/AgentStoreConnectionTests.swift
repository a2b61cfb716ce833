import FobAccess
import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// A long-lived client (the terminal UI, the Secret Service provider) keeps
/// one connection to the agent: one hello for all its requests; it asks for
/// items by persistent ID and patches its state from each write's answer.
@Suite struct AgentStoreConnectionTests {
    /// Items as a summary holds them: the agent's store decodes a listing
    /// with an empty secret where the summary has none.
    private static func summaries(_ items: [Item]) -> [Item] {
        items.map { item in
            var copy = item
            copy.secret = nil
            return copy
        }
    }

    @Test func aStoreMakesOneHelloForAllItsRequests() throws {
        let v = try TestVault()
        v.vault.lock()
        let agent = try InProcessAgent(vault: v)
        defer { agent.stop() }
        let store = AgentStore(client: AgentClient(endpoint: agent.server.endpoint))
        let hellos = agent.server.acceptedHellos
        try store.add(Item(service: "mail", account: "ana", secret: .text("s")))
        for _ in 0..<200 {
            _ = try store.list()
            _ = store.status
            _ = try store.item(service: "mail", account: "ana")
        }
        #expect(agent.server.acceptedHellos - hellos == 1)
        #expect(store.connectionsOpened == 1)
    }

    /// Each write answers with the item's revision and summary, equal to what
    /// reading it by persistent ID returns; unknown IDs are left out.
    @Test func writeAnswersEqualWhatAReadByIDReturns() throws {
        let v = try TestVault()
        v.vault.lock()
        let agent = try InProcessAgent(vault: v)
        defer { agent.stop() }
        let store = AgentStore(client: AgentClient(endpoint: agent.server.endpoint))
        let added = try store.write(.add(Item(service: "mail", account: "ana", label: "Mail", secret: .text("one"))))
        #expect(added.count == 1)
        let event = try #require(added.changes.first)
        #expect(event.kind == .added && event.revision == 1)
        let id = try #require(event.id)
        #expect(try Self.summaries(store.items(ids: [UUID(), id], detail: .listing)) == [try #require(event.summary)])

        let saved = try store.write(
            .save(service: "mail", account: "ana", secret: .text("two"), changes: ItemChanges()))
        #expect(saved.count == 0)
        let read = try store.items(ids: [id], detail: .secret)
        #expect(read.first?.secret?.unsafeString == "two")
        #expect(saved.changes.map(\.kind) == [.changed])
        #expect(saved.changes.first?.revision == read.first?.revision)
        #expect(
            try Self.summaries(store.items(ids: [id], detail: .listing)) == [try #require(saved.changes.first?.summary)]
        )

        #expect(try store.items(ids: [UUID()], detail: .secret).isEmpty)
        #expect(throws: KeychainError.itemNotFound("service \"mail\", account \"nobody\"")) {
            try store.write(.delete(.key(service: "mail", account: "nobody")))
        }
    }

    /// A subscriber sees an agent write well within 100 ms of its answer.
    @Test func aSubscriberSeesAnAgentWriteWithin100Milliseconds() throws {
        let v = try TestVault()
        v.vault.lock()
        let agent = try InProcessAgent(vault: v)
        defer { agent.stop() }
        let store = AgentStore(client: AgentClient(endpoint: agent.server.endpoint))
        let heard = ArrivalLog<String>()
        let watch = try #require(store.watch { heard.append("\($0.kind) \($0.key?.account ?? "")") })
        defer { watch.cancel() }
        for account in ["a0", "a1", "a2", "a3", "a4"] {
            try store.add(Item(service: "mail", account: account, secret: .text("s")))
            let written = Date()
            let seen = try #require(heard.arrival(of: "added \(account)"))
            #expect(seen.timeIntervalSince(written) < 0.1)
        }
    }
}

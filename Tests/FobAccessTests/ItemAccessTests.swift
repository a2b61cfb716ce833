import FobAccess
import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// An agent served from this process on a private socket, for one vault.
final class InProcessAgent: @unchecked Sendable {
    let runtime = TemporaryDirectory(prefix: "fob-rt")
    let server: AgentServer
    private let done = DispatchSemaphore(value: 0)

    init(vault: TestVault) throws {
        let endpoint = AgentEndpoint(vaultURL: vault.vault.url, environment: ["XDG_RUNTIME_DIR": runtime.url.path])
        server = AgentServer(endpoint: endpoint, core: AgentCore(vaultURL: URL(fileURLWithPath: endpoint.vault)))
        try server.bind()
        let thread = Thread { [server, done] in
            server.run()
            done.signal()
        }
        thread.start()
        guard case .ok = server.core.handle(.unlock(password: vault.password, idleSeconds: 0, maxSeconds: 0)) else {
            throw KeychainError.authFailed
        }
    }

    var environment: [String: String] { ["XDG_RUNTIME_DIR": runtime.url.path] }

    /// Stops the server: it ends when its socket goes.
    func stop() {
        unlink(server.endpoint.socket)
        done.wait()
    }
}

/// The access layer gives the same results and errors (so the same exit
/// statuses) through the agent as on the vault opened here.
@Suite struct ItemAccessTests {
    /// One operation's outcome: what it returned, or the error's status name.
    private static func outcome(_ body: () throws(KeychainError) -> String) -> String {
        do { return try body() } catch { return "\(error.statusName) (exit \(error.exitStatus))" }
    }

    private static func names(_ items: [Item]) -> String {
        items.map { "\($0.service)/\($0.account) \($0.label ?? "-") \($0.secret?.unsafeString ?? "") r\($0.revision)" }
            .joined(separator: ", ")
    }

    /// The table: add, duplicate add, get, missing get, query, update,
    /// missing update, save (added, then updated), list, conditional writes
    /// (``conditionalRows(_:)``), missing delete.
    private static func runTable(_ store: ItemAccess) -> [String] {
        let ana = ItemKey(service: "mail", account: "ana")
        var fields = Item(service: "mail", account: "ana", secret: .text("s1"))
        fields.customFields = [CustomField(name: "pin", value: .text("1234"), isHidden: true)]
        return [
            outcome { () throws(KeychainError) in
                try store.add(fields)
                return "added"
            },
            outcome { () throws(KeychainError) in
                try store.add(Item(service: "mail", account: "ana", secret: .text("s2")))
                return "added"
            },
            outcome { () throws(KeychainError) in names([try store.item(ana)]) },
            outcome { () throws(KeychainError) in names([try store.item(service: "mail", account: "nobody")]) },
            outcome { () throws(KeychainError) in
                let found = try store.items(matching: ItemQuery(itemClass: nil, service: "mail"), detail: .listing)
                return names(found) + " fields \(found.map { $0.customFields.map(\.value.count) })"
            },
            outcome { () throws(KeychainError) in
                "updated \(try store.update(matching: ana.query, with: ItemChanges(label: "Mail")))"
            },
            outcome { () throws(KeychainError) in
                "updated \(try store.update(matching: .key(service: "x", account: "y"), with: ItemChanges(label: "X")))"
            },
            outcome { () throws(KeychainError) in
                "\(try store.save(service: "mail", account: "bob", secret: .text("b1")))"
            },
            outcome { () throws(KeychainError) in
                "\(try store.save(service: "mail", account: "bob", secret: .text("b2")))"
            },
            outcome { () throws(KeychainError) in names(try store.list()) },
            eachItem(store, "mail", .secretOnly), eachItem(store, "mail", .attributes),
            eachItem(store, "nobody", .secretOnly),
        ] + conditionalRows(store) + [
            outcome { () throws(KeychainError) in "deleted \(try store.delete(matching: ana.query))" },
            outcome { () throws(KeychainError) in names(try store.list()) },
        ]
    }

    /// The items of `service` handed one at a time (``RequestStore/forEachItem(matching:detail:_:)``),
    /// with their custom fields' value lengths.
    private static func eachItem(_ store: ItemAccess, _ service: String, _ detail: ItemDetail) -> String {
        outcome { () throws(KeychainError) in
            var seen: [Item] = []
            try store.forEachItem(matching: ItemQuery(itemClass: nil, service: service), detail: detail) {
                seen.append($0)
            }
            return names(seen) + " fields \(seen.map { $0.customFields.map(\.value.count) })"
        }
    }

    /// Update, save and delete at a stale revision (each changes nothing and
    /// is `revisionMismatch`, exit 40) and at the current one; a save at
    /// revision 0 only adds. Starts with mail/ana and mail/bob at revision 2.
    private static func conditionalRows(_ store: ItemAccess) -> [String] {
        let ana = ItemKey(service: "mail", account: "ana")
        let bob = ItemKey(service: "mail", account: "bob")
        func update(_ revision: UInt64) -> () throws(KeychainError) -> String {
            {
                var changes = ItemChanges(label: "Work")
                changes.expectedRevision = revision
                return "updated \(try store.update(matching: ana.query, with: changes))"
            }
        }
        func save(_ account: String, _ secret: String, _ revision: UInt64) -> () throws(KeychainError) -> String {
            {
                var changes = ItemChanges()
                changes.expectedRevision = revision
                return
                    "\(try store.save(service: "mail", account: account, secret: .text(secret), attributes: changes))"
            }
        }
        func delete(_ revision: UInt64) -> () throws(KeychainError) -> String {
            {
                var query = ana.query
                query.expectedRevision = revision
                return "deleted \(try store.delete(matching: query))"
            }
        }
        return [
            outcome(update(1)), outcome { () throws(KeychainError) in names([try store.item(ana)]) },
            outcome(update(2)),
            outcome(save("bob", "lost", 1)), outcome { () throws(KeychainError) in names([try store.item(bob)]) },
            outcome(save("bob", "b3", 2)),
            outcome(save("cy", "c1", 0)), outcome(save("cy", "lost", 0)), outcome(save("dan", "d1", 4)),
            outcome(delete(2)), outcome { () throws(KeychainError) in names([try store.item(ana)]) },
            outcome(delete(3)),
        ]
    }

    private static let expected = [
        "added",
        "errSecDuplicateItem (exit 45)",
        "mail/ana - s1 r1",
        "errSecItemNotFound (exit 44)",
        "mail/ana -  r1 fields [[0]]",
        "updated 1",
        "errSecItemNotFound (exit 44)",
        "added",
        "updated",
        "mail/ana Mail  r2, mail/bob -  r2",
        "mail/ana - s1 r2, mail/bob - b2 r2 fields [[], []]",
        "mail/ana Mail  r2, mail/bob -  r2 fields [[4], []]",
        "errSecItemNotFound (exit 44)",
        "errSecInvalidItemRef (exit 40)",
        "mail/ana Mail s1 r2",
        "updated 1",
        "errSecInvalidItemRef (exit 40)",
        "mail/bob - b2 r2",
        "updated",
        "added",
        "errSecInvalidItemRef (exit 40)",
        "errSecItemNotFound (exit 44)",
        "errSecInvalidItemRef (exit 40)",
        "mail/ana Work s1 r3",
        "deleted 1",
        "errSecItemNotFound (exit 44)",
        "mail/bob -  r3, mail/cy -  r1",
    ]

    @Test func theSameTablePassesThroughTheAgentAndWithoutIt() throws {
        let here = try TestVault()
        here.vault.lock()
        let passwordFile = here.directory.file("password")
        try Data((here.password.unsafeString ?? "").utf8).write(to: passwordFile)
        let local = ItemAccess(
            settings: AccessSettings(environment: ["FOB_VAULT": here.vault.url.path, "FOB_AGENT": "0"]),
            password: .file(passwordFile.path))
        let withoutAgent = Self.runTable(local)
        #expect(!local.usesAgent)

        let there = try TestVault()
        there.vault.lock()
        let agent = try InProcessAgent(vault: there)
        defer { agent.stop() }
        var environment = agent.environment
        environment["FOB_VAULT"] = there.vault.url.path
        let viaAgent = ItemAccess(
            settings: AccessSettings(environment: environment), password: .none("no password here"))
        let throughAgent = Self.runTable(viaAgent)
        #expect(viaAgent.usesAgent)

        #expect(withoutAgent == Self.expected)
        #expect(throughAgent == withoutAgent)
    }

    /// With no agent and no password, a locked vault is `interactionNotAllowed` (exit 36).
    @Test func withNoPasswordSourceALockedVaultIsInteractionNotAllowed() throws {
        let v = try TestVault()
        v.vault.lock()
        let store = ItemAccess(
            settings: AccessSettings(environment: ["FOB_VAULT": v.vault.url.path, "FOB_AGENT": "0"]),
            password: .none("no master password here"))
        #expect(thrownKeychainError { try store.list() }?.statusName == "errSecInteractionNotAllowed")
    }

    /// A subscriber hears of a write through the agent within 100 ms (the
    /// agent publishes as it answers), and of one made by another connection
    /// to the vault within 300 ms of each write's end (the agent looks every 200 ms).
    @Test func aWatcherHearsOfWritesWithin300Milliseconds() throws {
        let v = try TestVault()
        v.vault.lock()
        let agent = try InProcessAgent(vault: v)
        defer { agent.stop() }
        var environment = agent.environment
        environment["FOB_VAULT"] = v.vault.url.path
        let store = ItemAccess(settings: AccessSettings(environment: environment), password: .none("none"))
        store.linkToAgent()
        let heard = ArrivalLog<AgentEvent>()
        // Kind, key and revision: the summary is checked in AgentFeedTests.
        let watch = try #require(
            store.watch { heard.append(AgentEvent(kind: $0.kind, key: $0.key, revision: $0.revision)) })
        defer { watch.cancel() }

        try store.add(Item(service: "mail", account: "ana", secret: .text("s")))
        let start = Date()
        let added = heard.arrival(
            of: AgentEvent(kind: .added, key: ItemKey(service: "mail", account: "ana"), revision: 1))
        #expect(try #require(added).timeIntervalSince(start) < 0.1)

        let other = try Vault(url: v.vault.url)
        try other.unlock(password: v.password)
        try other.delete(matching: .key(service: "mail", account: "ana"))
        let otherStart = Date()
        let deleted = heard.arrival(
            of: AgentEvent(kind: .deleted, key: ItemKey(service: "mail", account: "ana"), revision: 1))
        #expect(try #require(deleted).timeIntervalSince(otherStart) < 0.3)
    }
}

import FobAccess
import FobAgent
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobSecretService

/// The provider's cache against a real agent served by this process: what
/// the agent decrypts for a `GetSecrets` (``Vault/recordsDecrypted``), and
/// a write by another client reaching the cache through the change feed.
@Suite(.serialized) struct ItemCacheAgentTests {
    /// An agent on a private socket, and the vault instance it opened.
    final class Served: @unchecked Sendable {
        let runtime = TemporaryDirectory(prefix: "fob-ss-rt")
        let vault: TestVault
        let server: AgentServer
        private(set) var opened: Vault?
        private let done = DispatchSemaphore(value: 0)

        init(items: [Item]) throws {
            chmod(runtime.url.path, 0o700)
            vault = try TestVault()
            try vault.vault.add(contentsOf: items)
            vault.vault.lock()
            let endpoint = AgentEndpoint(vaultURL: vault.vault.url, environment: ["XDG_RUNTIME_DIR": runtime.url.path])
            let box = OpenedBox()
            server = AgentServer(
                endpoint: endpoint,
                core: AgentCore(
                    vaultURL: vault.vault.url,
                    openVault: { (url) throws(KeychainError) in
                        let vault = try Vault(url: url)
                        box.vault = vault
                        return vault
                    }))
            try server.bind()
            let thread = Thread { [server, done] in
                server.run()
                done.signal()
            }
            thread.start()
            guard case .ok = server.core.handle(.unlock(password: vault.password, idleSeconds: 0, maxSeconds: 0)) else {
                throw KeychainError.authFailed
            }
            opened = box.vault
        }

        var client: AgentClient { AgentClient(endpoint: server.endpoint) }

        func stop() {
            unlink(server.endpoint.socket)
            done.wait()
        }
    }

    final class OpenedBox: @unchecked Sendable { var vault: Vault? }

    /// Waits (at most 5 s) until the feed's descriptor turns readable.
    static func waitForEvents(_ cache: ItemCache) {
        var fd = pollfd(fd: cache.inbox.wakeFD, events: Int16(POLLIN), revents: 0)
        _ = poll(&fd, 1, 5_000)
    }

    @Test func getSecretsOfTenItemsDecryptsTenAndOfNineUnknownPathsNone() throws {
        let items = (0..<2_000).map { Item(service: "svc\($0)", account: "ana", secret: .text("secret \($0)")) }
        let served = try Served(items: items)
        defer { served.stop() }
        let vault = try #require(served.opened)
        let cache = ItemCache(AgentSecretStore(client: served.client))
        #expect(try cache.summaries().count == 2_000)

        let ten = stride(from: 0, to: 2_000, by: 200).map { items[$0].persistentID }
        let before = vault.recordsDecrypted
        let found = try cache.secrets(of: ten)
        #expect(vault.recordsDecrypted - before == 10)
        #expect(found[items[400].persistentID]?.unsafeString == "secret 400")
        #expect(found.count == 10)

        let beforeUnknown = vault.recordsDecrypted
        #expect(try cache.secrets(of: (0..<9).map { _ in UUID() }).isEmpty)
        #expect(vault.recordsDecrypted == beforeUnknown)
    }

    /// `fob add` through another connection: the cache hears it from the
    /// agent's feed, with no vault file to look at, and reads that one item.
    @Test func aWriteByAnotherClientReachesTheCacheThroughTheFeed() throws {
        let served = try Served(items: (0..<20).map { Item(service: "s\($0)", account: "a", secret: .text("x")) })
        defer { served.stop() }
        let vault = try #require(served.opened)
        let cache = ItemCache(AgentSecretStore(client: served.client))
        _ = try cache.summaries()
        #expect(cache.hearsFeed)

        let added = Item(service: "mail", account: "ana", secret: .text("pw"))
        let writer = AgentStore(client: served.client)
        try writer.add(added)
        Self.waitForEvents(cache)
        #expect(cache.takeChanges() == [.item(signal: "ItemCreated", added.persistentID)])
        let before = vault.recordsDecrypted
        #expect(try cache.summary(added.persistentID).service == "mail")
        #expect(vault.recordsDecrypted - before <= 1, "the added item only, not a listing")
        #expect(try cache.summaries().count == 21)

        // The provider's own write is signalled by the provider, once.
        try cache.add(Item(service: "own", account: "b", secret: .text("y")))
        Self.waitForEvents(cache)
        usleep(100_000)
        #expect(cache.takeChanges().isEmpty)
    }
}

import FobAccess
import FobAgent
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobSecretService

/// A store of fixed items that counts the requests it answers and, when
/// asked to, hands the test the change feed's callbacks.
final class CountingStore: SecretStore, @unchecked Sendable {
    var items: [Item]
    var unlocked = true
    var listings = 0
    /// Requests by persistent ID, and the secrets they carried (each decrypts one record).
    var lookups = 0
    var secretsRead = 0
    var stateChecks = 0
    var sendsEvents = false
    var onEvent: (@Sendable (AgentEvent) -> Void)?

    init(count: Int) {
        items = (0..<count).map { i in
            Item(service: "svc\(i)", account: "user\(i)", secret: SecretBytes(utf8: "secret-\(i)"))
        }
    }

    private func guardUnlocked() throws(KeychainError) {
        if !unlocked { throw .interactionNotAllowed("locked") }
    }

    var isUnlocked: Bool {
        stateChecks += 1
        return unlocked
    }

    func forEachItem(_ body: (Item) -> Void) throws(KeychainError) {
        try guardUnlocked()
        listings += 1
        for item in items {
            var copy = item
            copy.secret = nil
            body(copy)
        }
    }

    func items(ids: [UUID], detail: ItemDetail) throws(KeychainError) -> [Item] {
        try guardUnlocked()
        lookups += 1
        let found = ids.compactMap { id in items.first { $0.persistentID == id } }
        let withSecret = detail == .secret || detail == .secretOnly
        if withSecret { secretsRead += found.count }
        return found.map { item in
            var copy = item
            if !withSecret { copy.secret = nil }
            return copy
        }
    }

    func exists(service: String, account: String) throws(KeychainError) -> Bool { false }

    func add(_ item: Item) throws(KeychainError) -> [AgentEvent] {
        var added = item
        added.revision = 1
        items.append(added)
        return [AgentEvent(kind: .added, summary: added)]
    }

    func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) -> [AgentEvent] {
        guard let index = items.firstIndex(where: { $0.persistentID == item.persistentID }) else {
            throw .itemNotFound("")
        }
        if let label = changes.label { items[index].label = label }
        items[index].revision += 1
        return [AgentEvent(kind: .changed, summary: items[index])]
    }

    func delete(_ item: Item) throws(KeychainError) -> [AgentEvent] {
        guard let index = items.firstIndex(where: { $0.persistentID == item.persistentID }) else {
            throw .itemNotFound("")
        }
        return [AgentEvent(kind: .deleted, summary: items.remove(at: index))]
    }

    func lock() throws(KeychainError) { unlocked = false }
    func unlock(password: SecretBytes) throws(KeychainError) { unlocked = true }

    func watch(onEvent: @escaping @Sendable (AgentEvent) -> Void, onEnd: @escaping @Sendable () -> Void)
        -> (any StoreWatch)?
    {
        guard sendsEvents else { return nil }
        self.onEvent = onEvent
        return FakeWatch()
    }

    /// Another process's write, as the agent's feed tells of it.
    func changedElsewhere(_ kind: AgentEvent.Kind, _ item: Item) { onEvent?(AgentEvent(kind: kind, summary: item)) }
}

/// A subscription that stays active.
final class FakeWatch: StoreWatch {
    var isActive: Bool { true }
    func cancel() {}
}

@Suite struct ItemCacheTests {
    @Test func propertiesOfEveryItemCostOneListingWhileTheFeedIsHeard() throws {
        let store = CountingStore(count: 50)
        store.sendsEvents = true
        let cache = ItemCache(store)
        _ = try cache.summaries()
        // Past the lock state's lifetime, as when a client reads a thousand items.
        usleep(useconds_t(ItemCache.lifetime * 1_000_000) + 100_000)
        for item in store.items {
            cache.beginMessage()
            #expect(try cache.summary(item.persistentID).account == item.account)
        }
        #expect(store.listings == 1)
        #expect(store.lookups == 0, "no request per item")
        #expect(store.stateChecks == 0, "the feed tells the lock state")
    }

    /// `fob add`, `fob update` and `fob rm` elsewhere reach the cache
    /// through the agent's feed alone (the cache knows no vault file): the
    /// catalog is patched, the changed items read again by ID, and the
    /// provider hears what to signal.
    @Test func changesElsewherePatchTheCatalogFromTheFeed() throws {
        let store = CountingStore(count: 5)
        store.sendsEvents = true
        let cache = ItemCache(store)
        _ = try cache.summaries()
        let added = Item(service: "mail", account: "ana", secret: .text("pw"))
        store.items.append(added)
        store.changedElsewhere(.added, added)
        store.items[1].label = "Renamed"
        store.items[1].revision += 1
        store.changedElsewhere(.changed, store.items[1])
        let deleted = store.items.remove(at: 3)
        store.changedElsewhere(.deleted, deleted)
        #expect(
            cache.takeChanges() == [
                .item(signal: "ItemCreated", added.persistentID),
                .item(signal: "ItemChanged", store.items[1].persistentID),
                .item(signal: "ItemDeleted", deleted.persistentID),
            ])
        #expect(try cache.summary(added.persistentID).account == "ana")
        #expect(try cache.summary(store.items[1].persistentID).label == "Renamed")
        #expect(throws: KeychainError.itemNotFound("no item \(deleted.persistentID)")) {
            try cache.summary(deleted.persistentID)
        }
        #expect(store.listings == 1, "patched, not listed again")
        #expect(store.lookups == 1, "the two changed items in one request")
        #expect(try cache.summaries().count == 5)
    }

    /// A write made here is applied at once; its echo from the feed is no news.
    @Test func ownWritesAreSignalledOnce() throws {
        let store = CountingStore(count: 2)
        store.sendsEvents = true
        let cache = ItemCache(store)
        _ = try cache.summaries()
        let item = Item(service: "own", account: "a", secret: .text("x"))
        try cache.add(item)
        #expect(try cache.summary(item.persistentID).revision == 1)
        store.changedElsewhere(.added, store.items[2])
        try cache.delete(store.items[0])
        #expect(cache.takeChanges().isEmpty)
        #expect(store.listings == 1)
    }

    @Test func theFeedsLockForgetsNamesAndSecrets() throws {
        let store = CountingStore(count: 3)
        store.sendsEvents = true
        let cache = ItemCache(store)
        _ = try cache.secrets(of: store.items.map(\.persistentID))
        #expect(cache.holdsSecrets)
        store.unlocked = false
        store.onEvent?(AgentEvent(kind: .locked, key: nil))
        #expect(cache.takeChanges() == [.lockState])
        #expect(!cache.holdsNames)
        #expect(!cache.isUnlocked)
        #expect(throws: KeychainError.interactionNotAllowed("the vault is locked")) {
            try cache.summary(store.items[0].persistentID)
        }
        #expect(store.stateChecks == 0)
    }

    /// A create appends to the catalog held (no listing), and a lock hands
    /// that catalog, last create included, to what is built from it (the
    /// locked-search index) before dropping it.
    @Test func aLockHandsTheCatalogWithTheLastCreateOverBeforeDroppingIt() throws {
        let store = CountingStore(count: 3)
        store.sendsEvents = true
        let cache = ItemCache(store)
        #expect(try cache.summaries().count == 3)
        let created = Item(service: "new", account: "ana", secret: .text("x"))
        try cache.add(created)
        #expect(try cache.summaries().count == 4)
        #expect(store.listings == 1)
        nonisolated(unsafe) var handed: (count: Int, hasNew: Bool, generation: Int)?
        cache.willDropCatalog = { catalog, generation in
            handed = (catalog.count, catalog.contains(service: "new", account: "ana", accessGroup: ""), generation)
        }
        let generation = cache.generation
        store.unlocked = false
        store.onEvent?(AgentEvent(kind: .locked, key: nil))
        #expect(cache.takeChanges() == [.lockState])
        #expect(handed?.count == 4 && handed?.hasNew == true && handed?.generation == generation)
        #expect(cache.heldCatalog == nil)
    }

    /// A delete another process finished before a client asked: its event
    /// came first, so the message that follows no longer finds the item,
    /// and the signal still goes out at the next idle moment.
    @Test func anEventThatCameBeforeAMessageIsAppliedBeforeItIsAnswered() throws {
        let store = CountingStore(count: 3)
        store.sendsEvents = true
        let cache = ItemCache(store)
        #expect(try cache.summaries().count == 3)
        let gone = store.items[1]
        store.items.remove(at: 1)
        store.changedElsewhere(.deleted, gone)
        cache.beginMessage()
        #expect(throws: KeychainError.itemNotFound("no item \(gone.persistentID)")) {
            try cache.summary(gone.persistentID)
        }
        #expect(cache.takeChanges() == [.item(signal: "ItemDeleted", gone.persistentID)])
        #expect(cache.takeChanges().isEmpty)
    }

    @Test func getSecretsOfTenOfTenThousandReadsTenAndOfUnknownIDsNone() throws {
        let store = CountingStore(count: 10_000)
        let cache = ItemCache(store)
        let ten = stride(from: 0, to: 10_000, by: 1000).map { store.items[$0].persistentID }
        let found = try cache.secrets(of: ten)
        #expect(found.count == 10)
        #expect(found[store.items[3000].persistentID]?.unsafeString == "secret-3000")
        #expect(store.lookups == 1, "one request")
        #expect(store.secretsRead == 10)
        #expect(try cache.secrets(of: (0..<9).map { _ in UUID() }).isEmpty)
        #expect(store.lookups == 1, "nothing asked for paths that name no item")
        #expect(store.secretsRead == 10)
    }

    @Test func secretsOfOneGetSecretsAnswerTheGetSecretThatFollowsUntilAnEventNamesThem() throws {
        let store = CountingStore(count: 20)
        store.sendsEvents = true
        let cache = ItemCache(store)
        _ = try cache.secrets(of: store.items.map(\.persistentID))
        for (i, item) in store.items.enumerated() {
            #expect(try cache.secret(item.persistentID).unsafeString == "secret-\(i)")
        }
        #expect(store.lookups == 1, "no request per item")
        #expect(store.stateChecks == 0, "the feed is heard: no state request either")
        store.items[4].secret = .text("changed")
        store.items[4].revision += 1
        store.changedElsewhere(.changed, store.items[4])
        _ = cache.takeChanges()
        #expect(try cache.secret(store.items[4].persistentID).unsafeString == "changed", "not the held secret")
    }

    /// Without the feed the agent is asked before each held secret, and a
    /// listing serves one message only.
    @Test func withoutTheFeedHeldSecretsAskTheAgentAndListingsLastOneMessage() throws {
        let store = CountingStore(count: 20)
        let cache = ItemCache(store)
        _ = try cache.secrets(of: store.items.map(\.persistentID))
        #expect(try cache.secret(store.items[0].persistentID).unsafeString == "secret-0")
        #expect(store.stateChecks == 1)
        store.unlocked = false
        #expect(throws: KeychainError.interactionNotAllowed("the vault is locked")) {
            try cache.secret(store.items[0].persistentID)
        }
        #expect(!cache.holdsSecrets)
        store.unlocked = true
        cache.beginMessage()
        _ = try cache.summaries()
        _ = try cache.summaries()
        #expect(store.listings == 2)
        cache.beginMessage()
        _ = try cache.summaries()
        #expect(store.listings == 3)
    }

    @Test func heldSecretsGoAfterTheirLifetime() throws {
        let store = CountingStore(count: 3)
        let cache = ItemCache(store)
        _ = try cache.secrets(of: store.items.map(\.persistentID))
        cache.dropExpiredSecrets()
        #expect(cache.holdsSecrets)
        usleep(useconds_t(ItemCache.secretLifetime * 1_000_000) + 100_000)
        cache.dropExpiredSecrets()
        #expect(!cache.holdsSecrets)
    }
}

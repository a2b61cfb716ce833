import FobAccess
import FobStore
import FobSystem
import FobTestSupport
import FoundationEssentials
@preconcurrency import Glibc
import Testing

@testable import FobSecretService

/// A store of fixed items that counts the requests it answers.
final class CountingStore: SecretStore, @unchecked Sendable {
    var items: [Item]
    var unlocked = true
    var listings = 0
    var secretListings = 0
    var lookups = 0
    /// Lookups that asked for the secret (each decrypts one record).
    var secretLookups = 0
    var stateChecks = 0
    /// The agent's events, when the store sends them (see ``FakeWatch``).
    var onEvent: (@Sendable () -> Void)?
    var sendsEvents = false

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

    func list() throws(KeychainError) -> [Item] {
        try guardUnlocked()
        listings += 1
        return items.map { item in
            var copy = item
            copy.secret = nil
            return copy
        }
    }

    func listWithSecrets() throws(KeychainError) -> [Item] {
        try guardUnlocked()
        secretListings += 1
        return items
    }

    func get(persistentID: UUID, withSecret: Bool) throws(KeychainError) -> Item {
        try guardUnlocked()
        lookups += 1
        if withSecret { secretLookups += 1 }
        guard let item = items.first(where: { $0.persistentID == persistentID }) else { throw .itemNotFound("") }
        return item
    }

    func get(exact query: ItemQuery, withSecret: Bool) throws(KeychainError) -> Item {
        guard let persistentID = query.persistentID else { throw .itemNotFound("") }
        return try get(persistentID: persistentID, withSecret: withSecret)
    }

    func exists(service: String, account: String) throws(KeychainError) -> Bool { false }
    func add(_ item: Item) throws(KeychainError) { items.append(item) }
    func update(_ item: Item, with changes: ItemChanges) throws(KeychainError) {}
    func delete(_ item: Item) throws(KeychainError) {}
    func lock() throws(KeychainError) { unlocked = false }
    func unlock(password: SecretBytes) throws(KeychainError) { unlocked = true }
    func watch(_ onEvent: @escaping @Sendable () -> Void) -> (any StoreWatch)? {
        guard sendsEvents else { return nil }
        self.onEvent = onEvent
        return FakeWatch()
    }
}

/// A subscription that stays active.
final class FakeWatch: StoreWatch {
    var isActive: Bool { true }
    func cancel() {}
}

@Suite struct CachingSecretStoreTests {
    /// A vault file whose stamp the cache watches (its contents do not matter).
    static func vaultFile(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.file("vault.db").path
        try Data("v1".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func propertiesOfEveryItemCostOneListingWhileTheVaultFileIsUnchanged() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let vault = try Self.vaultFile(directory)
        let store = CountingStore(count: 50)
        let cache = CachingSecretStore(store, vaultPath: vault)
        _ = try cache.summaries()
        // Past the locked state's lifetime, as when a client reads a thousand items.
        usleep(useconds_t(CachingSecretStore.lifetime * 1_000_000) + 100_000)
        for item in store.items {
            #expect(try cache.summary(item.persistentID).account == item.account)
        }
        #expect(store.listings == 1)
        #expect(store.lookups == 0, "no request per item")
        #expect(store.stateChecks == 1, "the state is asked again once")
        // A write by another process (the file changes) makes the next read list again.
        try Data("v2, longer".utf8).write(to: URL(fileURLWithPath: vault))
        usleep(useconds_t(CachingSecretStore.lifetime * 1_000_000) + 100_000)
        _ = try cache.summary(store.items[0].persistentID)
        #expect(store.listings == 2)
    }

    @Test func getSecretsOfTenOfTenThousandItemsDecryptsTenAndOfUnknownIDsNone() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let store = CountingStore(count: 10_000)
        let cache = CachingSecretStore(store, vaultPath: try Self.vaultFile(directory))
        let ten = stride(from: 0, to: 10_000, by: 1000).map { store.items[$0].persistentID }
        let found = try cache.secrets(of: ten)
        #expect(found.count == 10)
        #expect(found[store.items[3000].persistentID]?.unsafeString == "secret-3000")
        #expect(store.secretListings == 0, "no request for every secret")
        #expect(store.secretLookups == 10)
        let unknown = (0..<9).map { _ in UUID() }
        #expect(try cache.secrets(of: unknown).isEmpty)
        #expect(store.secretListings == 0)
        #expect(store.secretLookups == 10, "nothing decrypted for paths that name no item")
    }

    @Test func getSecretsOfMostItemsIsOneRequest() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let store = CountingStore(count: 20)
        let cache = CachingSecretStore(store, vaultPath: try Self.vaultFile(directory))
        let found = try cache.secrets(of: store.items.prefix(12).map(\.persistentID))
        #expect(found.count == 12)
        #expect(store.secretListings == 1)
        #expect(store.secretLookups == 0)
    }

    @Test func secretsOfOneGetSecretsAnswerTheGetSecretThatFollowsUntilALock() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let store = CountingStore(count: 20)
        let cache = CachingSecretStore(store, vaultPath: try Self.vaultFile(directory))
        #expect(try cache.secrets().count == 20)
        #expect(cache.holdsSecrets)
        for (i, item) in store.items.enumerated() {
            #expect(try cache.secret(item.persistentID).unsafeString == "secret-\(i)")
        }
        #expect(store.lookups == 0, "no decrypting request per item")
        #expect(store.stateChecks == 20, "the agent's state is asked before each")
        // Locked elsewhere (`fob lock`): nothing more comes from the held secrets, and they go.
        store.unlocked = false
        #expect(throws: KeychainError.interactionNotAllowed("the vault is locked")) {
            try cache.secret(store.items[0].persistentID)
        }
        #expect(!cache.holdsSecrets)
    }

    @Test func heldSecretsGoAfterTheirLifetimeAndAtAWrite() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let store = CountingStore(count: 3)
        let cache = CachingSecretStore(store, vaultPath: try Self.vaultFile(directory))
        _ = try cache.secrets()
        try cache.add(Item(service: "new", account: "a", secret: SecretBytes(utf8: "n")))
        #expect(!cache.holdsSecrets, "a write drops them")
        _ = try cache.secrets()
        cache.dropExpiredSecrets()
        #expect(cache.holdsSecrets)
        usleep(useconds_t(CachingSecretStore.secretLifetime * 1_000_000) + 100_000)
        cache.dropExpiredSecrets()
        #expect(!cache.holdsSecrets)
        _ = try cache.secret(store.items[0].persistentID)
        #expect(store.lookups == 1)
    }

    @Test func withTheAgentsEventsHeldSecretsAnswerWithoutAskingUntilAnEvent() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let store = CountingStore(count: 10)
        store.sendsEvents = true
        let cache = CachingSecretStore(store, vaultPath: try Self.vaultFile(directory))
        _ = try cache.secrets()
        for (i, item) in store.items.enumerated() {
            #expect(try cache.secret(item.persistentID).unsafeString == "secret-\(i)")
        }
        #expect(store.stateChecks == 0, "no request per item while the agent is heard")
        #expect(store.lookups == 0)
        // `fob lock`: the agent's event comes, so the next read asks, and finds it locked.
        store.unlocked = false
        store.onEvent?()
        #expect(throws: KeychainError.interactionNotAllowed("the vault is locked")) {
            try cache.secret(store.items[0].persistentID)
        }
        #expect(store.stateChecks == 1)
        #expect(!cache.holdsSecrets)
    }

    @Test func anItemChangedOrDeletedElsewhereIsReadFreshAtTheNextMessage() throws {
        let directory = TemporaryDirectory(prefix: "fob-ss-cache")
        let vault = try Self.vaultFile(directory)
        let store = CountingStore(count: 5)
        store.items[1].customFields = [CustomField(name: "attr:service", value: SecretBytes(utf8: "old"))]
        let cache = CachingSecretStore(store, vaultPath: vault)
        cache.beginMessage()
        _ = try cache.secrets()
        #expect(try cache.summary(store.items[1].persistentID).attributes.map(\.value) == ["old"])
        // Another process (`fob update` through the agent) writes: the file changes.
        store.items[1].customFields = [CustomField(name: "attr:service", value: SecretBytes(utf8: "new"))]
        store.items[1].label = "Renamed"
        store.items[1].secret = SecretBytes(utf8: "changed")
        let deleted = store.items.remove(at: 3)
        try Data("v2, written elsewhere".utf8).write(to: URL(fileURLWithPath: vault))
        // Within the same message the file is not looked at again; the next message sees it.
        cache.beginMessage()
        let changed = try cache.summary(store.items[1].persistentID)
        #expect(changed.attributes.map(\.value) == ["new"])
        #expect(changed.label == "Renamed")
        #expect(try cache.secret(store.items[1].persistentID).unsafeString == "changed", "not the held secret")
        let gone = KeychainError.itemNotFound("no item \(deleted.persistentID)")
        #expect(throws: gone) { try cache.summary(deleted.persistentID) }
        #expect(throws: gone) { try cache.secret(deleted.persistentID) }
    }
}

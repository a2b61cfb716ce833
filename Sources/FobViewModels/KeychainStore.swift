import Foundation
import FobStore

/// The primary key of an item: class, access group, service and account.
public struct ItemKey: Hashable, Sendable {
    /// The item class (`kSecClass`).
    public var itemClass: ItemClass
    /// The access group (`kSecAttrAccessGroup`); empty by default.
    public var accessGroup: String
    /// The service (`kSecAttrService`).
    public var service: String
    /// The account (`kSecAttrAccount`), shown as "User ID" in the form.
    public var account: String

    /// Creates a key (generic password, empty access group unless given).
    public init(itemClass: ItemClass = .genericPassword, accessGroup: String = "", service: String, account: String) {
        self.itemClass = itemClass
        self.accessGroup = accessGroup
        self.service = service
        self.account = account
    }

    /// The key of `item`.
    public init(_ item: Item) {
        self.init(itemClass: item.itemClass, accessGroup: item.accessGroup, service: item.service, account: item.account)
    }

    /// The store query for exactly this item.
    public var query: ItemQuery {
        ItemQuery(itemClass: itemClass, service: service, account: account, accessGroup: accessGroup)
    }
}

/// What the view models need from the item store. ``VaultStore`` is the
/// live implementation over `FobStore.Vault`; ``InMemoryStore`` is a fake
/// for tests.
///
/// Instances are used from one thread (the UI's).
public protocol KeychainStore: AnyObject {
    /// Whether a vault exists to unlock (otherwise the create screen shows).
    var vaultExists: Bool { get }
    /// Whether the store holds no keys.
    var isLocked: Bool { get }
    /// Creates the vault, unlocked.
    /// - Throws: `.param` for an empty or too long password; `.io` if it exists or cannot be written.
    func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError)
    /// Unlocks with the master password.
    /// - Throws: `.authFailed` for a wrong password; `.noSuchKeychain`, `.decode`, `.io`.
    func unlock(password: SecretBytes) throws(KeychainError)
    /// Drops every key.
    func lock()
    /// Every item without secrets (any class and access group).
    /// - Throws: `.interactionNotAllowed` when locked; `.decode`.
    func allItems() throws(KeychainError) -> [Item]
    /// The item with this key, with its secret.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.decode`.
    func item(_ key: ItemKey) throws(KeychainError) -> Item
    /// Items matching `query`; `.itemNotFound` when none.
    /// - Parameter withSecrets: whether to decrypt secrets.
    /// - Throws: `.itemNotFound`, `.interactionNotAllowed`, `.decode`.
    func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item]
    /// Adds or updates the generic password with this service and account (empty access group).
    /// - Throws: `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    func save(service: String, account: String, secret: SecretBytes) throws(KeychainError) -> Vault.SaveOutcome
    /// Deletes every item matching `query`.
    @discardableResult
    /// - Returns: how many were deleted.
    /// - Throws: `.itemNotFound` when none; `.interactionNotAllowed`, `.io`.
    func delete(matching query: ItemQuery) throws(KeychainError) -> Int
    /// A number that changes when another process commits a change (SQLite `PRAGMA data_version`).
    /// - Throws: `.io`, `.decode`.
    func dataVersion() throws(KeychainError) -> Int64
}

/// The live store: a `Vault` file, opened on first use.
public final class VaultStore: KeychainStore {
    /// The vault file.
    public let url: URL
    /// The open vault, once created or unlocked.
    public private(set) var vault: Vault?
    private let now: @Sendable () -> Date

    /// A store for the vault at `url`; nothing is opened yet.
    /// - Parameter now: the clock for item dates.
    public init(url: URL, now: @escaping @Sendable () -> Date = Date.init) {
        self.url = url
        self.now = now
    }

    /// Wraps an already open vault.
    public init(vault: Vault) {
        self.url = vault.url
        self.vault = vault
        self.now = Date.init
    }

    public var vaultExists: Bool { vault != nil || Vault.exists(at: url) }
    public var isLocked: Bool { vault?.isLocked ?? true }

    public func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        vault = try Vault.create(at: url, password: password, kdf: kdf, now: now)
    }

    public func unlock(password: SecretBytes) throws(KeychainError) {
        try opened().unlock(password: password)
    }

    public func lock() { vault?.lock() }

    public func allItems() throws(KeychainError) -> [Item] {
        try opened().allItems()
    }

    public func item(_ key: ItemKey) throws(KeychainError) -> Item {
        try opened().items(matching: key.query, limit: .one, withSecrets: true)[0]
    }

    public func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item] {
        try opened().items(matching: query, withSecrets: withSecrets)
    }

    public func save(service: String, account: String, secret: SecretBytes) throws(KeychainError) -> Vault.SaveOutcome {
        try opened().save(service: service, account: account, secret: secret)
    }

    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        try opened().delete(matching: query)
    }

    public func dataVersion() throws(KeychainError) -> Int64 {
        guard let vault else { return 0 }
        return try vault.dataVersion()
    }

    private func opened() throws(KeychainError) -> Vault {
        if let vault { return vault }
        let opened = try Vault(url: url, now: now)
        vault = opened
        return opened
    }
}

/// A store in memory for tests: a password, items, a data version you can
/// bump to simulate another process, and injectable failures.
public final class InMemoryStore: KeychainStore {
    /// The master password (`nil`: no vault yet).
    public private(set) var password: SecretBytes?
    /// The KDF parameters given to ``create(password:kdf:)``.
    public private(set) var createdKDF: KDFParameters?
    /// The stored items, with secrets.
    public private(set) var storedItems: [ItemKey: Item] = [:]
    /// Whether the fake is locked (it starts locked).
    public private(set) var isLocked = true
    /// The value ``dataVersion()`` returns.
    public var version: Int64 = 1
    /// Deletes of these keys fail with `.io`.
    public var failingDeletes: Set<ItemKey> = []
    /// When set, every operation but lock throws this.
    public var failure: KeychainError?
    /// How many times each operation ran, by name ("unlock", "allItems", …).
    public private(set) var calls: [String: Int] = [:]
    /// The clock for item dates.
    public var now: () -> Date

    /// An empty store; with `password`, a vault exists (locked).
    public init(password: String? = nil, now: @escaping () -> Date = Date.init) {
        self.password = password.map { SecretBytes(utf8: $0) }
        self.now = now
    }

    public var vaultExists: Bool { password != nil }

    /// Puts an item in place as another process would (bumps ``version``).
    public func externalPut(_ item: Item) {
        storedItems[ItemKey(item)] = item
        version += 1
    }

    /// Removes an item as another process would (bumps ``version``).
    public func externalRemove(_ key: ItemKey) {
        storedItems[key] = nil
        version += 1
    }

    private func record(_ name: String) throws(KeychainError) {
        calls[name, default: 0] += 1
        if let failure { throw failure }
    }

    private func requireUnlocked() throws(KeychainError) {
        if isLocked { throw .interactionNotAllowed("the vault is locked") }
    }

    public func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        try record("create")
        guard self.password == nil else { throw .io("a file already exists") }
        guard password.count > 0 else { throw .param("the master password is empty") }
        self.password = password
        createdKDF = kdf
        isLocked = false
    }

    public func unlock(password: SecretBytes) throws(KeychainError) {
        try record("unlock")
        guard let stored = self.password else { throw .noSuchKeychain("memory") }
        guard stored == password else { throw .authFailed }
        isLocked = false
    }

    public func lock() {
        calls["lock", default: 0] += 1
        isLocked = true
    }

    public func allItems() throws(KeychainError) -> [Item] {
        try record("allItems")
        try requireUnlocked()
        return storedItems.values.map { item in
            var copy = item
            copy.secret = nil
            return copy
        }.sorted { ($0.service, $0.account) < ($1.service, $1.account) }
    }

    public func item(_ key: ItemKey) throws(KeychainError) -> Item {
        try record("item")
        try requireUnlocked()
        guard let item = storedItems[key] else { throw .itemNotFound("service \"\(key.service)\", account \"\(key.account)\"") }
        return item
    }

    public func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item] {
        try record("items")
        try requireUnlocked()
        let found = storedItems.values.filter { item in
            if let c = query.itemClass, c != item.itemClass { return false }
            if let s = query.service, s != item.service { return false }
            if let a = query.account, a != item.account { return false }
            if let g = query.accessGroup, g != item.accessGroup { return false }
            if let k = query.kind, k != item.kind { return false }
            return true
        }.map { item -> Item in
            var copy = item
            if !withSecrets { copy.secret = nil }
            return copy
        }.sorted { ($0.service, $0.account) < ($1.service, $1.account) }
        guard !found.isEmpty else { throw .itemNotFound("service \"\(query.service ?? "")\"") }
        return found
    }

    public func save(service: String, account: String, secret: SecretBytes) throws(KeychainError) -> Vault.SaveOutcome {
        try record("save")
        try requireUnlocked()
        let key = ItemKey(service: service, account: account)
        let stamp = now()
        if var existing = storedItems[key] {
            existing.secret = secret
            existing.modified = stamp
            storedItems[key] = existing
            return .updated
        }
        storedItems[key] = Item(service: service, account: account, created: stamp, modified: stamp, secret: secret)
        return .added
    }

    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        try record("delete")
        try requireUnlocked()
        let found = try items(matching: query, withSecrets: false)
        for item in found where failingDeletes.contains(ItemKey(item)) {
            throw .io("cannot delete \(item.displayName)")
        }
        for item in found { storedItems[ItemKey(item)] = nil }
        return found.count
    }

    public func dataVersion() throws(KeychainError) -> Int64 {
        try record("dataVersion")
        return version
    }
}

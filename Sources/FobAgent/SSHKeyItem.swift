import FobSSH
import FobStore
import FobSystem
import FoundationEssentials

/// How an SSH key is kept in the vault: an item of kind `ssh-key`, service
/// `ssh-key`, account the key's name; the private key (``SSHPrivateKey/privateWire()``)
/// sealed as the item's secret; the comment as its label; and as visible
/// custom fields its type, fingerprint, public key line, allowed hosts
/// (one pattern a line), destination constraints (base64 of their wire
/// encoding) and whether each use must be confirmed.
public enum SSHKeyItem {
    /// The service of every `ssh-key` item.
    public static let service = "ssh-key"
    static let typeField = "ssh-type"
    static let fingerprintField = "ssh-fingerprint"
    static let publicKeyField = "ssh-public-key"
    static let hostsField = "ssh-hosts"
    static let destinationsField = "ssh-destinations"
    static let confirmField = "ssh-confirm"

    /// The item for a key.
    /// - Parameters:
    ///   - name: the item's account (the name `fob ssh pub` and `fob ssh allow` take).
    ///   - hosts: `fob ssh allow` patterns; empty for everywhere.
    ///   - constraints: the destination constraints and confirm flag of `ssh-add` (its lifetime is not stored).
    public static func item(
        name: String, key: SSHPrivateKey, comment: String, hosts: [String] = [],
        constraints: SSHKeyConstraints = SSHKeyConstraints()
    ) -> Item {
        var fields = [
            CustomField(name: typeField, value: SecretBytes(utf8: key.publicKey.typeName)),
            CustomField(name: fingerprintField, value: SecretBytes(utf8: key.publicKey.fingerprint)),
            CustomField(name: publicKeyField, value: SecretBytes(utf8: key.publicKey.line(comment: comment))),
        ]
        if !hosts.isEmpty {
            fields.append(CustomField(name: hostsField, value: SecretBytes(utf8: hosts.joined(separator: "\n"))))
        }
        let wire = constraints.destinationsWire
        if !wire.isEmpty {
            fields.append(
                CustomField(name: destinationsField, value: SecretBytes(utf8: Base64.encode(wire, padding: true))))
        }
        if constraints.confirm { fields.append(CustomField(name: confirmField, value: SecretBytes(utf8: "yes"))) }
        return Item(
            service: service, account: name, label: comment.isEmpty ? nil : comment, kind: .sshKey,
            customFields: fields, secret: key.privateWire())
    }

    /// The public half and restrictions of an `ssh-key` item (read without its secret), or `nil` for another item.
    public static func stored(_ item: Item) -> SSHStoredKey? {
        guard item.kind == .sshKey, let line = field(item, publicKeyField),
            let parsed = try? SSHPublicKey.parse(line: line)
        else { return nil }
        let hosts = field(item, hostsField).map { $0.split(separator: "\n").map(String.init) } ?? []
        let destinations =
            field(item, destinationsField).flatMap(Base64.decode).flatMap {
                try? SSHKeyConstraints.destinations(wire: $0)
            }
            ?? []
        return SSHStoredKey(
            name: item.account, key: parsed.key, comment: item.label ?? "", hosts: SSHHostRules(patterns: hosts),
            destinations: destinations, confirm: field(item, confirmField) == "yes")
    }

    /// The private key sealed in an `ssh-key` item read with its secret.
    /// - Throws: ``SSHKeyError`` for a damaged secret.
    public static func privateKey(_ item: Item) throws(SSHKeyError) -> SSHPrivateKey {
        guard let secret = item.secret else { throw .badKeyFile("the item was read without its secret") }
        var bytes = secret.unsafeArray
        defer { bytes.wipe() }
        var reader = SSHReader(bytes)
        return try SSHPrivateKey.read(privateWire: &reader)
    }

    /// The item with its host patterns replaced (`fob ssh allow`).
    public static func withHosts(_ item: Item, hosts: [String]) -> [CustomField] {
        var fields = item.customFields.filter { $0.name != hostsField }
        if !hosts.isEmpty {
            fields.append(CustomField(name: hostsField, value: SecretBytes(utf8: hosts.joined(separator: "\n"))))
        }
        return fields
    }

    /// What a screen shows of an `ssh-key` item, as plain text (`nil` for
    /// another item, or one whose public key line cannot be read).
    public static func details(_ item: Item) -> SSHKeyDetails? {
        guard let stored = stored(item) else { return nil }
        let type = stored.key.keyType?.shortName ?? stored.key.typeName
        return SSHKeyDetails(
            comment: stored.comment, type: "\(type) \(stored.key.bits)", fingerprint: stored.key.fingerprint,
            publicKey: stored.key.line(comment: stored.comment), hosts: stored.hosts.patterns,
            destinationHops: stored.destinations.count, confirm: stored.confirm)
    }

    /// Whether a custom field is one of the key's own (``details(_:)`` shows them).
    public static func isKeyField(_ name: String) -> Bool {
        [typeField, fingerprintField, publicKeyField, hostsField, destinationsField, confirmField].contains(name)
    }

    static func field(_ item: Item, _ name: String) -> String? {
        item.customFields.first { $0.name == name }?.value.unsafeString
    }
}

/// An `ssh-key` item as a screen shows it: every value plain text.
public struct SSHKeyDetails: Sendable, Equatable {
    /// The comment (`ssh-add -l` shows it).
    public var comment: String
    /// The type and size, as `fob ssh ls` shows them (`ed25519 256`, `rsa 3072`).
    public var type: String
    /// The SHA-256 fingerprint (`SHA256:…`).
    public var fingerprint: String
    /// The public key line (`ssh-ed25519 AAAA… comment`).
    public var publicKey: String
    /// The hosts it is for (`fob ssh allow`); empty for everywhere.
    public var hosts: [String]
    /// How many `ssh-add -h` destination constraints it was added with.
    public var destinationHops: Int
    /// Whether each use is confirmed (`ssh-add -c`).
    public var confirm: Bool
}

/// The vault's `ssh-key` items as the SSH agent's key source, through the
/// agent's own item operations (so the vault's lock, timeouts and checks apply).
///
/// The public halves are kept between requests (REQUEST_IDENTITIES for 100
/// keys would otherwise open 100 records each time) and dropped at every
/// event of the agent's change feed: a write by anyone, a lock, an unlock.
/// A private key, once read for a signature, is kept decrypted (in
/// ``SecretBytes``) for the next ones while the vault stays unlocked and
/// unchanged (``AgentCore/unlockedStamp()``, checked on every signature):
/// dropped and wiped at any write, at lock (the change feed's event, and
/// ``forgetPrivateKeys()`` when the agent sees the lock) and at a timeout.
public final class VaultSSHKeys: SSHKeySource, @unchecked Sendable {
    private let core: AgentCore
    private let cacheLock = Lock()
    private var cached: [SSHStoredKey]?
    private let privateKeys: StampedCache<SSHPrivateKey>
    private var subscription: Int?
    /// Counts the drops, so that a listing read while a change came in is not kept.
    private var generation = 0

    /// Keys of the vault `core` serves.
    public init(core: AgentCore) {
        self.core = core
        privateKeys = StampedCache(core: core)
    }

    private func dropCache() {
        cacheLock.lock()
        cached = nil
        privateKeys.removeAll()
        generation += 1
        cacheLock.unlock()
    }

    public func forgetPrivateKeys() {
        privateKeys.removeAll()
    }

    /// Subscribes to the change feed once; each batch of events drops the cache.
    private func watchChanges() {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        guard subscription == nil, let id = core.subscribe() else { return }
        subscription = id
        let started = DetachedThread.start { [self] in
            while let events = core.subscribers.next(id, timeout: 1) {
                if !events.isEmpty { dropCache() }
            }
            cacheLock.lock()
            subscription = nil
            cached = nil
            privateKeys.removeAll()
            cacheLock.unlock()
        }
        if !started {
            core.subscribers.remove(id)
            subscription = nil
        }
    }

    /// Whether the vault is locked (after-first-unlock only counts as locked: ssh-key items are when-unlocked).
    public var isLocked: Bool { core.state != .unlocked }

    public func storedKeys() throws(SSHKeySourceError) -> [SSHStoredKey] {
        if isLocked { throw .locked }
        cacheLock.lock()
        let kept = subscription == nil ? nil : cached
        cacheLock.unlock()
        if let kept { return kept }
        watchChanges()
        cacheLock.lock()
        let before = generation
        cacheLock.unlock()
        let fresh = try keyItems().compactMap(SSHKeyItem.stored)
        cacheLock.lock()
        if subscription != nil && generation == before { cached = fresh }
        cacheLock.unlock()
        return fresh
    }

    public func privateKey(named name: String) throws(SSHKeySourceError) -> SSHPrivateKey {
        guard let stamp = core.unlockedStamp() else {
            forgetPrivateKeys()
            throw .locked
        }
        let key = try privateKeys.value(name, at: stamp) { () throws(SSHKeySourceError) -> SSHPrivateKey? in
            let query = ItemQuery(service: SSHKeyItem.service, account: name, kind: .sshKey)
            guard case .items(let found) = try answer(.get(query, limitOne: true, detail: .secret)),
                let item = found.first
            else { throw .notFound }
            do {
                return try SSHKeyItem.privateKey(item)
            } catch {
                throw .failed("the vault's key \(name) cannot be read: \(error)")
            }
        }
        guard let key else { throw .notFound }
        return key
    }

    /// How many private keys are kept decrypted now (for tests).
    var privateKeysKept: Int { privateKeys.count }

    public func store(_ key: SSHPrivateKey, comment: String, constraints: SSHKeyConstraints) throws(SSHKeySourceError) {
        defer { dropCache() }
        let existing = try keyItems()
        if let same = existing.first(where: { SSHKeyItem.stored($0)?.key == key.publicKey }) {
            let item = SSHKeyItem.item(name: same.account, key: key, comment: comment, constraints: constraints)
            let query = ItemQuery(service: SSHKeyItem.service, account: same.account)
            var changes = ItemChanges()
            changes.label = .some(item.label)
            changes.customFields = item.customFields
            _ = try answer(.update(query, changes))
            return
        }
        let base = comment.isEmpty ? key.publicKey.fingerprint : comment
        var name = base
        var suffix = 2
        while existing.contains(where: { $0.account == name }) {
            name = "\(base)-\(suffix)"
            suffix += 1
        }
        _ = try answer(.add(SSHKeyItem.item(name: name, key: key, comment: comment, constraints: constraints)))
    }

    /// The vault's `ssh-key` items as listed: their key fields, no secret (``ItemOperations/listed(_:)``).
    private func keyItems() throws(SSHKeySourceError) -> [Item] {
        let query = ItemQuery(service: SSHKeyItem.service, kind: .sshKey)
        do {
            guard case .items(let found) = try answer(.get(query, limitOne: false, detail: .listing)) else {
                return []
            }
            return found
        } catch .notFound {
            return []
        }
    }

    private func answer(_ request: AgentRequest) throws(SSHKeySourceError) -> AgentResponse {
        switch core.handle(request) {
        case .failure(.itemNotFound): throw .notFound
        case .failure(.interactionNotAllowed), .failure(.consentMissing): throw .locked
        case .failure(let error): throw .failed("\(error)")
        case let response: return response
        }
    }
}

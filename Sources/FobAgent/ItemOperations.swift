import FobStore
import FoundationEssentials

/// The item operations as one function over an unlocked vault, used by the
/// agent and by a command without an agent alike, so that results, errors
/// and exit statuses are the same either way.
public enum ItemOperations {
    /// `item` at ``ItemDetail/listing``: no secret, an empty one-time seed
    /// when it has one, custom field names and hidden flags with empty values;
    /// but an `ssh-key` item keeps the values of its key fields
    /// (``SSHKeyItem/isKeyField(_:)``: type, fingerprint, public key line,
    /// hosts, destination constraints, confirm flag), which are the public
    /// half of the key and its restrictions. So `fob ssh ls`, `fob ssh pub`
    /// and the SSH agent's list of identities read no secret, and the access
    /// rules do not ask for them; a signature reads the private key and does.
    public static func listed(_ item: Item) -> Item {
        var copy = item
        copy.secret = nil
        if copy.oneTimePassword != nil { copy.oneTimePassword = SecretBytes([]) }
        let keepsKeyFields = item.kind == .sshKey
        copy.customFields = item.customFields.map {
            keepsKeyFields && SSHKeyItem.isKeyField($0.name)
                ? $0 : CustomField(name: $0.name, value: SecretBytes([]), isHidden: $0.isHidden)
        }
        return copy
    }

    /// The prefix of the custom fields that hold an item's Secret Service
    /// attributes (`attr:NAME`), whose values ``searchAttributes(_:)`` keeps.
    public static let attributeFieldPrefix = "attr:"
    /// The custom field holding a Secret Service content type.
    public static let contentTypeField = "content-type"

    /// `item` at ``ItemDetail/searchAttributes``: as ``listed(_:)``, but the
    /// values of the `attr:NAME` and `content-type` fields are kept.
    public static func searchAttributes(_ item: Item) -> Item {
        var copy = listed(item)
        copy.customFields = zip(item.customFields, copy.customFields).map { whole, listed in
            whole.name.hasPrefix(attributeFieldPrefix) || whole.name == contentTypeField ? whole : listed
        }
        return copy
    }

    /// `item` at ``ItemDetail/secretOnly``: its class, primary key (with
    /// the internet password's parts), persistent ID, revision, dates,
    /// kind and class of protection, and its secret; nothing else.
    public static func secretOnly(_ item: Item) -> Item {
        var copy = Item(
            itemClass: item.itemClass, service: item.service, account: item.account, accessGroup: item.accessGroup,
            kind: item.kind, accessible: item.accessible, created: item.created, modified: item.modified,
            persistentID: item.persistentID, secret: item.secret)
        copy.synchronizable = item.synchronizable
        copy.internetKeyParts = item.internetKeyParts
        copy.revision = item.revision
        return copy
    }

    /// Runs an item request on `vault`.
    /// - Parameters:
    ///   - request: `.get`, `.list`, `.add`, `.save`, `.update`, `.delete` or
    ///     `.applyImport` (the others are the agent's own and answer `.param`).
    ///   - vault: an unlocked (or partially locked) vault.
    /// - Returns: `.items` for get, getItems and list (a listing in
    ///   ``ListingOrder``); `.written` for add, save (count 1 added, 0
    ///   updated), update, delete and import, with each item changed.
    /// - Throws: what the vault throws: `.itemNotFound`, `.duplicateItem`,
    ///   `.interactionNotAllowed`, `.param`, `.decode`, `.io`.
    public static func perform(_ request: AgentRequest, on vault: Vault) throws(KeychainError) -> AgentResponse {
        switch request {
        case .get(let query, let one, let detail):
            let found = try vault.items(
                matching: query, limit: one ? .one : .all, withSecrets: detail == .secret || detail == .secretOnly)
            switch detail {
            case .listing: return .items(found.map(ItemOperations.listed))
            case .secretOnly: return .items(found.map(ItemOperations.secretOnly))
            case .searchAttributes: return .items(found.map(ItemOperations.searchAttributes))
            case .attributes, .secret: return .items(found)
            }
        case .list(let service):
            // In the order people read (the terminal UI's): the agent keeps
            // this answer, so a repeated listing is not sorted again.
            func listed(_ items: [Item]) -> AgentResponse {
                .items(
                    ListingOrder.sorted(items.map(ItemOperations.listed)) { ($0.service, $0.account, $0.accessGroup) })
            }
            guard let service else { return listed(try vault.allItems()) }
            do {
                // Every class: git's and docker's credentials are internet passwords.
                return listed(try vault.items(matching: ItemQuery(itemClass: nil, service: service)))
            } catch .itemNotFound {
                return .items([])
            }
        case .getItems(let ids, let detail):
            // Without the agent's index of persistent IDs: one scan.
            guard ids.count <= AgentProtocol.maxIDsPerRequest else { throw .param("too many persistent IDs") }
            let wanted = Set(ids)
            var byID: [UUID: Item] = [:]
            for item in try vault.allItems() where wanted.contains(item.persistentID) { byID[item.persistentID] = item }
            var found: [Item] = []
            for id in ids {
                guard let summary = byID[id] else { continue }
                do { found.append(try detailed(summary, detail, vault)) } catch .itemNotFound { continue }
            }
            return .items(found)
        case .add(let item):
            try vault.add(item)
            return written(1, vault)
        case .save(let service, let account, let secret, let changes):
            let outcome = try vault.save(service: service, account: account, secret: secret, attributes: changes)
            return written(outcome == .added ? 1 : 0, vault)
        case .update(let query, let changes):
            return written(try vault.update(matching: query, with: changes), vault)
        case .delete(let query):
            return written(try vault.delete(matching: query), vault)
        case .applyImport(let changes):
            try vault.applyImport(changes)
            return written(changes.count, vault)
        case .forClient(_, let request):
            return try perform(request, on: vault)
        case .status, .unlock, .unlockWithKey, .lock, .subscribe, .accessLog, .answer:
            throw .param("not an item operation")
        }
    }

    /// The answer to a write: `count` and one event per item that the
    /// vault's last write transaction changed (``Vault/lastWrite``).
    static func written(_ count: Int, _ vault: Vault) -> AgentResponse {
        .written(count: count, changes: vault.lastWrite.map(AgentEvent.init))
    }

    /// `summary` (an item at least at ``ItemDetail/listing``) with as much
    /// as `detail` says: a listing as it is; otherwise the item read again
    /// by its exact key, one record decrypted.
    /// - Throws: `.itemNotFound` when it is gone; what the vault throws.
    static func detailed(_ summary: Item, _ detail: ItemDetail, _ vault: Vault) throws(KeychainError) -> Item {
        if detail == .listing { return listed(summary) }
        let found = try vault.items(
            matching: .exact(for: summary), limit: .one, withSecrets: detail == .secret || detail == .secretOnly)[0]
        guard found.persistentID == summary.persistentID else { throw .itemNotFound(found.displayName) }
        switch detail {
        case .secretOnly: return secretOnly(found)
        case .searchAttributes: return searchAttributes(found)
        case .listing, .attributes, .secret: return found
        }
    }
}

import FobStore

/// The item operations as one function over an unlocked vault, used by the
/// agent and by a command without an agent alike, so that results, errors
/// and exit statuses are the same either way.
public enum ItemOperations {
    public static func listed(_ item: Item) -> Item {
        var copy = item
        copy.secret = nil
        if copy.oneTimePassword != nil { copy.oneTimePassword = SecretBytes([]) }
        copy.customFields = item.customFields.map {
            CustomField(name: $0.name, value: SecretBytes([]), isHidden: $0.isHidden)
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
    /// - Returns: `.items` for get and list (a listing in ``ListingOrder``),
    ///   `.count` for save (1 added, 0 updated), update, delete and import, `.ok` for add.
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
        case .add(let item):
            try vault.add(item)
            return .ok
        case .save(let service, let account, let secret, let changes):
            let outcome = try vault.save(service: service, account: account, secret: secret, attributes: changes)
            return .count(outcome == .added ? 1 : 0)
        case .update(let query, let changes):
            return .count(try vault.update(matching: query, with: changes))
        case .delete(let query):
            return .count(try vault.delete(matching: query))
        case .applyImport(let changes):
            try vault.applyImport(changes)
            return .count(changes.count)
        case .status, .unlock, .unlockWithKey, .lock, .subscribe:
            throw .param("not an item operation")
        }
    }
}

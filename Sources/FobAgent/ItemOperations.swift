import FobStore

/// The item operations as one function over an unlocked vault, used by the
/// agent and by a command without an agent alike, so that results, errors
/// and exit statuses are the same either way.
public enum ItemOperations {
    /// Runs an item request on `vault`.
    /// - Parameters:
    ///   - request: `.get`, `.list`, `.add`, `.save`, `.update` or `.delete`
    ///     (the others are the agent's own and answer `.param`).
    ///   - vault: an unlocked (or partially locked) vault.
    /// - Returns: `.item` for get, `.items` (without secrets, in ``ListingOrder``)
    ///   for list, `.ok` otherwise.
    /// - Throws: what the vault throws: `.itemNotFound`, `.duplicateItem`,
    ///   `.interactionNotAllowed`, `.param`, `.decode`, `.io`.
    /// A listing's copy of `item`: no one-time seed (an empty one says that
    /// the item has one, for `hasTotp`) and no custom field values (names and
    /// the hidden flag stay), so that neither travels with, nor is kept for,
    /// a listing, which shows none of them. The secret is already gone.
    static func listed(_ item: Item) -> Item {
        var copy = item
        copy.secret = nil
        if copy.oneTimePassword != nil { copy.oneTimePassword = SecretBytes([]) }
        copy.customFields = item.customFields.map {
            CustomField(name: $0.name, value: SecretBytes([]), isHidden: $0.isHidden)
        }
        return copy
    }

    public static func perform(_ request: AgentRequest, on vault: Vault) throws(KeychainError) -> AgentResponse {
        switch request {
        case .get(let service, let account):
            return .item(try vault.item(service: service, account: account))
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
            try vault.save(service: service, account: account, secret: secret, attributes: changes)
            return .ok
        case .update(let service, let account, let secret, var changes):
            changes.secret = secret
            try vault.update(matching: .key(service: service, account: account), with: changes)
            return .ok
        case .delete(let service, let account):
            try vault.delete(matching: .key(service: service, account: account))
            return .ok
        case .query(let query, let one, let secrets):
            return .items(try vault.items(matching: query, limit: one ? .one : .all, withSecrets: secrets))
        case .updateMatching(let query, let changes):
            return .count(try vault.update(matching: query, with: changes))
        case .deleteMatching(let query):
            return .count(try vault.delete(matching: query))
        case .saveItem(let service, let account, let secret, let changes):
            return .count(
                try vault.save(service: service, account: account, secret: secret, attributes: changes) == .added
                    ? 1 : 0)
        case .applyImport(let changes):
            try vault.applyImport(changes)
            return .count(changes.count)
        case .status, .unlock, .unlockWithKey, .lock:
            throw .param("not an item operation")
        }
    }
}

import FobAccess
import FobAgent // ItemDetail, which FobAccess's store protocol takes (docs/design.md)
import FobStore
import FoundationEssentials

/// The vault as sync sees it: every item with everything in it, and one
/// transaction for a list of changes. ``ItemAccess`` is one (through the
/// agent when it holds the vault, else the vault opened here).
public protocol SyncItemStore: AnyObject {
    /// Every item, with its secret, seed and custom field values.
    /// - Throws: `KeychainError`.
    func syncItems() throws(KeychainError) -> [Item]
    /// Applies `changes` in one write transaction.
    /// - Throws: as ``Vault/applyImport(_:progress:)``.
    func syncApply(_ changes: [ImportChange]) throws(KeychainError)
    /// The items of sync's reserved access group (service `fob-sync`) with
    /// these accounts, each found by its key (no scan); a missing one is left out.
    /// - Throws: `KeychainError`.
    func syncStateItems(accounts: [String]) throws(KeychainError) -> [Item]
}

extension ItemAccess: SyncItemStore {
    public func syncItems() throws(KeychainError) -> [Item] {
        var all: [Item]
        do { all = try items(matching: ItemQuery(itemClass: nil), limit: .all, detail: .secret) } catch .itemNotFound {
            all = []
        }
        // The state lives in a reserved access group, which only a query
        // naming it matches.
        do {
            all += try items(
                matching: .key(
                    service: SyncState.key.service, account: SyncState.key.account,
                    accessGroup: SyncState.key.accessGroup), limit: .one, detail: .secret)
        } catch .itemNotFound {}
        return all
    }

    public func syncApply(_ changes: [ImportChange]) throws(KeychainError) {
        guard !changes.isEmpty else { return }
        try applyImport(changes) { _ in }
    }

    public func syncStateItems(accounts: [String]) throws(KeychainError) -> [Item] {
        var found: [Item] = []
        for account in accounts {
            do {
                found += try items(
                    matching: .key(
                        service: SyncState.key.service, account: account, accessGroup: SyncState.key.accessGroup),
                    limit: .one, detail: .secret)
            } catch .itemNotFound {}
        }
        return found
    }
}

extension Vault: SyncItemStore {
    public func syncItems() throws(KeychainError) -> [Item] {
        var all = try allItemsWithSecrets()
        // The state lives in a reserved access group, which only a query
        // naming it matches.
        do {
            all.append(
                try item(
                    service: SyncState.key.service, account: SyncState.key.account,
                    accessGroup: SyncState.key.accessGroup))
        } catch .itemNotFound {}
        return all
    }

    public func syncApply(_ changes: [ImportChange]) throws(KeychainError) {
        guard !changes.isEmpty else { return }
        try applyImport(changes)
    }

    public func syncStateItems(accounts: [String]) throws(KeychainError) -> [Item] {
        var found: [Item] = []
        for account in accounts {
            do {
                found.append(
                    try item(service: SyncState.key.service, account: account, accessGroup: SyncState.key.accessGroup))
            } catch .itemNotFound {}
        }
        return found
    }
}

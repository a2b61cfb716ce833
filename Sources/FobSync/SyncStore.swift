import FobAccess
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
}

extension ItemAccess: SyncItemStore {
    public func syncItems() throws(KeychainError) -> [Item] {
        do { return try items(matching: ItemQuery(itemClass: nil), limit: .all, detail: .secret) } catch .itemNotFound {
            return []
        }
    }

    public func syncApply(_ changes: [ImportChange]) throws(KeychainError) {
        guard !changes.isEmpty else { return }
        try applyImport(changes) { _ in }
    }
}

extension Vault: SyncItemStore {
    public func syncItems() throws(KeychainError) -> [Item] { try allItemsWithSecrets() }

    public func syncApply(_ changes: [ImportChange]) throws(KeychainError) {
        guard !changes.isEmpty else { return }
        try applyImport(changes)
    }
}

import FobAgent
import FobStore

/// What the `SecItem…` functions need of a vault: an unlocked ``Vault`` in
/// this process, or the agent's (``AgentItemStore``).
protocol ItemBackend: AnyObject {
    func add(_ item: Item) throws(KeychainError)
    func items(matching query: ItemQuery, limit: MatchLimit, withSecrets: Bool) throws(KeychainError) -> [Item]
    @discardableResult func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int
    @discardableResult func delete(matching query: ItemQuery) throws(KeychainError) -> Int
}

extension Vault: ItemBackend {}
extension AgentItemStore: ItemBackend {}

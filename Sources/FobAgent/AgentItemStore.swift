import FobStore
import Foundation

/// The vault as the agent serves it, with the calls of ``Vault`` that the
/// `SecItem…` functions and the terminal UI use: each call is one request.
/// An agent that is stopped, locked, or not safe to talk to is
/// `.interactionNotAllowed`, as a locked vault is.
public final class AgentItemStore: @unchecked Sendable {
    /// The agent's client.
    public let client: AgentClient

    /// - Parameter client: the agent of the vault.
    public init(client: AgentClient) { self.client = client }

    /// Whether the agent holds the vault fully unlocked (one status request; not activity).
    public var isUnlocked: Bool {
        guard case .status(let status)? = try? client.send(.status) else { return false }
        return status.state == .unlocked
    }

    private func send(_ request: AgentRequest, withSecrets: Bool = true) throws(KeychainError) -> AgentResponse {
        do {
            let answer = try client.send(request, withSecrets: withSecrets)
            if case .failure(let error) = answer { throw error }
            return answer
        } catch let error as AgentClientError {
            throw error.keychainError
        } catch let error as KeychainError {
            throw error
        } catch {
            throw .io("\(error)")
        }
    }

    /// As ``Vault/applyImport(_:progress:)``: every change or none, dates and
    /// persistent IDs kept.
    public func applyImport(_ changes: [ImportChange]) throws(KeychainError) { _ = try send(.applyImport(changes)) }

    /// As ``Vault/add(_:)``.
    public func add(_ item: Item) throws(KeychainError) { _ = try send(.add(item)) }

    /// As ``Vault/items(matching:limit:withSecrets:)``.
    public func items(matching query: ItemQuery, limit: MatchLimit = .all, withSecrets: Bool = false)
        throws(KeychainError) -> [Item]
    {
        guard
            case .items(let items) = try send(
                .query(query, limitOne: limit == .one, withSecrets: withSecrets), withSecrets: withSecrets)
        else {
            throw .io("agent: unexpected answer")
        }
        return items
    }

    /// As ``Vault/allItems()``.
    public func allItems() throws(KeychainError) -> [Item] {
        do { return try items(matching: ItemQuery(itemClass: nil)) } catch .itemNotFound { return [] }
    }

    /// As ``Vault/update(matching:with:)``.
    @discardableResult
    public func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        guard case .count(let n) = try send(.updateMatching(query, changes)) else {
            throw .io("agent: unexpected answer")
        }
        return n
    }

    /// As ``Vault/delete(matching:)``.
    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        guard case .count(let n) = try send(.deleteMatching(query)) else { throw .io("agent: unexpected answer") }
        return n
    }

    /// As ``Vault/save(service:account:accessGroup:itemClass:secret:attributes:)`` for a generic password.
    public func save(service: String, account: String, secret: SecretBytes, attributes: ItemChanges)
        throws(KeychainError) -> Vault.SaveOutcome
    {
        guard
            case .count(let n) = try send(
                .saveItem(service: service, account: account, secret: secret, changes: attributes))
        else {
            throw .io("agent: unexpected answer")
        }
        return n == 1 ? .added : .updated
    }
}

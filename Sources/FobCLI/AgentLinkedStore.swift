import FobAgent
import FobSessions
import FobStore
import Foundation

/// The terminal UI's store: the vault file, linked to the agent.
///
/// - When the agent holds the vault unlocked as the UI starts, the UI opens
///   on its main screen and every operation goes to the agent.
/// - Unlocking in the UI unlocks the vault here and hands the password to
///   the agent (starting it), unless `--no-agent`.
/// - The UI's own lock (idle, `l`) locks the agent too (``lockSession()``),
///   as `fob lock` does: the vault is locked for every process.
/// - A lock done elsewhere (`fob lock`, the agent's timeout, `passwd`) shows
///   as ``isLocked`` within ``pollInterval``, and the UI's router locks.
final class AgentLinkedStore: KeychainStore {
    private let local: VaultStore
    private let agent: AgentItemStore?
    private let handOver: (Vault) -> Void
    private let watermarks: VaultWatermarks?
    private var viaAgent: Bool
    /// Whether the agent held the vault unlocked along with this UI.
    private var linked: Bool
    private var lastPoll = Date.distantPast
    private var agentUnlocked = false
    /// What the agent last answered to a status request; `nil` when it did not answer.
    private var lastStatus: AgentStatus?
    /// Whether the agent ever answered while linked (a silence after that is a stop).
    private var agentSeen = false
    private var versionVault: Vault?

    /// How often the agent's state is asked, in seconds.
    static let pollInterval: TimeInterval = 0.5

    /// - Parameters:
    ///   - local: the vault file's store.
    ///   - agent: the agent of the vault, or `nil` with `--no-agent`.
    ///   - watermarks: where the highest write counter of each vault is kept:
    ///     an unlock here refuses an old copy put back (``VaultWatermarks``).
    ///   - handOver: unlocks the agent with the vault the UI unlocked (its key, not the password).
    init(
        local: VaultStore, agent: AgentItemStore?, watermarks: VaultWatermarks? = nil,
        handOver: @escaping (Vault) -> Void
    ) {
        self.local = local
        self.agent = agent
        self.watermarks = watermarks
        self.handOver = handOver
        let unlocked = local.vaultExists && (agent?.isUnlocked ?? false)
        viaAgent = unlocked
        linked = unlocked
        agentUnlocked = unlocked
        agentSeen = unlocked
        lastPoll = Date()
    }

    private func pollAgent() -> Bool {
        guard let agent else { return false }
        if Date().timeIntervalSince(lastPoll) >= AgentLinkedStore.pollInterval {
            if case .status(let status)? = try? agent.client.send(.status) {
                lastStatus = status
                agentSeen = true
            } else {
                lastStatus = nil
            }
            agentUnlocked = lastStatus?.state == .unlocked
            lastPoll = Date()
        }
        return agentUnlocked
    }

    var vaultExists: Bool { local.vaultExists }

    var isLocked: Bool {
        if viaAgent {
            if pollAgent() { return false }
            viaAgent = false
            linked = false
            return true
        }
        if local.isLocked { return true }
        if linked && !pollAgent() {
            // Locked elsewhere: this UI locks too.
            linked = false
            local.lock()
            return true
        }
        return false
    }

    /// Creates the vault; as an unlock does, hands it to the agent.
    func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        try local.create(password: password, kdf: kdf)
        viaAgent = false
        guard agent != nil, let vault = local.vault, !vault.isLocked else { return }
        handOver(vault)
        lastPoll = .distantPast
        linked = pollAgent()
    }

    func unlock(password: SecretBytes) throws(KeychainError) {
        try local.unlock(password: password)
        if let watermarks, let vault = local.vault { try watermarks.check(vault) }
        viaAgent = false
        guard agent != nil, let vault = local.vault else { return }
        handOver(vault)
        lastPoll = .distantPast
        linked = pollAgent()
    }

    func lock() {
        viaAgent = false
        linked = false
        agentSeen = false
        if let watermarks, let vault = local.vault, let id = try? VaultWatermarks.id(of: vault),
            let counter = vault.writeCounter
        {
            watermarks.raise(counter, of: id)
        }
        local.lock()
    }

    func allItems() throws(KeychainError) -> [Item] {
        if viaAgent, let agent { return try agent.allItems() }
        return try local.allItems()
    }

    func item(_ key: ItemKey) throws(KeychainError) -> Item {
        if viaAgent, let agent { return try agent.items(matching: key.query, limit: .one, withSecrets: true)[0] }
        return try local.item(key)
    }

    func items(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Item] {
        if viaAgent, let agent { return try agent.items(matching: query, withSecrets: withSecrets) }
        return try local.items(matching: query, withSecrets: withSecrets)
    }

    func save(service: String, account: String, secret: SecretBytes, attributes: ItemChanges) throws(KeychainError)
        -> Vault.SaveOutcome
    {
        if viaAgent, let agent {
            return try agent.save(service: service, account: account, secret: secret, attributes: attributes)
        }
        return try local.save(service: service, account: account, secret: secret, attributes: attributes)
    }

    func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        if viaAgent, let agent { return try agent.update(matching: query, with: changes) }
        return try local.update(matching: query, with: changes)
    }

    func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        if viaAgent {
            if versionVault == nil { versionVault = try Vault(url: local.url) }
            return try versionVault!.withExclusiveLock(body)
        }
        return try local.withExclusiveLock(body)
    }

    /// Through the agent or not, the lock is the vault file's.
    var exclusiveLockVaultURL: URL? { local.url }

    func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        if viaAgent, let agent { return try agent.delete(matching: query) }
        return try local.delete(matching: query)
    }

    /// The logout wipe locks the agent too (as `fob logout` does).
    func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError) -> [Item] {
        guard viaAgent, let agent else {
            return try local.deleteItems(busyTimeoutMilliseconds: busyTimeoutMilliseconds, where: predicate)
        }
        // Through the agent each delete is one request, run in turn; the
        // wipe then locks the agent (didWipeSessions).
        let doomed: [Item]
        do { doomed = try agent.allItems().filter(predicate) } catch .itemNotFound { return [] }
        for item in doomed {
            do { _ = try agent.delete(matching: ItemKey(item).query) } catch .itemNotFound {}
        }
        return doomed
    }

    func didWipeSessions() {
        _ = try? agent?.client.send(.lock)
        viaAgent = false
        linked = false
    }

    func restore(_ changes: [ImportChange]) throws(KeychainError) {
        if viaAgent, let agent { return try agent.applyImport(changes) }
        try local.restore(changes)
    }

    /// Tells the agent to lock (as `fob lock`); the caller locks this process.
    func lockSession() {
        _ = try? agent?.client.send(.lock)
        lastStatus = nil
        agentSeen = false
        agentUnlocked = false
        viaAgent = false
        linked = false
    }

    /// The agent as last polled: ``SessionAgentState/stopped`` when it
    /// answered before and answers no more.
    var agentState: SessionAgentState {
        guard agent != nil else { return .none }
        guard let status = lastStatus else { return agentSeen ? .stopped : .none }
        guard status.state == .unlocked else { return .locked }
        let left = [status.idleSecondsLeft, status.maxSecondsLeft].compactMap { $0 }.min()
        return .unlocked(locksAt: left.map { Date().addingTimeInterval(TimeInterval($0)) })
    }

    func dataVersion() throws(KeychainError) -> Int64 {
        guard viaAgent else { return try local.dataVersion() }
        if versionVault == nil { versionVault = try Vault(url: local.url) }
        return try versionVault!.dataVersion()
    }
}

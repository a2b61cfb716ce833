import FobAgent
import FobSessions
import FobStore
import Foundation
@preconcurrency import Glibc

extension Invocation {
    /// The endpoint of this vault's agent.
    var agentEndpoint: AgentEndpoint {
        AgentEndpoint(vaultURL: globals.vaultURL, environment: context.environment)
    }

    /// Where the highest write counter of each vault is kept.
    var watermarks: VaultWatermarks { VaultWatermarks(environment: context.environment) }

    /// Keeps the write counter of `vault` (fully unlocked) when it grew.
    func keepWatermark(of vault: Vault) {
        guard let id = try? VaultWatermarks.id(of: vault), let counter = vault.writeCounter else { return }
        watermarks.raise(counter, of: id)
    }

    /// A client of this vault's agent, or `nil` with `--no-agent` / `FOB_AGENT=0`.
    var agentClient: AgentClient? {
        globals.useAgent ? AgentClient(endpoint: agentEndpoint) : nil
    }

    /// After a master password asked on the terminal unlocked `vault`, hands
    /// the vault key to the agent (starting it), so that the next command
    /// asks nothing and the key derivation is not run again; never after a
    /// password from `--password-file`, nor with `--no-agent`. A failure is
    /// reported on standard error and the command goes on.
    func handToAgentIfAsked(_ vault: Vault) {
        guard globals.passwordFile == nil, context.agentExecutable != nil, let client = agentClient else { return }
        do {
            try unlockAgent(client, with: vault, idle: AgentCore.defaultIdleSeconds, max: AgentCore.defaultMaxSeconds)
        } catch {
            standardError.write("fob: the agent was not unlocked: \(error)\n")
        }
    }

    /// The store of a command that works on items through the
    /// ``KeychainStore`` protocol (OAuth sessions, the logout wipe, `jwt`):
    /// the agent's when it holds this vault unlocked (no password, no key
    /// derivation), else the vault unlocked with the master password.
    /// - Returns: the store, and the vault opened for it (lock it when done).
    /// - Throws: as ``unlockedVault(handingToAgent:)``.
    func keychainStore() throws -> (store: any KeychainStore, vault: Vault?) {
        if let agent = agentClient.map({ AgentItemStore(client: $0) }), agent.isUnlocked {
            return (AgentLinkedStore(local: VaultStore(url: globals.vaultURL), agent: agent) { _ in }, nil)
        }
        let vault = try unlockedVault()
        return (VaultStore(vault: vault), vault)
    }

    /// The item operations of one command: through the agent when it holds
    /// this vault unlocked, else on the vault itself (unlocked with the
    /// master password once for the whole command).
    func items() -> ItemBackend { ItemBackend(invocation: self) }

    /// Starts the agent when none answers, then unlocks it with `password`.
    /// - Throws: `.authFailed` for a wrong password; `.interactionNotAllowed`
    ///   for an unsafe socket directory or agent; `.io`.
    func unlockAgent(_ client: AgentClient, password: SecretBytes, idle: UInt32, max: UInt32) throws(KeychainError) {
        try unlockAgent(client, request: .unlock(password: password, idleSeconds: idle, maxSeconds: max))
    }

    /// Starts the agent when none answers, then hands it the vault key of
    /// `vault`, which this process has unlocked: the agent runs no key
    /// derivation of its own.
    /// - Throws: `.interactionNotAllowed` when `vault` is not fully unlocked
    ///   or for an unsafe socket directory or agent; `.io`.
    func unlockAgent(_ client: AgentClient, with vault: Vault, idle: UInt32, max: UInt32) throws(KeychainError) {
        let key = try vault.vaultKeyCopy()
        try unlockAgent(client, request: .unlockWithKey(vaultKey: key, idleSeconds: idle, maxSeconds: max))
    }

    private func unlockAgent(_ client: AgentClient, request: AgentRequest) throws(KeychainError) {
        if !AgentClient.isAnswering(client.endpoint) {
            guard let executable = context.agentExecutable else {
                throw .interactionNotAllowed(
                    "no agent runs for \(client.endpoint.vault), and this program cannot start one")
            }
            var environment: [String: String] = [:]
            for name in [
                "HOME", "PATH", "LANG", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_STATE_HOME", "TMPDIR",
                "FOB_AGENT_SOCKET",
            ] {
                environment[name] = context.environment[name]
            }
            do {
                try client.start(executable: executable, vaultPath: client.endpoint.vault, environment: environment)
            } catch {
                throw error.keychainError
            }
        }
        let answer: AgentResponse
        do {
            answer = try client.send(request)
        } catch {
            throw error.keychainError
        }
        switch answer {
        case .ok: return
        case .failure(let error): throw error
        default: throw .io("agent: unexpected answer to unlock")
        }
    }

    /// Locks the agent of this vault fully, if one runs (after `passwd`, logout).
    func lockAgentIfRunning() {
        _ = try? AgentClient(endpoint: agentEndpoint).send(.lock)
    }
}

/// Item operations for one command, through the agent or on the vault.
///
/// The first request goes to the agent when it may be used; when no agent
/// runs, or it holds the vault locked for that item, the command falls back
/// to the vault, unlocked once with the master password. A password asked
/// on the terminal is then handed to the agent (started if needed), unless
/// `--no-agent`; a password from `--password-file` never starts one.
final class ItemBackend {
    private let invocation: Invocation
    private var agent: AgentClient?
    private var vault: Vault?

    init(invocation: Invocation) {
        self.invocation = invocation
        agent = invocation.agentClient
    }

    /// Runs one item request.
    /// - Throws: the ``KeychainError`` direct use would throw; ``CLIFailure``
    ///   or ``PromptError`` from the password prompt.
    func perform(_ request: AgentRequest) throws -> AgentResponse {
        if let answer = try agentAnswer(request) { return answer }
        return try ItemOperations.perform(request, on: try unlockedVault()).thrown()
    }

    /// The agent's answer, or `nil` when the command must use the vault
    /// itself (no agent, or it holds the vault locked, or the request never
    /// reached it whole).
    /// - Throws: `.io` for a write that the agent received but did not
    ///   answer (a timeout, a closed connection): the agent may still carry
    ///   it out, so it is not made again on the file.
    private func agentAnswer(_ request: AgentRequest) throws -> AgentResponse? {
        guard let agent else { return nil }
        let answer: AgentResponse?
        do {
            answer = try agent.send(request)
        } catch {
            if case .noAnswer(let why) = error, request.changesItems {
                throw KeychainError.io(
                    "agent: \(why); the change may or may not have been made: check the item before trying again")
            }
            answer = nil
            if error != .stopped { invocation.standardError.write("fob: \(error.description); not using the agent\n") }
        }
        if let answer {
            if case .failure(.interactionNotAllowed) = answer {
                self.agent = nil
            } else {
                return try answer.thrown()
            }
        } else {
            self.agent = nil
        }
        return nil
    }

    /// Every item, without secrets; empty when there are none.
    func allItems() throws -> [Item] {
        do { return try items(matching: ItemQuery(itemClass: nil)) } catch KeychainError.itemNotFound { return [] }
    }

    /// Applies an import plan in one transaction: in the agent when it holds
    /// the vault unlocked, else in the vault itself, reporting `progress`
    /// (changes prepared so far).
    /// - Throws: as ``Vault/applyImport(_:progress:)``.
    func applyImport(_ changes: [ImportChange], progress: @escaping (Int) -> Void) throws {
        if try agentAnswer(.applyImport(changes)) != nil { return }
        try unlockedVault().applyImport(changes, progress: progress)
    }

    /// Settles where requests go before a command reads a secret from
    /// standard input, so that `--password-file -` still finds the master
    /// password on its first line: the agent when it holds the vault
    /// unlocked (fully, or for `after-first-unlock` items), else the vault,
    /// unlocked now.
    /// - Throws: as ``perform(_:)``.
    func prepare() throws {
        if let agent {
            if case .status(let status)? = try? agent.send(.status), status.state != .locked { return }
            self.agent = nil
        }
        _ = try unlockedVault()
    }

    /// The item of `.get`.
    func item(service: String, account: String) throws -> Item {
        guard case .item(let item) = try perform(.get(service: service, account: account)) else {
            throw KeychainError.io("unexpected answer")
        }
        return item
    }

    /// The items matching `query` (`.itemNotFound` when none), as ``Vault/items(matching:limit:withSecrets:)``.
    func items(matching query: ItemQuery, limit: MatchLimit = .all, withSecrets: Bool = false) throws -> [Item] {
        guard case .items(let found) = try perform(.query(query, limitOne: limit == .one, withSecrets: withSecrets))
        else {
            throw KeychainError.io("unexpected answer")
        }
        return found
    }

    /// Adds `item`; `.duplicateItem` when it exists.
    func add(_ item: Item) throws {
        _ = try perform(.add(item))
    }

    /// Changes every item matching `query` in one transaction; `.itemNotFound` when none.
    /// - Returns: how many were changed.
    @discardableResult
    func update(matching query: ItemQuery, with changes: ItemChanges) throws -> Int {
        guard case .count(let count) = try perform(.updateMatching(query, changes)) else {
            throw KeychainError.io("unexpected answer")
        }
        return count
    }

    /// Deletes every item matching `query`; `.itemNotFound` when none.
    /// - Returns: how many were deleted.
    @discardableResult
    func delete(matching query: ItemQuery) throws -> Int {
        guard case .count(let count) = try perform(.deleteMatching(query)) else {
            throw KeychainError.io("unexpected answer")
        }
        return count
    }

    /// Runs `body` under the vault's exclusive lock when the vault is used
    /// directly; through the agent, each request is already one transaction
    /// and `body`'s requests run in turn.
    func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        if agent == nil, let vault = try? unlockedVault() { return try vault.withExclusiveLock(body) }
        return try body()
    }

    /// Locks the vault opened for this command (the agent keeps its own
    /// state), after keeping its write counter (``VaultWatermarks``).
    func close() {
        if let vault { invocation.keepWatermark(of: vault) }
        vault?.lock()
        vault = nil
    }

    deinit {
        if let vault { invocation.keepWatermark(of: vault) }
        vault?.lock()
    }

    private func unlockedVault() throws -> Vault {
        if let vault { return vault }
        let opened = try invocation.openVault()
        let password = try invocation.masterPassword(prompt: "Master password: ")
        try opened.unlock(password: password)
        try invocation.watermarks.check(opened)
        vault = opened
        invocation.handToAgentIfAsked(opened)
        return opened
    }
}

extension AgentRequest {
    /// Whether the request writes items (a write the agent received may
    /// have been made even when no answer came).
    var changesItems: Bool {
        switch self {
        case .status, .unlock, .unlockWithKey, .lock, .get, .list, .query: return false
        case .add, .save, .update, .delete, .updateMatching, .deleteMatching, .saveItem, .applyImport: return true
        }
    }
}

extension AgentResponse {
    /// The response, or its error thrown.
    func thrown() throws(KeychainError) -> AgentResponse {
        if case .failure(let error) = self { throw error }
        return self
    }
}

import FobAgent
import FobStore
import FobSystem
import FoundationEssentials

/// The vault as the agent serves it: each operation is one request, on one
/// connection kept open (``AgentConnection``: one hello for the life of the
/// store, opened again when the agent restarted). An agent that is stopped,
/// locked, or not safe to talk to is `.interactionNotAllowed`, as a locked
/// vault is; a connection that fails midway is `.io`.
///
/// Requests from several threads are made one at a time on the one connection.
public final class AgentStore: RequestStore, @unchecked Sendable {
    /// The agent's client.
    public let client: AgentClient
    /// The connection kept open, used under ``connectionLock``.
    private let connection: AgentConnection
    private let connectionLock = Lock()
    /// Opened (never unlocked) for ``dataVersion()`` only.
    private var versionVault: Vault?

    /// - Parameter client: the agent of the vault.
    public init(client: AgentClient) {
        self.client = client
        connection = AgentConnection(endpoint: client.endpoint, timeout: client.timeout)
    }

    /// How many connections (and so hellos) this store has opened to the agent.
    public var connectionsOpened: Int {
        connectionLock.lock()
        defer { connectionLock.unlock() }
        return connection.connectionsOpened
    }

    /// Runs `body` with the connection, one thread at a time.
    private func withConnection<R>(_ body: (AgentConnection) throws(AgentClientError) -> R) throws(AgentClientError)
        -> R
    {
        connectionLock.lock()
        defer { connectionLock.unlock() }
        return try body(connection)
    }

    /// The process id of the client the following requests are made for
    /// (``AgentConnection/clientPID``): the Secret Service provider sets it
    /// to each D-Bus message's sender; `nil` for the store's own process.
    public var clientPID: Int32? {
        get { withConnectionLocked { $0.clientPID } }
        set { withConnectionLocked { $0.clientPID = newValue } }
    }

    private func withConnectionLocked<R>(_ body: (AgentConnection) -> R) -> R {
        connectionLock.lock()
        defer { connectionLock.unlock() }
        return body(connection)
    }

    /// The vault file the agent serves.
    public var vaultURL: URL { URL(fileURLWithPath: client.endpoint.vault) }

    /// The agent's lock state, or `nil` when no agent can be asked (one
    /// status request; not activity).
    public var state: AgentStatus.State? { status?.state }

    /// The agent's whole status (state, timeouts), or `nil` when no agent
    /// can be asked (one status request; not activity).
    public var status: AgentStatus? {
        guard case .status(let status)? = try? withConnection({ (c) throws(AgentClientError) in try c.send(.status) })
        else { return nil }
        return status
    }

    /// Whether the agent holds the vault fully unlocked.
    public var isUnlocked: Bool { state == .unlocked }

    /// The agent's answer to `request`, failures included, or why the agent
    /// could not be asked.
    /// - Parameter eachItem: when given, each item of an `.items` answer is
    ///   handed to it as it is decoded (``AgentClient/send(_:withSecrets:eachItem:)``),
    ///   and the answer is `.items([])`.
    public func exchange(_ request: AgentRequest, eachItem: ((Item) -> Void)? = nil) -> Result<
        AgentResponse, AgentClientError
    > {
        do {
            return .success(
                try withConnection { (c) throws(AgentClientError) in
                    if let eachItem { return try c.send(request, withSecrets: true, eachItem: eachItem) }
                    return try c.send(request, withSecrets: true)
                })
        } catch {
            return .failure(error)
        }
    }

    public func perform(_ request: AgentRequest) throws(KeychainError) -> AgentResponse {
        switch exchange(request) {
        case .success(.failure(let error)): throw error
        case .success(let answer): return answer
        case .failure(let error): throw error.keychainError
        }
    }

    /// Decodes the agent's answer one item at a time
    /// (``AgentClient/send(_:withSecrets:eachItem:)``): each item lives
    /// decoded only while `body` runs.
    public func forEachItem(matching query: ItemQuery, detail: ItemDetail, _ body: (Item) -> Void)
        throws(KeychainError)
    {
        let answer: AgentResponse
        do {
            answer = try withConnection { (c) throws(AgentClientError) in
                try c.send(.get(query, limitOne: false, detail: detail), eachItem: body)
            }
        } catch {
            throw error.keychainError
        }
        switch answer {
        case .items(let rest): rest.forEach(body)
        case .failure(let error): throw error
        default: throw .io("unexpected answer to get")
        }
    }

    public var vaultExists: Bool { Vault.exists(at: vaultURL) }
    public var isLocked: Bool { !isUnlocked }

    /// The agent does not create vaults.
    /// - Throws: `.param` always.
    public func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        throw .param("the agent does not create vaults; run 'fob init'")
    }

    /// Unlocks the agent with the master password (default timeouts).
    /// - Throws: `.authFailed`, `.interactionNotAllowed`, `.io`.
    public func unlock(password: SecretBytes) throws(KeychainError) {
        _ = try perform(
            .unlock(
                password: password, idleSeconds: AgentCore.defaultIdleSeconds, maxSeconds: AgentCore.defaultMaxSeconds)
        )
    }

    /// Locks the agent fully (``lockAgent()``, its answer dropped).
    public func lock() { _ = lockAgent() }

    /// Locks the agent fully.
    /// - Returns: `nil` when it locked or no agent runs; else why not (its
    ///   refusal, or an agent that answers another protocol version).
    @discardableResult
    public func lockAgent() -> String? {
        do {
            let response = try withConnection { (c) throws(AgentClientError) in try c.send(.lock) }
            if case .failure(let error) = response { return error.description }
            return nil
        } catch .stopped {
            return nil
        } catch {
            return error.description
        }
    }

    /// Runs `body` holding the vault file's lock (``Vault/withExclusiveLock(vaultURL:_:)``).
    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try Vault.withExclusiveLock(vaultURL: vaultURL, body)
    }

    public var exclusiveLockVaultURL: URL? { vaultURL }

    public func dataVersion() throws(KeychainError) -> Int64 {
        if versionVault == nil { versionVault = try Vault(url: vaultURL) }
        return try versionVault!.dataVersion()
    }

    /// The agent's ``AgentRequest/accessLog(_:)``.
    public func accessLog(_ filter: AccessLogFilter) throws(KeychainError) -> AccessLogAnswer {
        guard case .accessLog(let records, let problems) = try perform(.accessLog(filter)) else {
            throw .io("unexpected answer to an access log request")
        }
        return AccessLogAnswer(records: records, problems: problems)
    }

    /// The default as the vault file stores it (``Vault/storedAccessDefault()``):
    /// the agent enforces it, this store only shows it.
    public func accessDefault() throws(KeychainError) -> AccessRule.Mode {
        if versionVault == nil { versionVault = try Vault(url: vaultURL) }
        return try versionVault!.storedAccessDefault()
    }

    /// Through the agent each delete is one request, run in turn.
    public func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError)
        -> [Item]
    {
        let doomed = try list().filter(predicate)
        for item in doomed {
            do { _ = try delete(matching: ItemKey(item).query) } catch .itemNotFound {}
        }
        return doomed
    }

    /// The logout wipe locks the agent (as `fob logout` does).
    public func didWipeSessions() { lock() }

    /// Puts items back in one transaction (an undo), in the agent.
    /// - Throws: as ``Vault/applyImport(_:progress:)``.
    public func restore(_ changes: [ImportChange]) throws(KeychainError) {
        _ = try perform(.applyImport(changes))
    }

    /// Subscribes to the agent's change feed on a connection of its own
    /// (``AgentConnection/subscribe(onEvent:onEnd:)``).
    public func watch(_ onChange: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)? {
        try? client.subscribe(onEvent: onChange)
    }

    /// Sends the answer (``AgentRequest/answer(question:_:)``).
    public func answer(question: UInt64, _ answer: AccessAnswer) throws(KeychainError) {
        _ = try perform(.answer(question: question, answer))
    }
}

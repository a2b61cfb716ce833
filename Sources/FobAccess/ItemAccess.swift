import FobAgent
import FobStore
import FoundationEssentials

/// The one routing policy between the agent and the vault opened here,
/// used by the CLI, the terminal UI and FobSecurity.
///
/// - An item request goes to the agent while it may be used and answers;
///   the first answer settles the route to the agent.
/// - When no agent runs, it cannot be talked to, or it holds the vault
///   locked (for that item), the request runs on the vault here, unlocked
///   once with the ``PasswordSource``; with none, the request fails with
///   `.interactionNotAllowed` and the agent is asked again next time.
/// - Once the vault is unlocked here (by the password source, or by
///   ``unlock(password:)`` as the terminal UI does), requests stay here and
///   ``onLocalUnlock`` may hand the vault key to the agent.
/// - ``lock()`` locks the vault here: the next unlock asks the master
///   password even while the agent stays unlocked. A lock of the agent
///   elsewhere shows as ``isLocked`` within ``pollInterval`` when the agent
///   held the vault along with this store.
public final class ItemAccess: RequestStore {
    /// The vault, the agent and the password file this store uses.
    public let settings: AccessSettings
    /// The vault opened here.
    public let local: VaultStore
    /// The agent, or `nil` when it is turned off.
    public let agent: AgentStore?
    private let password: PasswordSource
    private var route = Route.undecided
    /// Whether the agent held the vault unlocked along with this store.
    private var linked = false
    private var agentUnlocked = false
    private var lastPoll = Date.distantPast
    /// What the agent last answered to a status request; `nil` when it did not answer.
    private var lastStatus: AgentStatus?
    /// Whether the agent ever answered while linked (a silence after that is a stop).
    private var agentSeen = false
    /// Where the highest write counter of each vault is kept: an unlock here
    /// refuses an old copy put back (``VaultWatermarks``).
    private let watermarks: VaultWatermarks

    /// Called after the vault was unlocked here (by the password source,
    /// ``unlock(password:)`` or ``create(password:kdf:)``), to hand its key
    /// to the agent.
    public var onLocalUnlock: ((Vault) -> Void)?
    /// Called when the agent could not be used for a reason other than not
    /// running (an unsafe socket, another protocol version), before the
    /// request runs here.
    public var onAgentUnusable: ((AgentClientError) -> Void)?

    /// The record of what a command reads from the vault opened here with
    /// the master password (``LocalAccessRecord``); `nil`: nothing is recorded.
    public var record: LocalAccessRecord?
    /// Whether the master password was given (`--password-file`,
    /// `--no-agent`): the vault is then opened here, never through the
    /// agent, and each read is recorded, not asked.
    public var opensItself = false {
        didSet { if opensItself { route = .local } }
    }

    /// How often ``isLocked`` asks the agent's state, in seconds.
    public static let pollInterval: TimeInterval = 0.5

    private enum Route { case undecided, agent, local }

    /// - Parameters:
    ///   - settings: the vault and whether the agent may be used.
    ///   - password: where the master password comes from when the vault must be unlocked here.
    ///   - now: the clock for item dates written here.
    public init(
        settings: AccessSettings, password: PasswordSource, now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.settings = settings
        self.password = password
        local = VaultStore(url: settings.vaultURL, now: now)
        agent = settings.agentStore()
        watermarks = VaultWatermarks(environment: settings.environment)
    }

    /// Settles the route now, as the terminal UI does when it starts: the
    /// agent when the vault exists and the agent holds it unlocked (no
    /// password is then asked), else the vault here.
    public func linkToAgent() {
        guard local.vaultExists, let agent, agent.isUnlocked else { return }
        route = .agent
        linked = true
        agentUnlocked = true
        agentSeen = true
        lastPoll = Date()
    }

    /// Whether requests go to the agent.
    public var usesAgent: Bool { route == .agent }

    // MARK: - Requests

    public func perform(_ request: AgentRequest) throws(KeychainError) -> AgentResponse {
        if let answer = try agentAnswer(request) { return answer }
        let store = try unlockedLocal(refusal: agentRefusal)
        // A rule change names its items only by query: they are found first, to be recorded.
        var ruled: [Item] = []
        if record != nil, case .update(let query, let changes) = request, changes.accessRule != nil {
            ruled = (try? store.items(matching: query, limit: .all, detail: .listing)) ?? []
        }
        let answer = try store.perform(request)
        if let record, let vault = store.vault {
            record.answered(request, with: answer, vault)
            record.rulesChanged(ruled.map(ItemKey.init), request, vault)
        }
        return answer
    }

    /// Through the agent, its answer is decoded one item at a time
    /// (``AgentStore/forEachItem(matching:detail:_:)``); here, as
    /// ``items(matching:limit:detail:)`` returns them.
    public func forEachItem(matching query: ItemQuery, detail: ItemDetail, _ body: (Item) -> Void)
        throws(KeychainError)
    {
        let request = AgentRequest.get(query, limitOne: false, detail: detail)
        var handed = 0
        let answered = try withoutActuallyEscaping(body) { handOver throws(KeychainError) in
            try agentAnswer(
                request,
                eachItem: { item in
                    handed += 1
                    handOver(item)
                })
        }
        let answer: AgentResponse
        if let answered {
            answer = answered
        } else {
            // An answer that broke off midway is not run again here: its first items were handed over.
            guard handed == 0 else { throw .io("agent: the answer broke off after \(handed) items") }
            let store = try unlockedLocal(refusal: agentRefusal)
            answer = try store.perform(request)
            if let record, let vault = store.vault { record.answered(request, with: answer, vault) }
        }
        guard case .items(let items) = answer else { throw .io("unexpected answer to get") }
        items.forEach(body)
    }

    /// Why the agent last refused a request (used when the vault cannot be unlocked here either).
    private var agentRefusal: KeychainError?

    /// The agent's answer, or `nil` when the request must run here.
    /// - Parameter eachItem: see ``AgentStore/exchange(_:eachItem:)``.
    private func agentAnswer(_ request: AgentRequest, eachItem: ((Item) -> Void)? = nil) throws(KeychainError)
        -> AgentResponse?
    {
        guard route != .local, let agent else { return nil }
        switch agent.exchange(request, eachItem: eachItem) {
        case .success(.failure(.interactionNotAllowed(let why))):
            agentRefusal = .interactionNotAllowed(why)
        case .success(.failure(.consentMissing(let why, let miss))):
            // Consent no one gave: the vault here may still open with the master password.
            agentRefusal = .consentMissing(why, miss)
        case .success(.failure(let error)):
            route = .agent
            throw error
        case .success(let answer):
            route = .agent
            return answer
        case .failure(.noAnswer(let why)) where request.isWrite:
            // The agent read the whole request: it may still make the
            // change, so it is not made again here.
            throw .io("agent: \(why); the change may or may not have been made: check the item before trying again")
        case .failure(let error):
            if error != .stopped { onAgentUnusable?(error) }
            agentRefusal = error.keychainError
        }
        return nil
    }

    /// The vault here, unlocked with the password source if need be.
    private func unlockedLocal(refusal: KeychainError?) throws(KeychainError) -> VaultStore {
        // A question put to the person and left unanswered: no one is there
        // to type the master password either (errSecInteractionNotAllowed).
        if let refusal, case .consentMissing(_, .unanswered) = refusal { throw refusal }
        do {
            return try unlockedLocalPassingErrors()
        } catch let error as KeychainError {
            if case .interactionNotAllowed = error, let refusal, case .none = password { throw refusal }
            // No master password either: the consent no one gave is the reason, not the password.
            if case .interactionNotAllowed = error, let refusal, case .consentMissing = refusal { throw refusal }
            throw error
        } catch {
            throw .interactionNotAllowed("no master password: \(error)")
        }
    }

    private func unlockedLocalPassingErrors() throws -> VaultStore {
        if !local.isLocked {
            route = .local
            return local
        }
        // A source that asks nobody fails first (a library without a
        // password file is refused before the file is looked at); a prompt
        // comes only once the vault is known to exist.
        var secret: SecretBytes?
        if case .asking = password {} else { secret = try password.password() }
        let vault = try local.opened()
        if vault.isLocked {
            try vault.unlock(password: try secret ?? password.password())
            try watermarks.check(vault)
            route = .local
            record?.unlocked(vault)
            onLocalUnlock?(vault)
        }
        route = .local
        return local
    }

    /// Settles where requests go before a command reads a secret from
    /// standard input, so that `--password-file -` still finds the master
    /// password on its first line: the agent when it holds the vault
    /// unlocked (fully, or for `after-first-unlock` items), else the vault
    /// here, unlocked now.
    /// - Throws: what unlocking throws, and what the password source throws, as they are.
    public func prepare() throws {
        if route == .undecided, let agent, let state = agent.state, state != .locked {
            route = .agent
            return
        }
        if route == .agent { return }
        _ = try unlockedLocalPassingErrors()
    }

    /// Applies an import plan in one transaction: in the agent when it holds
    /// the vault unlocked, else here, reporting `progress` (changes prepared so far).
    /// - Throws: as ``Vault/applyImport(_:progress:)``.
    public func applyImport(_ changes: [ImportChange], progress: @escaping (Int) -> Void) throws(KeychainError) {
        if try agentAnswer(.applyImport(changes)) != nil { return }
        try unlockedLocal(refusal: agentRefusal).applyImport(changes, progress: progress)
    }

    /// Locks the vault opened here (the agent keeps its own state), after
    /// keeping its write counter (``VaultWatermarks``).
    public func close() {
        keepWatermark()
        local.lock()
    }

    deinit { close() }

    /// Keeps the write counter of the vault unlocked here when it grew.
    private func keepWatermark() {
        guard let vault = local.vault, let id = try? VaultWatermarks.id(of: vault), let counter = vault.writeCounter
        else { return }
        watermarks.raise(counter, of: id)
    }

    // MARK: - Lock state

    /// Whether the agent holds the vault unlocked, asked at most every ``pollInterval``.
    private func pollAgent() -> Bool {
        guard let agent else { return false }
        if Date().timeIntervalSince(lastPoll) >= ItemAccess.pollInterval {
            lastStatus = agent.status
            if lastStatus != nil { agentSeen = true }
            agentUnlocked = lastStatus?.state == .unlocked
            lastPoll = Date()
        }
        return agentUnlocked
    }

    public var vaultExists: Bool { local.vaultExists }

    public var isLocked: Bool {
        if route != .local {
            if pollAgent() {
                route = .agent
                return false
            }
            route = .local
            linked = false
            return local.isLocked
        }
        if local.isLocked { return true }
        if linked && !pollAgent() {
            // Locked elsewhere: this store locks too.
            linked = false
            local.lock()
            return true
        }
        return false
    }

    /// Creates the vault here, unlocked, and hands it to the agent.
    public func create(password: SecretBytes, kdf: KDFParameters) throws(KeychainError) {
        try local.create(password: password, kdf: kdf)
        unlockedHere()
    }

    /// Unlocks the vault here with the master password, and hands it to the agent.
    public func unlock(password: SecretBytes) throws(KeychainError) {
        try local.unlock(password: password)
        if let vault = local.vault { try watermarks.check(vault) }
        unlockedHere()
    }

    private func unlockedHere() {
        route = .local
        guard agent != nil, let vault = local.vault, !vault.isLocked else { return }
        onLocalUnlock?(vault)
        lastPoll = .distantPast
        linked = pollAgent()
    }

    public func lock() {
        route = .local
        linked = false
        agentSeen = false
        close()
    }

    /// Tells the agent to lock (as `fob lock`); the caller locks this process.
    /// - Returns: `nil` when the agent locked or none runs, else why it did not.
    @discardableResult
    public func lockSession() -> String? {
        let refused = agent?.lockAgent()
        lastStatus = nil
        agentSeen = false
        agentUnlocked = false
        route = .local
        linked = false
        return refused ?? nil
    }

    /// The agent as last polled: ``SessionAgentState/stopped`` when it
    /// answered before and answers no more.
    public var agentState: SessionAgentState {
        guard agent != nil else { return .none }
        guard let status = lastStatus else { return agentSeen ? .stopped : .none }
        guard status.state == .unlocked else { return .locked }
        let left = [status.idleSecondsLeft, status.maxSecondsLeft].compactMap { $0 }.min()
        return .unlocked(locksAt: left.map { Date().addingTimeInterval(TimeInterval($0)) })
    }

    /// Puts items back in one transaction (an undo): in the agent while
    /// requests go there, else here.
    /// - Throws: as ``Vault/applyImport(_:progress:)``.
    public func restore(_ changes: [ImportChange]) throws(KeychainError) {
        if route == .agent, let agent { return try agent.restore(changes) }
        try unlockedLocal(refusal: nil).restore(changes)
    }

    // MARK: - The rest of the store

    /// Through the agent or not, the lock is the vault file's.
    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        if route == .local, !local.isLocked { return try local.withExclusiveLock(body) }
        return try Vault.withExclusiveLock(vaultURL: settings.vaultURL, body)
    }

    public var exclusiveLockVaultURL: URL? { settings.vaultURL }

    public func dataVersion() throws(KeychainError) -> Int64 {
        if route == .agent, let agent { return try agent.dataVersion() }
        return try local.dataVersion()
    }

    public func deleteItems(busyTimeoutMilliseconds: Int32, where predicate: (Item) -> Bool) throws(KeychainError)
        -> [Item]
    {
        if route == .agent, let agent {
            return try agent.deleteItems(busyTimeoutMilliseconds: busyTimeoutMilliseconds, where: predicate)
        }
        return try unlockedLocal(refusal: nil).deleteItems(
            busyTimeoutMilliseconds: busyTimeoutMilliseconds, where: predicate)
    }

    /// The logout wipe locks the agent too (as `fob logout` does).
    public func didWipeSessions() {
        agent?.lock()
        if route == .agent { route = .local }
        linked = false
    }

    /// The agent's notifications while it holds the vault for this store;
    /// `nil` otherwise (poll ``dataVersion()``).
    public func watch(_ onChange: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)? {
        guard route == .agent, let agent else { return nil }
        return agent.watch(onChange)
    }

    /// The agent's events whatever the route (the lock screen hears its
    /// requests to unlock); `nil` when no agent runs for the vault.
    public func watchAgent(_ onEvent: @escaping @Sendable (AgentEvent) -> Void) -> (any StoreWatch)? {
        agent?.watch(onEvent)
    }

    /// Through the agent while it holds the vault, else from the vault
    /// here (its head state beside the write counters, as the agent keeps it).
    public func accessLog(_ filter: AccessLogFilter) throws(KeychainError) -> AccessLogAnswer {
        if route == .agent, let agent { return try agent.accessLog(filter) }
        let vault = try unlockedLocal(refusal: nil).opened()
        return try AccessLogAnswer.read(from: vault, headDirectory: watermarks.directory, filter: filter)
    }

    /// Verified when the vault is unlocked here, else as the file stores it.
    public func accessDefault() throws(KeychainError) -> AccessRule.Mode { try local.accessDefault() }

    /// Sends the answer to the agent, which asked (whatever the route: a
    /// vault unlocked here is held by the agent too).
    public func answer(question: UInt64, _ answer: AccessAnswer) throws(KeychainError) {
        guard let agent else { throw .param("no agent holds the vault") }
        try agent.answer(question: question, answer)
    }
}

import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// A clock in seconds that keeps running while the machine is suspended,
/// so that a laptop that sleeps past a deadline wakes up locked.
public protocol AgentClock: AnyObject, Sendable {
    /// Seconds since an arbitrary origin; never goes back.
    var seconds: Double { get }
}

/// `CLOCK_BOOTTIME`: monotonic, and counts time in suspend.
public final class BootClock: AgentClock {
    public init() {}
    public var seconds: Double {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// The agent's state and decisions, without sockets: which vault, the lock
/// level, the idle and maximum deadlines, and the answer to each request.
/// Every method takes an internal lock, so the connection threads and the
/// timer may call it at once.
public final class AgentCore: @unchecked Sendable {
    /// The vault's canonical path.
    public let vaultURL: URL
    private let clock: any AgentClock
    private let openVault: (URL) throws(KeychainError) -> Vault
    private let mutex = Lock()
    /// Each open or drop of the vault starts a new epoch (``unlockedStamp()``).
    private var vault: Vault? { didSet { epoch &+= 1 } }
    private var epoch: UInt64 = 0
    private var idleSeconds: Double = 0
    private var maxSeconds: Double = 0
    private var lastActivity: Double = 0
    private var unlockedAt: Double = 0
    private var timedOut = false
    /// The last whole listing's message, kept while the vault's
    /// ``Vault/contentGeneration`` stays the same: a repeated `fob ls` is
    /// answered without decrypting every record again. Wiped-on-free memory;
    /// any lock, write or change by another process drops it.
    private var listing: (generation: UInt64, message: SecretBytes)?
    /// Where the highest write counter per vault is kept on disk (`nil`: memory only).
    private let watermarks: VaultWatermarks?
    /// The highest write counter seen per vault id, kept across locks and
    /// file replacements: a vault put back to an earlier write is refused.
    private var seen: [String: UInt64] = [:]
    /// The id of the vault unlocked now.
    private var vaultID: String?
    /// The consent decisions (rules, leases, questions) and their record.
    let decisions: AccessConsent
    /// Leases, questions in flight, and the channels to ask on.
    public var gate: AccessGate { decisions.gate }
    /// The access log of the vault unlocked now: every decision of the gate
    /// (``consent(to:from:)``) and every unlock is appended; open
    /// from the unlock to the full lock (it outlives a partial one, as reads
    /// of `afterFirstUnlock` items go on).
    private var accessLog: AccessLog?
    /// Where the gate's decisions go: ``accessLog`` while there is one.
    private let record = AccessLogRecorder()
    /// Why the access log of the vault unlocked now could not be opened.
    private var accessLogFailure: String?
    /// The change feed: the items known and their subscribers.
    private let feed = AgentFeed()
    /// The subscribers of the change feed.
    var subscribers: AgentSubscribers { feed.subscribers }
    /// The first channel of ``gate``: the open terminal UIs of this vault.
    public let terminalUI: TerminalUIAsker
    private var watcherRunning = false
    /// How often the watcher looks for other processes' writes, in seconds.
    static let watchInterval = 0.2

    /// Default idle timeout: 900 s.
    public static let defaultIdleSeconds: UInt32 = 900
    /// Default maximum unlocked time: 28,800 s (8 hours).
    public static let defaultMaxSeconds: UInt32 = 28_800
    /// Idle and maximum seconds of an unlock that keeps the timeouts of the
    /// agent's last unlock (the defaults when there was none): the Secret
    /// Service's desktop prompt, which must not undo `fob unlock --idle --max`.
    public static let keepTimeouts: UInt32 = .max
    /// Whether an unlock set the timeouts (``keepTimeouts`` then keeps them).
    private var timeoutsSet = false

    /// - Parameters:
    ///   - vaultURL: the vault this agent serves.
    ///   - clock: the clock of both timeouts (``BootClock`` when live).
    ///   - openVault: opens the vault (tests may use fast KDF presets; the vault is the same).
    ///   - watermarks: where write counters are kept on disk (``VaultWatermarks``), or `nil`.
    public init(
        vaultURL: URL, clock: any AgentClock = BootClock(),
        openVault: @escaping (URL) throws(KeychainError) -> Vault = { (url) throws(KeychainError) in try Vault(url: url)
        }, watermarks: VaultWatermarks? = nil
    ) {
        self.vaultURL = vaultURL
        self.clock = clock
        self.openVault = openVault
        self.watermarks = watermarks
        terminalUI = TerminalUIAsker(subscribers: feed.subscribers)
        decisions = AccessConsent(
            gate: AccessGate(clock: clock, askers: [terminalUI, TerminalAsker()], recorder: record))
        feed.subscribers.onRemove = { [terminalUI] in terminalUI.subscribersChanged() }
    }

    /// Refuses a vault just unlocked whose write counter is below the
    /// highest seen for it (here or on disk), and remembers its counter.
    private func checkWatermarkLocked(_ fresh: Vault) throws(KeychainError) {
        let id = try VaultWatermarks.id(of: fresh)
        _ = try VaultWatermarks.counterAfter(reading: watermarks?.counter(of: id) ?? seen[id], vault: fresh)
        vaultID = id
        noteCounterLocked(of: fresh)
    }

    /// Keeps the vault's write counter when it grew (after a write).
    private func noteCounterLocked(of vault: Vault) {
        guard let id = vaultID, let counter = vault.writeCounter, counter > seen[id] ?? 0 else { return }
        seen[id] = counter
        watermarks?.raise(counter, of: id)
    }

    /// The lock level now (after applying any deadline passed).
    public var state: AgentStatus.State {
        mutex.lock()
        defer { mutex.unlock() }
        expireLocked()
        return stateLocked()
    }

    private func stateLocked() -> AgentStatus.State {
        switch vault?.lockLevel {
        case .unlocked?: return .unlocked
        case .afterFirstUnlockOnly?: return .afterFirstUnlock
        default: return .locked
        }
    }

    /// Applies the deadlines: past the idle or maximum time, drops the
    /// `whenUnlocked` keys and keeps the `afterFirstUnlock` ones. Called by
    /// the timer and before every request.
    public func tick() {
        mutex.lock()
        defer { mutex.unlock() }
        expireLocked()
    }

    private func expireLocked() {
        guard let vault, !timedOut, vault.lockLevel == .unlocked else { return }
        let now = clock.seconds
        let idleOver = idleSeconds > 0 && now - lastActivity >= idleSeconds
        let maxOver = maxSeconds > 0 && now - unlockedAt >= maxSeconds
        if idleOver || maxOver {
            vault.lock(keepingAfterFirstUnlock: true)
            listing = nil
            feed.forget()
            timedOut = true
            gate.endLeases()
        }
    }

    /// Locks fully: every key and the open vault go.
    public func lockAll() {
        mutex.lock()
        defer { mutex.unlock() }
        vault?.lock()
        vault = nil
        listing = nil
        feed.forget()
        gate.endLeases()
        closeAccessLogLocked()
    }

    /// Writes what the access log has queued and drops it with its keys.
    private func closeAccessLogLocked() {
        record.use(nil)
        accessLog?.close()
        accessLog = nil
        accessLogFailure = nil
    }

    /// The access log's state (`nil` while locked), for status and tests.
    public var accessLogStatus: AccessLogStatus? {
        mutex.lock()
        defer { mutex.unlock() }
        if let accessLogFailure { return .failing(reason: accessLogFailure, unwritten: 0, dropped: 0) }
        return accessLog?.status
    }

    /// The vault's default access rule (`nil` while locked), for the SSH agent's consent.
    func accessDefault() -> AccessRule.Mode? {
        mutex.lock()
        defer { mutex.unlock() }
        guard let vault, vault.lockLevel != .locked else { return nil }
        return (try? vault.accessDefault()) ?? .any
    }

    /// Writes every queued access log entry now (a reader is about to read the log).
    /// - Returns: `false` when some could not be written (see ``accessLogStatus``).
    @discardableResult
    public func flushAccessLog() -> Bool {
        mutex.lock()
        let log = accessLog
        mutex.unlock()
        return log?.flush() ?? true
    }

    /// Answers one request. Checks the deadlines, then that the vault file is
    /// the one unlocked and its key unchanged (``Vault/revalidate()``),
    /// before serving. Only item operations restart the idle timer.
    /// - Returns: the response; errors travel as `.failure`.
    /// - Parameters:
    ///   - request: a decoded request.
    ///   - requester: who asked (the peer's pid and uid from `SO_PEERCRED`),
    ///     recorded in the access log; `nil` when not known.
    public func handle(_ request: AgentRequest, from requester: AccessLogRequester? = nil) -> AgentResponse {
        mutex.lock()
        defer { mutex.unlock() }
        return handleLocked(request.unwrapped, from: requester)
    }

    /// A mark of what the vault holds, for caches of what was read from it
    /// (the SSH agent's decrypted keys and consent rules): equal stamps mean
    /// the same unlock and no write by anyone in between (``Vault/contentGeneration``
    /// after the checks every request makes). `nil` unless fully unlocked.
    /// Asking counts as activity for the idle lock, as an item request does.
    public func unlockedStamp() -> Stamp? {
        mutex.lock()
        defer { mutex.unlock() }
        refreshLocked()
        guard let vault, vault.lockLevel == .unlocked else { return nil }
        lastActivity = clock.seconds
        return Stamp(epoch: epoch, generation: vault.contentGeneration)
    }

    /// See ``unlockedStamp()``.
    public struct Stamp: Equatable, Sendable {
        let epoch: UInt64
        let generation: UInt64
    }

    /// The encoded answer to one request, as ``handle(_:)`` decides it; a
    /// whole listing (`.list(service: nil)`) is the kept message when the
    /// vault has not changed since it was made.
    /// - Parameters:
    ///   - request: a decoded request.
    ///   - requester: who asked, for the access log (as ``handle(_:from:)``).
    /// - Important: the bytes may hold secrets: wipe them after sending.
    public func respond(to request: AgentRequest, from requester: AccessLogRequester? = nil) -> [UInt8] {
        let request = request.unwrapped
        mutex.lock()
        defer { mutex.unlock() }
        guard case .list(service: nil) = request else { return handleLocked(request, from: requester).encoded() }
        refreshLocked()
        let vault: Vault
        switch itemVaultLocked(for: request) {
        case .failure(let error): return AgentResponse.failure(error).encoded()
        case .success(let open): vault = open
        }
        if let listing { return listing.message.withUnsafeBytes { Array($0) } }
        do {
            // The known items make the listing without another scan.
            let message: [UInt8]
            if let known = feed.snapshot(of: vault) {
                message = AgentResponse.items(known.listing).encoded()
            } else {
                message = try ItemOperations.perform(request, on: vault).encoded()
            }
            if message.count > AgentCore.listingBytesKept { return message }
            listing = (vault.contentGeneration, SecretBytes(message))
            return message
        } catch {
            return AgentResponse.failure(error).encoded()
        }
    }

    /// The largest listing message kept, in bytes (16 MiB): about 100,000 items.
    static let listingBytesKept = 16 << 20

    /// Whether a listing message is kept (for tests).
    var holdsListing: Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return listing != nil
    }

    /// Applies the deadlines, locks when the file is no longer the one
    /// unlocked, and drops a kept listing that the vault has outgrown.
    private func refreshLocked() {
        expireLocked()
        if let vault {
            do {
                try vault.revalidate()
            } catch {
                vault.lock()
                self.vault = nil
                feed.forget()
                closeAccessLogLocked()
            }
        }
        if listing?.generation != vault?.contentGeneration { listing = nil }
    }

    /// The vault for an item operation (and the idle timer restarted), or
    /// `.interactionNotAllowed` when it is locked, or when only its
    /// `afterFirstUnlock` items are open and `request` would answer for the
    /// whole vault (``needsWholeVault(_:)``).
    private func itemVaultLocked(for request: AgentRequest) -> Result<Vault, KeychainError> {
        guard let vault, !vault.isLocked else {
            return .failure(.interactionNotAllowed("the agent holds the vault locked; run 'fob unlock'"))
        }
        if vault.lockLevel == .afterFirstUnlockOnly && AgentCore.needsWholeVault(request) {
            return .failure(AgentCore.partlyLocked)
        }
        if vault.lockLevel == .unlocked { lastActivity = clock.seconds }
        return .success(vault)
    }

    /// The answer when only `afterFirstUnlock` items are open and a request needs the rest.
    static let partlyLocked = KeychainError.interactionNotAllowed(
        "the agent's idle or maximum time ran out and only after-first-unlock items are open; run 'fob unlock'")

    /// Whether `request` answers for every item: a listing, a query of every
    /// match, a change or deletion by attributes, an import. After a timeout
    /// such an answer would leave out the `whenUnlocked` items and look
    /// complete (an empty listing, "not found", a duplicate), so it is refused
    /// as locked. A request naming one item (its service and account), or a
    /// query for one match that finds it, is answered: the vault itself
    /// refuses a `whenUnlocked` item.
    static func needsWholeVault(_ request: AgentRequest) -> Bool {
        switch request {
        case .list, .applyImport, .getItems: return true
        case .get(_, let one, _): return !one
        case .update(let query, _), .delete(let query): return query.service == nil || query.account == nil
        default: return false
        }
    }

    private func handleLocked(_ request: AgentRequest, from requester: AccessLogRequester?) -> AgentResponse {
        refreshLocked()
        switch request {
        case .status:
            return .status(statusLocked())
        case .accessLog(let filter):
            return AccessLog.answer(filter, vault: vault, open: accessLog, watermarks: watermarks)
        case .lock:
            vault?.lock()
            vault = nil
            listing = nil
            closeAccessLogLocked()
            feed.forget()
            gate.endLeases()
            return .ok
        case .unlock, .unlockWithKey:
            do {
                let fresh = try openVault(vaultURL)
                let idle: UInt32
                let max: UInt32
                switch request {
                case .unlockWithKey(let key, let i, let m):
                    try fresh.unlock(vaultKey: key)
                    (idle, max) = (i, m)
                case .unlock(let password, let i, let m):
                    try fresh.unlock(password: password)
                    (idle, max) = (i, m)
                default:
                    return .failure(.param("not an unlock"))
                }
                try checkWatermarkLocked(fresh)
                closeAccessLogLocked()
                // A vault whose log cannot be opened still unlocks; the status says why nothing is recorded.
                do {
                    accessLog = try AccessLog.open(for: fresh, watermarks: watermarks)
                    record.use(accessLog)
                } catch {
                    accessLogFailure = "\(error)"
                }
                accessLog?.append(
                    AccessLogEntry(
                        time: Date(), event: .unlockWithPassword, requester: AgentCore.described(requester),
                        decision: .allowedPassword, detail: "the agent was unlocked"))
                vault?.lock()
                vault = fresh
                listing = nil
                if idle != AgentCore.keepTimeouts || max != AgentCore.keepTimeouts || !timeoutsSet {
                    let keep = idle == AgentCore.keepTimeouts && max == AgentCore.keepTimeouts
                    idleSeconds = Double(keep ? AgentCore.defaultIdleSeconds : idle)
                    maxSeconds = Double(keep ? AgentCore.defaultMaxSeconds : max)
                    timeoutsSet = true
                }
                unlockedAt = clock.seconds
                lastActivity = unlockedAt
                timedOut = false
                feed.announceUnlock()
                gate.endLeases()
                return .ok
            } catch {
                return .failure(error)
            }
        default:
            switch itemVaultLocked(for: request) {
            case .failure(let error):
                return .failure(error)
            case .success(let vault):
                do {
                    defer { noteCounterLocked(of: vault) }
                    return try itemAnswerLocked(request, vault)
                } catch .itemNotFound where vault.lockLevel == .afterFirstUnlockOnly && request.isQuery {
                    // A match among the items still locked is not "not found".
                    return .failure(AgentCore.partlyLocked)
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// Applies the access rules to a request before it is answered: a read
    /// of secrets (a `.get` at a detail that ``ItemDetail/needsConsent``) or a change
    /// of an access rule needs every matching item's rule, a lease, or a
    /// person's answer (``AccessGate``); an item added through a client's
    /// own channel (Secret Service, git, docker, a `SecItem` program) trusts
    /// that client, as the Keychain puts the creating application in the
    /// item's access list.
    ///
    /// Waits, without holding the agent's lock, while a person is asked.
    /// - Parameters:
    ///   - request: the decoded request.
    ///   - context: who asks, from ``AgentServer``.
    /// - Returns: the request to answer (an add may gain a trusted program),
    ///   or the failure to answer instead: `.accessDenied` for a rule or a
    ///   person that refused, `.interactionNotAllowed` naming the rule when
    ///   nobody could be asked or nobody answered in time.
    public func consent(to request: AgentRequest, from context: AccessContext) -> Result<AgentRequest, KeychainError> {
        let query: ItemQuery?
        let limit: MatchLimit
        let ids: [UUID]
        let event: AccessEvent
        switch AccessConsent.need(of: request, from: context) {
        case .nothing(let answered): return .success(joiningGroup(answered, else: request))
        case .items(let q, let l, let i, let e): (query, limit, ids, event) = (q, l, i, e)
        }
        mutex.lock()
        refreshLocked()
        guard let vault, vault.lockLevel != .locked, let items = try? matches(query, limit, ids, vault) else {
            mutex.unlock()
            return .success(request) // the request itself fails as locked or not found
        }
        let vaultDefault = (try? vault.accessDefault()) ?? .any
        let members = AccessPolicy.groupMembers(of: Set(items.map(\.accessGroup)), in: vault)
        mutex.unlock()
        var context = context
        context.target = AccessContext.target(of: query, channel: context.channel)
        if let refusal = decisions.decide(
            context, items: items, event: event, vaultDefault: vaultDefault, groupMembers: members,
            trustAlways: writeRule)
        {
            return .failure(refusal)
        }
        return .success(request)
    }

    /// `answered` (an add trusting its client), or `original` (trusting no one) when the item's
    /// access group has programs and the client is not one: writing into a group joins nothing.
    private func joiningGroup(_ answered: AgentRequest, else original: AgentRequest) -> AgentRequest {
        guard case .add(let item) = answered, !item.accessGroup.isEmpty, let creator = item.accessRule.trusted.first,
            case .add(let asked) = original, asked.accessRule.trusted.isEmpty
        else { return answered }
        mutex.lock()
        defer { mutex.unlock() }
        guard let vault, vault.lockLevel != .locked else { return answered }
        let members = AccessPolicy.groupMembers(of: [item.accessGroup], in: vault)[item.accessGroup] ?? []
        return members.isEmpty || members.contains { $0.matches(creator.identity) } ? answered : original
    }

    /// The items, with their rules, that `query` (or, without one, `ids`) names.
    private func matches(_ query: ItemQuery?, _ limit: MatchLimit, _ ids: [UUID], _ vault: Vault)
        throws(KeychainError) -> [Item]
    {
        if let query { return try vault.items(matching: query, limit: limit) }
        guard case .items(let found) = try itemsLocked(ids, .listing, vault) else { return [] }
        return found
    }

    /// Writes `rule` into `item` (an "always allow this program" answer).
    private func writeRule(_ rule: AccessRule, into item: Item) {
        var changes = ItemChanges()
        changes.accessRule = rule
        mutex.lock()
        defer { mutex.unlock() }
        guard let vault else { return }
        var query = ItemQuery(itemClass: nil)
        query.persistentID = item.persistentID
        _ = try? vault.update(matching: query, with: changes)
        noteCounterLocked(of: vault)
        subscribers.wake()
    }

    /// The answer to an item request on `vault`: by persistent ID and the
    /// whole listing from what the agent knows, the rest by ``ItemOperations``
    /// (its own writes published to the change feed).
    private func itemAnswerLocked(_ request: AgentRequest, _ vault: Vault) throws(KeychainError) -> AgentResponse {
        if case .getItems(let ids, let detail) = request { return try itemsLocked(ids, detail, vault) }
        if case .list(service: nil) = request, let known = feed.snapshot(of: vault) { return .items(known.listing) }
        let before = (vault.contentGeneration, vault.writeCounter)
        let answer = try ItemOperations.perform(request, on: vault)
        if case .written(_, let changes) = answer {
            listing = nil
            feed.publishOwn(changes, before: before, vault)
        }
        return answer
    }

    /// The requester with what `/proc` says of its pid.
    private static func described(_ requester: AccessLogRequester?) -> AccessLogRequester {
        guard let requester else { return AccessLogRequester() }
        guard let pid = requester.pid, requester.executable.isEmpty else { return requester }
        return AccessLogRequester.peer(pid: pid, uid: requester.uid ?? UInt32.max)
    }

    /// Adds a subscriber (``AgentRequest/subscribe``): what the vault holds
    /// now is the starting point, and the watcher runs while anyone listens.
    /// - Returns: the subscriber's id for ``AgentSubscribers/next(_:timeout:)``,
    ///   or `nil` when too many listen.
    func subscribe(terminalUI: Bool = false) -> Int? {
        mutex.lock()
        defer { mutex.unlock() }
        guard let id = subscribers.add(terminalUI: terminalUI) else { return nil }
        // A terminal UI hears the questions that wait already (asked while it
        // was locking or unlocking); requests to unlock only while locked.
        if terminalUI {
            let questions = self.terminalUI.waitingQuestions(unlockRequests: stateLocked() != .unlocked)
            subscribers.publish(questions, to: id)
        }
        feed.startFrom(vault)
        if !watcherRunning {
            watcherRunning = DetachedThread.start { [self] in
                while subscribers.waitForWork(timeout: AgentCore.watchInterval) { watch() }
                mutex.lock()
                watcherRunning = false
                mutex.unlock()
            }
        }
        return id
    }

    /// One look of the watcher: publishes what other processes changed
    /// since the last look (and the agent's writes it could not publish
    /// itself), and a lock or an unlock.
    func watch() {
        mutex.lock()
        defer { mutex.unlock() }
        refreshLocked()
        feed.look(at: vault)
    }

    /// The answer to ``AgentRequest/getItems(ids:detail:)``: each item asked
    /// that the known items hold, read by its exact key (one record each;
    /// none at ``ItemDetail/listing``); an ID no item has is left out.
    private func itemsLocked(_ ids: [UUID], _ detail: ItemDetail, _ vault: Vault) throws(KeychainError)
        -> AgentResponse
    {
        guard let snapshot = feed.snapshot(of: vault) else {
            return try ItemOperations.perform(.getItems(ids: ids, detail: detail), on: vault)
        }
        var found: [Item] = []
        found.reserveCapacity(ids.count)
        for id in ids {
            guard let summary = snapshot.items[id] else { continue }
            do {
                found.append(try ItemOperations.detailed(summary, detail, vault))
            } catch .itemNotFound {
                continue
            }
        }
        return .items(found)
    }

    private func statusLocked() -> AgentStatus {
        let state = stateLocked()
        var idleLeft: UInt32?
        var maxLeft: UInt32?
        if state == .unlocked {
            let now = clock.seconds
            if idleSeconds > 0 { idleLeft = UInt32(max(0, (idleSeconds - (now - lastActivity)).rounded(.up))) }
            if maxSeconds > 0 { maxLeft = UInt32(max(0, (maxSeconds - (now - unlockedAt)).rounded(.up))) }
        }
        return AgentStatus(
            state: state, pid: getpid(), vault: vaultURL.path, idleSecondsLeft: idleLeft, maxSecondsLeft: maxLeft)
    }
}

extension AgentRequest {
    /// Whether this is a `.get` (`fob get`, `SecItemCopyMatching`).
    fileprivate var isQuery: Bool {
        if case .get = self { return true }
        return false
    }
}

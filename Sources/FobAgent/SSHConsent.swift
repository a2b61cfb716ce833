import FobSSH
import FobStore
import FobSystem
import FoundationEssentials

/// The vault's consent rules applied to the SSH agent's signatures: each
/// SIGN_REQUEST is decided per key item and per destination, by the key
/// item's access rule (or the vault's default) for the program that asks
/// (``SSHSignContext/requester``), on the agent's ``AccessGate`` (its
/// channels, leases and rate limit). Leases are kept per program, key and
/// destination, so a lease for one host never signs for another. A forwarded
/// request (`ssh -A`) asks unless a lease covers it, or is refused when the
/// key's rule refuses forwarded requests; a key added with `ssh-add -c`
/// asks every time and no answer leaves a lease. Every decision is written
/// to the access log as channel `ssh`, naming the destination as
/// session-bind verified it (or "unverified") and whether it was forwarded.
public final class VaultSSHApproval: SSHSignApproval, @unchecked Sendable {
    private let core: AgentCore
    private let slotLock = Lock()
    private var slots: [String: UUID] = [:]
    private let unlocking = Lock()
    private let password: @Sendable (SSHSignContext) -> SecretBytes?
    /// The key items last read for a decision (their rules), each valid
    /// while the vault's stamp stays the same: any write (a rule changed, a
    /// key removed), lock or timeout makes the next decision read it again.
    private let items: StampedCache<Item>

    /// - Parameters:
    ///   - core: the vault's agent (its gate asks; its access log records).
    ///   - password: asks the master password for a signature while the
    ///     vault is locked (``SSHUnlockPrompt/password(for:)``); `nil` when
    ///     no one could be asked or the question was cancelled.
    public init(core: AgentCore, password: @escaping @Sendable (SSHSignContext) -> SecretBytes? = { _ in nil }) {
        self.core = core
        self.password = password
        items = StampedCache(core: core)
    }

    /// Decides one signature; never signs for a requester that cannot be named.
    public func approve(_ sign: SSHSignContext) -> SSHSignDecision {
        guard let requester = sign.requester else {
            return .deny("the program asking cannot be named (it ended, or /proc cannot be read)")
        }
        let context = AccessContext(requester: requester, channel: .ssh)
        let what = VaultSSHApproval.describe(sign)
        guard !sign.itemName.isEmpty else { return memoryKey(sign, context: context, what: what) }
        guard let item = keyItem(sign.itemName), let vaultDefault = core.accessDefault() else {
            return .deny("the vault is locked or the key \(sign.itemName) is gone")
        }
        let verdict = VaultSSHApproval.verdict(sign, context: context, item: item, vaultDefault: vaultDefault)
        let record = Recorder(core: core, context: context, sign: sign, item: ItemKey(item))
        switch verdict {
        case .allow(let why):
            record(.read, .allowedRule, why)
            return .allow
        case .deny(let why):
            record(.denial, .denied, why)
            return .deny("\(requester.programName) may not sign \(what): \(why)")
        case .ask(let why):
            let lease = sign.confirm ? UUID() : leaseID(item.persistentID, sign.destination)
            if !sign.confirm && core.gate.hasLease(context, item: lease) {
                record(.read, .allowedLease, "a lease")
                return .allow
            }
            return ask(AccessQuestion(context: context, item: what, reason: why), lease: lease, item: item, record)
        }
    }

    /// The key item named `name` (its attributes and rule, no secret), read
    /// again unless the vault is unchanged since it was last read; `nil`
    /// while the vault is locked or when the item is gone.
    private func keyItem(_ name: String) -> Item? {
        guard let stamp = core.unlockedStamp() else {
            items.removeAll()
            return nil
        }
        return items.value(name, at: stamp) {
            let query = ItemQuery(service: SSHKeyItem.service, account: name, kind: .sshKey)
            guard case .items(let found) = core.handle(.get(query, limitOne: true, detail: .listing)) else {
                return nil
            }
            return found.first
        }
    }

    /// Asks to unlock the vault (one question at a time; a request that
    /// waited finds the vault unlocked) on the channels consent uses, best
    /// first: an open terminal UI of the vault (its lock screen shows the
    /// request; unlocking there answers it), then the master password
    /// (``SSHUnlockPrompt``: the requester's own terminal, else pinentry),
    /// with which the agent unlocks, keeping the timeouts of its last unlock.
    /// - Returns: whether the vault is unlocked now; a refusal in the
    ///   terminal UI, a wrong password or no answer leaves it locked.
    public func unlock(for context: SSHSignContext) -> Bool {
        unlocking.lock()
        defer { unlocking.unlock() }
        if core.state == .unlocked { return true }
        guard let requester = context.requester else { return false }
        let question = AccessQuestion(
            context: AccessContext(requester: requester, channel: .ssh), item: VaultSSHApproval.describe(context),
            reason: VaultSSHApproval.lockedReason)
        switch core.terminalUI.askUnlock(question, timeout: core.gate.timeout, isUnlocked: { core.state == .unlocked })
        {
        case .answered(let answer): return answer != .deny && core.state == .unlocked
        case .unanswered, .unreachable: break
        }
        guard let typed = password(context) else { return false }
        let keep = AgentCore.keepTimeouts
        let who = context.requester.map { r in AccessLogRequester(pid: r.pid, uid: r.uid, executable: r.executable) }
        guard case .ok = core.handle(.unlock(password: typed, idleSeconds: keep, maxSeconds: keep), from: who) else {
            return false
        }
        return core.state == .unlocked
    }

    /// The reason an unlock question gives (the terminal UI's lock screen shows it).
    public static let lockedReason = "the vault is locked: unlock it to sign"

    /// Key item × requester × destination → allow, deny or ask: the item's
    /// rule as ``AccessPolicy/decide(_:item:vaultDefault:fileHash:)`` reads it
    /// (a deny stands), then `ssh-add -c` asks, then a forwarded request asks
    /// (or is refused when the rule refuses forwarded requests).
    public static func verdict(
        _ sign: SSHSignContext, context: AccessContext, item: Item, vaultDefault: AccessRule.Mode
    ) -> AccessVerdict {
        let base = AccessPolicy.decide(context, item: item, vaultDefault: vaultDefault) {
            TrustedProgram.hash(ofFile: "/proc/\(context.requester.pid)/exe")
        }
        if case .deny = base { return base }
        if sign.confirm { return .ask("the key was added with ssh-add -c: every signature is confirmed") }
        if sign.destination.isForwarded {
            if item.accessRule.forwarded == .deny {
                return .deny("\(item.displayName) refuses forwarded requests")
            }
            return .ask("a forwarded request (ssh -A) is asked unless a lease covers it")
        }
        return base
    }

    /// What a prompt and the record call the signature: the key, its
    /// fingerprint and the destination ("… for github.com (verified)").
    public static func describe(_ sign: SSHSignContext) -> String {
        let name = sign.itemName.isEmpty ? (sign.comment.isEmpty ? "an added key" : sign.comment) : sign.itemName
        let purpose = sign.isUserAuthentication ? "log in to" : "sign data (not a login) for"
        return "SSH key \(name) (\(sign.key.fingerprint)) to \(purpose) \(sign.destination.summary)"
    }

    /// The lease slot of one key item for one destination: its own
    /// identifier per pair, so a lease granted for one host (or for a direct
    /// request) does not cover another.
    func leaseID(_ item: UUID, _ destination: SSHDestination) -> UUID {
        let key = "\(item.uuidString)\n\(destination.summary)\n\(destination.hostKey?.fingerprint ?? "")"
        slotLock.lock()
        defer { slotLock.unlock() }
        if let slot = slots[key] { return slot }
        let slot = UUID()
        slots[key] = slot
        return slot
    }

    /// Asks on the gate's channels and records the answer.
    private func ask(_ question: AccessQuestion, lease: UUID, item: Item, _ record: Recorder) -> SSHSignDecision {
        record(.prompt, nil, question.reason)
        let who = question.context.requester.programName
        let outcome = core.gate.ask(question, item: lease)
        switch outcome.answer {
        case nil:
            let why = core.gate.failure(outcome)
            record(.denial, outcome == .unanswered ? .timedOut : .noChannel, why)
            return .deny("\(question.reason), and \(why)")
        case .deny?:
            record(.denial, .denied, "refused by the user")
            return .deny("\(who) may not sign: the user refused")
        case .always? where !record.sign.confirm:
            trustAlways(question.context, item: item)
            record(.ruleChange, .allowedRule, "always allow \(question.context.requester.executable)")
            return .allow
        case .lease(let seconds)? where !record.sign.confirm:
            record(.read, .allowedLease, "lease \(Int(seconds / 60)) min")
            return .allow
        case .untilLock? where !record.sign.confirm:
            record(.read, .allowedUntilLock, "until the vault locks")
            return .allow
        case _?:
            record(.read, .allowedOnce, "once")
            return .allow
        }
    }

    /// A key held only in the agent's memory (`ssh-add -t`): no item and no
    /// rule, so it signs unless it was added with `ssh-add -c`.
    private func memoryKey(_ sign: SSHSignContext, context: AccessContext, what: String) -> SSHSignDecision {
        let record = Recorder(core: core, context: context, sign: sign, item: nil)
        guard sign.confirm else {
            record(.read, .allowedRule, "a key added to the agent for a while (ssh-add -t)")
            return .allow
        }
        let question = AccessQuestion(
            context: context, item: what, reason: "the key was added with ssh-add -c: every signature is confirmed")
        let item = Item(service: SSHKeyItem.service, account: sign.comment, kind: .sshKey, secret: nil)
        return ask(question, lease: UUID(), item: item, record)
    }

    /// Writes "always allow this program" into the key item's rule.
    private func trustAlways(_ context: AccessContext, item: Item) {
        guard let identity = context.requester.identity else { return }
        var rule = item.accessRule
        rule.trusted.removeAll { $0.path == context.requester.executable }
        rule.trusted.append(TrustedProgram(path: context.requester.executable, identity: identity))
        var changes = ItemChanges()
        changes.accessRule = rule
        _ = core.handle(.update(ItemQuery(service: SSHKeyItem.service, account: item.account), changes))
    }

    /// Writes one access log entry for a signature, through the gate's
    /// recorder (the vault's access log while it is unlocked).
    struct Recorder {
        let core: AgentCore
        let context: AccessContext
        let sign: SSHSignContext
        let item: ItemKey?

        func callAsFunction(_ event: AccessEvent, _ decision: AccessDecision?, _ why: String) {
            let detail = "\(why); for \(sign.destination.summary); key \(sign.key.fingerprint)"
            core.gate.recorder.record(
                AccessLogEntry(
                    time: Date(), event: event, requester: AccessLogRequester(context.requester), item: item,
                    channel: .ssh, decision: decision, detail: detail))
        }
    }
}

import FobStore
import FobSystem
import FoundationEssentials

/// The agent's consent decisions: which items a request would read, each
/// item's verdict under its rule (``AccessPolicy``), a lease, or a person's
/// answer (``AccessGate``), and what is recorded of each.
///
/// Holds no vault: ``AgentCore/consent(to:from:)`` finds the items and
/// writes an "always" answer into the item's rule.
public final class AccessConsent: @unchecked Sendable {
    /// Leases, questions in flight, the channels to ask on, and the recorder.
    public let gate: AccessGate

    /// - Parameter gate: the agent's gate.
    init(gate: AccessGate) {
        self.gate = gate
    }

    /// What a request needs from the rules.
    enum Need {
        /// Nothing: answer the request as it is (it may be changed, as an
        /// add that trusts the client that made it).
        case nothing(AgentRequest)
        /// The consent of every item that `query` (or, without one, `ids`)
        /// names, for `event`: a ``AccessEvent/read`` of secrets, or a
        /// ``AccessEvent/ruleChange``.
        case items(query: ItemQuery?, limit: MatchLimit, ids: [UUID], event: AccessEvent)
    }

    /// What `request` needs: a read of secrets (a `.get` at a detail that
    /// ``ItemDetail/needsConsent``) or a change of an access rule needs every matching
    /// item's consent; an item added through a client's own channel (Secret
    /// Service, git, docker, a `SecItem` program) trusts that client, as the
    /// Keychain puts the creating application in the item's access list.
    static func need(of request: AgentRequest, from context: AccessContext) -> Need {
        switch request {
        case .get(let q, let one, let detail) where detail.needsConsent:
            return .items(query: q, limit: one ? .one : .all, ids: [], event: .read)
        case .getItems(let asked, let detail) where detail.needsConsent:
            return .items(query: nil, limit: .all, ids: asked, event: .read)
        case .update(let q, let changes) where changes.accessRule != nil:
            return .items(query: q, limit: .all, ids: [], event: .ruleChange)
        case .add(var item) where item.accessRule.isDefault && !context.isTerminalUI:
            switch context.channel {
            case .secretService, .git, .docker, .program:
                guard let identity = context.requester.identity else { return .nothing(request) }
                item.accessRule.trusted = [TrustedProgram(path: context.requester.executable, identity: identity)]
                return .nothing(.add(item))
            case .command, .terminalUI, .ssh, .agent: return .nothing(request)
            }
        default:
            return .nothing(request)
        }
    }

    /// The decisions for `items`: each item's rule first (one refusal
    /// refuses the request before anyone is asked), then one question for
    /// every item the rules left to a person (a read of many items is one
    /// question naming how many, never one per item). Each decision is
    /// recorded once (``AccessGate/recorder``): the read (or rule change)
    /// allowed and why, or the refusal, and a question, a lease and an
    /// "always" rule on the way.
    /// - Parameters:
    ///   - context: who asks and how.
    ///   - items: the items the request would read, with their rules.
    ///   - event: what the request does to each: ``AccessEvent/read`` or ``AccessEvent/ruleChange``.
    ///   - vaultDefault: the vault's default rule.
    ///   - groupMembers: the programs of each access group among `items`
    ///     (``AccessPolicy/groupMembers(_:)``).
    ///   - trustAlways: writes an "always allow" answer into an item's rule.
    /// - Returns: `nil` to allow all, else the failure: `.accessDenied` for
    ///   a rule or a person that refused, `.interactionNotAllowed` naming the
    ///   rule when nobody could be asked or nobody answered in time.
    func decide(
        _ context: AccessContext, items: [Item], event: AccessEvent, vaultDefault: AccessRule.Mode,
        groupMembers: [String: [TrustedProgram]] = [:], trustAlways: (AccessRule, Item) -> Void
    ) -> KeychainError? {
        let record = Record(recorder: gate.recorder, context: context, event: event)
        var asking: [(item: Item, why: String)] = []
        for item in items {
            switch verdict(
                record, item: item, vaultDefault: vaultDefault, members: groupMembers[item.accessGroup] ?? [])
            {
            case .failure(let refusal): return refusal
            case .success(nil): continue
            case .success(let why?): asking.append((item, why))
            }
        }
        return ask(record, about: asking, trustAlways: trustAlways)
    }

    /// One item's decision without asking: `.success(nil)` to allow (a rule
    /// or a lease), `.success(why)` when a person must answer, else the failure.
    private func verdict(_ record: Record, item: Item, vaultDefault: AccessRule.Mode, members: [TrustedProgram])
        -> Result<String?, KeychainError>
    {
        let context = record.context
        let verdict = AccessPolicy.decide(context, item: item, vaultDefault: vaultDefault, groupMembers: members) {
            TrustedProgram.hash(ofFile: "/proc/\(context.requester.pid)/exe")
        }
        switch verdict {
        case .allow(let why):
            record.allowed(item, .allowedRule, why)
            return .success(nil)
        case .deny(let why):
            record.refused(item, .denied, why)
            return .failure(.accessDenied("\(context.requester.programName) may not read \(item.displayName): \(why)"))
        case .ask(let why):
            guard gate.hasLease(context, item: item.persistentID) else { return .success(why) }
            record.allowed(item, .allowedLease, "a lease; \(why)")
            return .success(nil)
        }
    }

    /// Asks one question about every item in `asking` and records the answer for each.
    /// - Returns: `nil` when allowed (or nothing to ask), else the failure.
    private func ask(
        _ record: Record, about asking: [(item: Item, why: String)], trustAlways: (AccessRule, Item) -> Void
    ) -> KeychainError? {
        guard let first = asking.first else { return nil }
        let context = record.context
        let name = AccessQuestion.naming(asking.map { $0.item.displayName })
        let question = AccessQuestion(context: context, item: name, reason: first.why, itemCount: asking.count)
        for one in asking { record.entry(.prompt, one.item, nil, one.why) }
        let outcome = gate.ask(question, items: asking.map { $0.item.persistentID })
        for one in asking { settle(record, one.item, outcome, why: one.why, trustAlways: trustAlways) }
        switch outcome.answer {
        case nil:
            return .consentMissing(
                AccessPolicy.consentRefusalPrefix + "\(name): \(first.why), and \(gate.failure(outcome))",
                outcome == .unanswered ? .unanswered : .noChannel)
        case .deny?:
            return .accessDenied("\(context.requester.programName) may not read \(name): the user refused")
        default:
            return nil
        }
    }

    /// Records a person's answer about one item (and writes an "always" into its rule).
    private func settle(
        _ record: Record, _ item: Item, _ outcome: AccessOutcome, why: String, trustAlways: (AccessRule, Item) -> Void
    ) {
        let context = record.context
        switch outcome.answer {
        case nil:
            record.refused(item, outcome == .unanswered ? .timedOut : .noChannel, "\(why); \(gate.failure(outcome))")
        case .deny?:
            record.refused(item, .denied, "refused by the user")
        case .always?:
            if let rule = AccessConsent.rule(trusting: context, in: item) {
                trustAlways(rule, item)
                record.entry(.ruleChange, item, nil, "always allow \(context.requester.executable)")
            }
            record.allowed(item, .allowedRule, "always allowed by the user")
        case .once?:
            record.allowed(item, .allowedOnce, "allowed once by the user")
        case .lease(let seconds)?:
            record.entry(.lease, item, .allowedLease, "\(Int((seconds / 60).rounded())) min")
            record.allowed(item, .allowedLease, "a lease of \(Int((seconds / 60).rounded())) min")
        case .untilLock?:
            record.entry(.lease, item, .allowedUntilLock, "until the vault locks")
            record.allowed(item, .allowedUntilLock, "until the vault locks")
        }
    }

    /// The entries of one request's decisions: who, through which channel,
    /// what the request does.
    struct Record {
        let recorder: any AccessRecorder
        let context: AccessContext
        let event: AccessEvent
        let who: AccessLogRequester

        init(recorder: any AccessRecorder, context: AccessContext, event: AccessEvent) {
            self.recorder = recorder
            self.context = context
            self.event = event
            who = AccessLogRequester(context.requester)
        }

        /// One entry about `item`.
        func entry(_ kind: AccessEvent, _ item: Item, _ decision: AccessDecision?, _ detail: String) {
            recorder.record(
                AccessLogEntry(
                    time: Date(), event: kind, requester: who, item: ItemKey(item), channel: context.channel,
                    decision: decision, detail: detail))
        }

        /// The request's own event, allowed.
        func allowed(_ item: Item, _ decision: AccessDecision, _ why: String) { entry(event, item, decision, why) }

        /// The request refused.
        func refused(_ item: Item, _ decision: AccessDecision, _ why: String) { entry(.denial, item, decision, why) }
    }

    /// The item's rule with the requester's program trusted ("always allow
    /// this program"), or `nil` when its executable's identity is unknown.
    static func rule(trusting context: AccessContext, in item: Item) -> AccessRule? {
        guard let identity = context.requester.identity else { return nil }
        var rule = item.accessRule
        rule.trusted.removeAll { $0.path == context.requester.executable }
        rule.trusted.append(TrustedProgram(path: context.requester.executable, identity: identity))
        return rule
    }
}

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
        /// The consent of every item that `query` (or, without one, `ids`) names.
        case items(query: ItemQuery?, limit: MatchLimit, ids: [UUID])
    }

    /// What `request` needs: a read of secrets (a `.get` with more than the
    /// listing's detail) or a change of an access rule needs every matching
    /// item's consent; an item added through a client's own channel (Secret
    /// Service, git, docker, a `SecItem` program) trusts that client, as the
    /// Keychain puts the creating application in the item's access list.
    static func need(of request: AgentRequest, from context: AccessContext) -> Need {
        switch request {
        case .get(let q, let one, let detail) where detail != .listing:
            return .items(query: q, limit: one ? .one : .all, ids: [])
        case .getItems(let asked, let detail) where detail != .listing:
            return .items(query: nil, limit: .all, ids: asked)
        case .update(let q, let changes) where changes.accessRule != nil:
            return .items(query: q, limit: .all, ids: [])
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

    /// The decisions for `items`, in order, until one refuses.
    /// - Parameters:
    ///   - context: who asks and how.
    ///   - items: the items the request would read, with their rules.
    ///   - vaultDefault: the vault's default rule.
    ///   - trustAlways: writes an "always allow" answer into an item's rule.
    /// - Returns: `nil` to allow all, else the failure: `.accessDenied` for
    ///   a rule or a person that refused, `.interactionNotAllowed` naming the
    ///   rule when nobody could be asked or nobody answered in time.
    func decide(
        _ context: AccessContext, items: [Item], vaultDefault: AccessRule.Mode, trustAlways: (AccessRule, Item) -> Void
    ) -> KeychainError? {
        for item in items {
            if let refusal = decide(context, item: item, vaultDefault: vaultDefault, trustAlways: trustAlways) {
                return refusal
            }
        }
        return nil
    }

    /// One item's decision: `nil` to allow, else the failure.
    private func decide(
        _ context: AccessContext, item: Item, vaultDefault: AccessRule.Mode, trustAlways: (AccessRule, Item) -> Void
    ) -> KeychainError? {
        let verdict = AccessPolicy.decide(context, item: item, vaultDefault: vaultDefault) {
            TrustedProgram.hash(ofFile: "/proc/\(context.requester.pid)/exe")
        }
        let name = item.displayName
        switch verdict {
        case .allow(let why):
            gate.recorder.record(event: "read", context: context, item: name, decision: "allowed: \(why)")
            return nil
        case .deny(let why):
            gate.recorder.record(event: "denied", context: context, item: name, decision: why)
            return .accessDenied("\(context.requester.programName) may not read \(name): \(why)")
        case .ask(let why):
            if gate.hasLease(context, item: item.persistentID) {
                gate.recorder.record(event: "read", context: context, item: name, decision: "allowed: a lease")
                return nil
            }
            let question = AccessQuestion(context: context, item: name, reason: why)
            gate.recorder.record(event: "prompt", context: context, item: name, decision: why)
            switch gate.ask(question, item: item.persistentID) {
            case nil:
                gate.recorder.record(event: "denied", context: context, item: name, decision: "no answer")
                return .interactionNotAllowed(
                    AccessPolicy.consentRefusalPrefix
                        + "\(name): \(why), and no one could be asked, or no one answered in time")
            case .deny?:
                gate.recorder.record(event: "denied", context: context, item: name, decision: "refused by the user")
                return .accessDenied("\(context.requester.programName) may not read \(name): the user refused")
            case .always?:
                if let rule = AccessConsent.rule(trusting: context, in: item) { trustAlways(rule, item) }
                gate.recorder.record(event: "rule", context: context, item: name, decision: "always allowed")
                return nil
            case let answer?:
                gate.recorder.record(event: "read", context: context, item: name, decision: "allowed: \(answer)")
                return nil
            }
        }
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

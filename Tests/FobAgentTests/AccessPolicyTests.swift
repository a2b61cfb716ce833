import FobAgent
import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

private let gitIdentity = ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 1000)

private func context(
    _ channel: AccessChannel = .command("get"), terminal: String? = "/dev/pts/1",
    identity: ExecutableIdentity? = gitIdentity,
    via: Bool = true
) -> AccessContext {
    AccessContext(
        requester: Requester(
            pid: 77, uid: 1000, executable: "/usr/bin/git", identity: identity, terminal: terminal,
            via: via ? ProcessSummary(pid: 78, executable: "/usr/bin/fob", name: "fob") : nil),
        channel: channel)
}

private func item(_ rule: AccessRule) -> Item {
    var item = Item(service: "s", account: "a", secret: nil)
    item.accessRule = rule
    return item
}

private let git = TrustedProgram(path: "/usr/bin/git", identity: gitIdentity)

@Suite struct AccessPolicyTests {
    @Test func theVaultDefaultDecidesAnItemWithoutARule() {
        #expect(
            AccessPolicy.decide(context(), item: item(AccessRule()), vaultDefault: .any)
                == .allow("the vault's default rule is 'any'"))
        #expect(
            AccessPolicy.decide(context(), item: item(AccessRule()), vaultDefault: .ask)
                == .ask("the vault's default rule is 'ask'"))
    }

    @Test func anItemsModeWinsOverTheDefault() {
        let verdict = AccessPolicy.decide(context(), item: item(AccessRule(mode: .deny)), vaultDefault: .any)
        #expect(verdict == .deny("the rule of service \"s\", account \"a\" is 'deny'"))
    }

    @Test func aTrustedProgramReadsAndAReplacedOneIsAskedAgain() {
        let rule = AccessRule(mode: .ask, trusted: [git])
        #expect(
            AccessPolicy.decide(context(), item: item(rule), vaultDefault: .ask)
                == .allow("/usr/bin/git is trusted by service \"s\", account \"a\""))
        var replaced = gitIdentity
        replaced.modifiedNanoseconds += 1
        #expect(
            AccessPolicy.decide(context(identity: replaced), item: item(rule), vaultDefault: .ask)
                == .ask("the rule of service \"s\", account \"a\" is 'ask'"))
    }

    @Test func aHashInTheRuleIsChecked() {
        var hashed = git
        hashed.hash = Array(repeating: 1, count: 32)
        let rule = AccessRule(mode: .ask, trusted: [hashed])
        #expect(
            AccessPolicy.decide(context(), item: item(rule), vaultDefault: .ask) { Array(repeating: 1, count: 32) }
                == .allow("/usr/bin/git is trusted by service \"s\", account \"a\""))
        #expect(
            AccessPolicy.decide(context(), item: item(rule), vaultDefault: .ask) { Array(repeating: 2, count: 32) }
                == .ask("the rule of service \"s\", account \"a\" is 'ask'"))
    }

    @Test func theDenyListAndForwardedChoiceComeFirst() {
        #expect(
            AccessPolicy.decide(context(), item: item(AccessRule(mode: .any, denied: [git])), vaultDefault: .any)
                == .deny("/usr/bin/git is on the deny list of service \"s\", account \"a\""))
        let rule = AccessRule(mode: .any, forwarded: .deny, trusted: [git])
        #expect(
            AccessPolicy.decide(context(terminal: nil), item: item(rule), vaultDefault: .any)
                == .deny("service \"s\", account \"a\" refuses every request without a terminal"))
        #expect(
            AccessPolicy.decide(context(), item: item(rule), vaultDefault: .any)
                == .allow("/usr/bin/git is trusted by service \"s\", account \"a\""))
    }

    @Test func theTerminalUIIsNeverAskedButOnlyAsFobsOwnPeer() {
        let rule = AccessRule(mode: .deny)
        #expect(
            AccessPolicy.decide(context(.terminalUI), item: item(rule), vaultDefault: .ask)
                == .allow("the terminal UI at its keyboard"))
        #expect(
            AccessPolicy.decide(context(.terminalUI, via: false), item: item(rule), vaultDefault: .ask)
                == .deny("the rule of service \"s\", account \"a\" is 'deny'"))
    }

    /// `fob sync` seals what it reads into the sync tree and prints no
    /// secret, so it is not asked; a program that only claims to be it is.
    @Test func fobSyncIsNotAskedButOnlyAsFobsOwnPeer() {
        let rule = AccessRule(mode: .ask)
        #expect(
            AccessPolicy.decide(context(.command("sync")), item: item(rule), vaultDefault: .ask)
                == .allow("fob sync seals secrets into the sync tree and shows none"))
        #expect(
            AccessPolicy.decide(context(.command("resolve")), item: item(rule), vaultDefault: .ask)
                == .allow("fob resolve seals secrets into the sync tree and shows none"))
        #expect(
            AccessPolicy.decide(context(.command("get")), item: item(rule), vaultDefault: .ask)
                == .ask("the rule of service \"s\", account \"a\" is 'ask'"))
        #expect(
            AccessPolicy.decide(context(.command("sync"), via: false), item: item(rule), vaultDefault: .any)
                == .ask("the rule of service \"s\", account \"a\" is 'ask'"))
    }

    @Test func theChannelIsReadFromFobsArguments() {
        #expect(
            AccessChannel.ofFobPeer(arguments: ["fob", "--clear-after", "5", "copy", "s", "a"])
                == .command("copy"))
        #expect(AccessChannel.ofFobPeer(arguments: ["fob", "--lock-after", "9", "sync"]) == .command("sync"))
        #expect(
            AccessChannel.ofFobPeer(arguments: ["fob", "--vault", "/v.db", "get", "s", "a"]) == .command("get")
        )
        #expect(AccessChannel.ofFobPeer(arguments: ["/usr/bin/fob"]) == .terminalUI)
        #expect(AccessChannel.ofFobPeer(arguments: ["fob", "--no-agent"]) == .terminalUI)
        #expect(AccessChannel.ofFobPeer(arguments: ["/usr/bin/git-credential-fob", "get"]) == .git)
        #expect(AccessChannel.ofFobPeer(arguments: ["fob", "docker-credential", "get"]) == .docker)
        #expect(
            AccessChannel.ofFobPeer(arguments: ["fob", "run", "--env", "X=s/a", "--", "make"])
                == .command("run"))
    }
}

/// Answers gathered from many threads.
private final class AnswerList: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [AccessOutcome] = []
    var all: [AccessOutcome] { lock.withLock { answers } }
    func append(_ answer: AccessOutcome) { lock.withLock { answers.append(answer) } }
}

/// An asker that answers after a while and counts its questions.
private final class CountingAsker: AccessAsker, @unchecked Sendable {
    let lock = NSLock()
    var count = 0
    let answer: AccessOutcome
    let delay: UInt32
    init(_ answer: AccessOutcome, delay: UInt32 = 0) {
        self.answer = answer
        self.delay = delay
    }
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        lock.withLock { count += 1 }
        usleep(delay)
        return answer
    }
}

@Suite struct AccessGateTests {
    @Test func aFloodOfTheSameQuestionAsksOnce() {
        let asker = CountingAsker(.answered(.once), delay: 500_000)
        let gate = AccessGate(clock: ManualAgentClock(), askers: [asker])
        let id = UUID()
        let question = AccessQuestion(context: context(), item: "s/a", reason: "ask")
        let answers = AnswerList()
        let threads = (0..<20).map { _ in Thread { answers.append(gate.ask(question, item: id)) } }
        threads.forEach { $0.start() }
        while answers.all.count < 20 { usleep(10_000) }
        #expect(answers.all.allSatisfy { $0 == .answered(.once) })
        #expect(asker.count == 1)
    }

    @Test func questionsAreRateLimitedPerProgram() {
        let asker = CountingAsker(.answered(.deny))
        let gate = AccessGate(clock: ManualAgentClock(), askers: [asker])
        let question = AccessQuestion(context: context(), item: "s/a", reason: "ask")
        for _ in 0..<3 { #expect(gate.ask(question, item: UUID()) == .answered(.deny)) }
        #expect(gate.ask(question, item: UUID()) == .unreachable)
        #expect(asker.count == 3)
    }

    @Test func aLeaseLastsItsMinutesAndEndsAtLock() {
        let clock = ManualAgentClock()
        let gate = AccessGate(clock: clock, askers: [CountingAsker(.answered(.lease(seconds: 300)))])
        let id = UUID()
        #expect(
            gate.ask(AccessQuestion(context: context(), item: "s/a", reason: "ask"), item: id)
                == .answered(.lease(seconds: 300)))
        #expect(gate.hasLease(context(), item: id))
        clock.advance(301)
        #expect(!gate.hasLease(context(), item: id))
        #expect(gate.ask(AccessQuestion(context: context(), item: "s/a", reason: "ask"), item: id).answer != nil)
        gate.endLeases()
        #expect(!gate.hasLease(context(), item: id))
    }
}

extension AccessGateTests {
    /// A channel that put the question and got no answer in time makes the
    /// outcome unanswered, even when a later channel reaches no one; with
    /// no channel reaching anyone, it is unreachable.
    @Test func noAnswerInTimeAndNoOneToAskAreTwoOutcomes() {
        let question = AccessQuestion(context: context(), item: "s/a", reason: "ask")
        let late = AccessGate(
            clock: ManualAgentClock(), askers: [CountingAsker(.unanswered), CountingAsker(.unreachable)])
        #expect(late.ask(question, item: UUID()) == .unanswered)
        #expect(late.failure(.unanswered) == "no one answered within 60 s")
        let nobody = AccessGate(clock: ManualAgentClock(), askers: [CountingAsker(.unreachable)])
        #expect(nobody.ask(question, item: UUID()) == .unreachable)
        #expect(nobody.failure(.unreachable) == "no one could be asked")
        // A later channel's answer still settles it.
        let answered = AccessGate(
            clock: ManualAgentClock(), askers: [CountingAsker(.unanswered), CountingAsker(.answered(.once))])
        #expect(answered.ask(question, item: UUID()) == .answered(.once))
    }
}

@Suite struct AgentConsentTests {
    /// Every way of reading secrets passes the rules: by query and by persistent IDs.
    @Test func readsByQueryAndByIDAreHeldAndListingsAreNot() throws {
        let v = try TestVault()
        try v.vault.setAccessDefault(.ask)
        let item = Item(service: "s", account: "a", secret: .text("x"))
        try v.vault.add(item)
        let core = AgentCore(
            vaultURL: v.vault.url, clock: ManualAgentClock(),
            openVault: { (url) throws(KeychainError) in try Vault(url: url) })
        guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)) else {
            Issue.record("unlock failed")
            return
        }
        let unattended = context(terminal: nil)
        let refusal = KeychainError.consentMissing(
            "consent needed for service \"s\", account \"a\": the vault's default rule is 'ask', "
                + "and no one could be asked", .noChannel)
        for request in [
            AgentRequest.get(.key(service: "s", account: "a"), limitOne: true, detail: .secret),
            .getItems(ids: [item.persistentID], detail: .secretOnly),
            .get(.key(service: "s", account: "a"), limitOne: true, detail: .attributes),
        ] {
            guard case .failure(let error) = core.consent(to: request, from: unattended) else {
                Issue.record("\(request) was not held")
                continue
            }
            #expect(error == refusal)
        }
        let listing = AgentRequest.getItems(ids: [item.persistentID], detail: .listing)
        guard case .success = core.consent(to: listing, from: unattended) else {
            Issue.record("a listing was held")
            return
        }
    }

    /// The Secret Service provider's listing reads the attributes clients
    /// search on (`attr:` fields, the content type): not secret, so never
    /// asked about, and carrying no other field's value, seed or secret.
    /// Before, it read every attribute, and `secret-tool lookup` answered
    /// "allow once" was asked twice: the listing, then the secret.
    @Test func searchAttributesAreNotHeldAndCarryNothingElse() throws {
        let v = try TestVault()
        try v.vault.setAccessDefault(.ask)
        var item = Item(service: "s", account: "a", secret: .text("x"))
        item.customFields = [
            CustomField(name: "attr:xdg:schema", value: SecretBytes(utf8: "org.example")),
            CustomField(name: "content-type", value: SecretBytes(utf8: "application/json")),
            CustomField(name: "pin", value: SecretBytes(utf8: "1234"), isHidden: true),
        ]
        item.oneTimePassword = SecretBytes(utf8: "JBSWY3DPEHPK3PXP")
        try v.vault.add(item)
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)) else {
            Issue.record("unlock failed")
            return
        }
        let asker = QuestionLog(.deny)
        core.gate.askers = [asker]
        for request in [
            AgentRequest.getItems(ids: [item.persistentID], detail: .searchAttributes),
            .get(ItemQuery(itemClass: .genericPassword), limitOne: false, detail: .searchAttributes),
        ] {
            guard case .success(let allowed) = core.consent(to: request, from: context()) else {
                Issue.record("\(request) was held")
                continue
            }
            guard case .items(let found) = core.handle(allowed), let one = found.first else {
                Issue.record("no answer to \(request)")
                continue
            }
            #expect(one.secret == nil)
            #expect(one.oneTimePassword?.count == 0)
            #expect(one.customFields.map { $0.value.unsafeString ?? "" } == ["org.example", "application/json", ""])
        }
        #expect(asker.questions.isEmpty)
        #expect(!ItemDetail.searchAttributes.needsConsent && ItemDetail.attributes.needsConsent)
    }

    /// A read of many items (an export through the agent, a query of every
    /// match) is one question naming how many, never one per item (which
    /// the rate limit would cut after three).
    @Test func aBulkReadIsOneQuestionNamingHowMany() throws {
        let v = try TestVault()
        try v.vault.setAccessDefault(.ask)
        for n in 0..<5 { try v.vault.add(Item(service: "s", account: "a\(n)", secret: .text("x"))) }
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)) else {
            Issue.record("unlock failed")
            return
        }
        let asker = QuestionLog(.untilLock)
        core.gate.askers = [asker]
        let every = AgentRequest.get(
            ItemQuery(itemClass: .genericPassword, service: "s"), limitOne: false, detail: .secret)
        guard case .success = core.consent(to: every, from: context()) else {
            Issue.record("the bulk read was refused")
            return
        }
        #expect(asker.questions.count == 1)
        #expect(asker.questions.first?.itemCount == 5)
        #expect(
            asker.questions.first?.subject
                == "the secrets of 5 items: service \"s\", account \"a0\"; service \"s\", account \"a1\"; "
                + "service \"s\", account \"a2\"; …")
        // The answer covers each item: reading one of them asks nothing.
        guard
            case .success = core.consent(
                to: .get(.key(service: "s", account: "a3"), limitOne: true, detail: .secret), from: context())
        else {
            Issue.record("a leased item was refused")
            return
        }
        #expect(asker.questions.count == 1)
    }

    /// A read through the git helper names the repository, through the
    /// docker helper the registry, from the query the helper sends.
    @Test func gitAndDockerQuestionsNameTheRepositoryAndRegistry() throws {
        var query = ItemQuery(itemClass: .internetPassword, service: "example.com", account: "ana")
        query.internetProtocol = "htps"
        query.port = 8443
        query.path = "team/repo.git"
        #expect(
            AccessContext.target(of: query, channel: FobStore.AccessChannel.git)
                == "https://example.com:8443/team/repo.git")
        query.internetProtocol = "ssh "
        query.port = 0
        query.path = nil
        #expect(AccessContext.target(of: query, channel: FobStore.AccessChannel.git) == "ssh://example.com")
        #expect(AccessContext.target(of: query, channel: FobStore.AccessChannel.command("get")) == nil)
        var docker = ItemQuery(itemClass: .internetPassword, service: "registry.example.com")
        docker.path = "https://registry.example.com/v2/"
        #expect(
            AccessContext.target(of: docker, channel: FobStore.AccessChannel.docker)
                == "https://registry.example.com/v2/")
        let asked = AccessContext(
            requester: context().requester, channel: FobStore.AccessChannel.git,
            target: "https://example.com/team/repo.git")
        let text = TerminalAsker.prompt(
            AccessQuestion(context: asked, item: "the item", reason: "ask"), leaseSeconds: 900)
        #expect(text.contains("asks for the secret of the item through git for https://example.com/team/repo.git\n"))
        #expect(
            PinentryAsker.description(AccessQuestion(context: asked, item: "the item", reason: "ask"))
                .contains("through git for https://example.com/team/repo.git."))
    }
}

/// An asker that keeps every question and gives one answer.
private final class QuestionLog: AccessAsker, @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [AccessQuestion] = []
    let answer: AccessAnswer?
    init(_ answer: AccessAnswer?) { self.answer = answer }
    var questions: [AccessQuestion] { lock.withLock { asked } }
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        lock.withLock { asked.append(question) }
        return answer.map { .answered($0) } ?? .unreachable
    }
}

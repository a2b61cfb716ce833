import FobAgent
import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

/// Access groups (`kSecAttrAccessGroup`), as the Keychain has them: the
/// items of a group are shared by every program of the group. A program
/// joins a group by making its first item, or when the user trusts it with
/// one of the group's items; writing into a group of others joins nothing.
@Suite struct AccessGroupTests {
    static let group = "com.example.shared"

    /// A SecItem program with its own executable identity.
    static func program(_ name: String, inode: UInt64) -> (context: AccessContext, trusted: TrustedProgram) {
        let identity = ExecutableIdentity(device: 1, inode: inode, size: 10, modifiedNanoseconds: 5, owner: 1000)
        let requester = Requester(
            pid: Int32(inode), uid: 1000, executable: "/opt/\(name)", identity: identity, terminal: "/dev/pts/1")
        return (
            AccessContext(requester: requester, channel: .program),
            TrustedProgram(path: "/opt/\(name)", identity: identity)
        )
    }

    let mail = AccessGroupTests.program("mail", inode: 11)
    let calendar = AccessGroupTests.program("calendar", inode: 12)
    let stranger = AccessGroupTests.program("stranger", inode: 13)

    final class Asked: AccessAsker, @unchecked Sendable {
        private let lock = NSLock()
        private var asked: [String] = []
        var questions: [String] { lock.withLock { asked } }
        func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
            lock.withLock { asked.append(question.subject) }
            return .answered(.deny)
        }
    }

    /// Adds `item` for `context` as the agent does: its consent, then the write.
    func add(_ core: AgentCore, _ item: Item, by context: AccessContext) {
        guard case .success(let allowed) = core.consent(to: .add(item), from: context) else {
            Issue.record("the add was refused")
            return
        }
        guard case .written = core.handle(allowed) else {
            Issue.record("the add failed")
            return
        }
    }

    /// Whether `context` may read the secret of (service, account) in `group`.
    func reads(_ core: AgentCore, _ account: String, group: String = AccessGroupTests.group, by context: AccessContext)
        -> Bool
    {
        let request = AgentRequest.get(
            .key(service: "app", account: account, accessGroup: group), limitOne: true, detail: .secret)
        guard case .success = core.consent(to: request, from: context) else { return false }
        return true
    }

    func rule(_ core: AgentCore, _ account: String, group: String = AccessGroupTests.group) -> AccessRule? {
        guard
            case .items(let found) = core.handle(
                .get(.key(service: "app", account: account, accessGroup: group), limitOne: true, detail: .attributes))
        else { return nil }
        return found.first?.accessRule
    }

    @Test func theProgramsOfAGroupReadEachOthersItemsAndOthersAreAsked() throws {
        let v = try TestVault()
        try v.vault.setAccessDefault(.ask)
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)) else {
            Issue.record("unlock failed")
            return
        }
        let asked = Asked()
        core.gate.askers = [asked]
        func item(_ account: String, group: String = AccessGroupTests.group) -> Item {
            Item(service: "app", account: account, accessGroup: group, secret: .text("x"))
        }
        // mail makes the group's first item: it is of the group.
        add(core, item("token"), by: mail.context)
        #expect(rule(core, "token")?.trusted == [mail.trusted])
        // The user lets calendar in (always allow, or `fob access grant`).
        var changes = ItemChanges()
        changes.accessRule = AccessRule(trusted: [mail.trusted, calendar.trusted])
        _ = core.handle(.update(.key(service: "app", account: "token", accessGroup: AccessGroupTests.group), changes))
        // An item mail saves later is calendar's to read, unasked.
        add(core, item("refresh"), by: mail.context)
        #expect(reads(core, "refresh", by: calendar.context))
        #expect(asked.questions.isEmpty)
        // A program of no group is asked (and refused here), for every item of it.
        #expect(!reads(core, "refresh", by: stranger.context))
        #expect(asked.questions.count == 1)
        // Writing into the group joins nothing: its own item trusts no one,
        // and the group's other items still ask.
        add(core, item("planted"), by: stranger.context)
        #expect(rule(core, "planted")?.trusted == [])
        #expect(!reads(core, "token", by: stranger.context))
        #expect(asked.questions.count == 2)
        // calendar, of the group, reads the stranger's item too.
        #expect(reads(core, "planted", by: calendar.context))
        // The empty access group is no group: trust in one item is not trust in another.
        add(core, item("one", group: ""), by: mail.context)
        add(core, item("two", group: ""), by: calendar.context)
        #expect(!reads(core, "two", group: "", by: mail.context))
        #expect(asked.questions.count == 3)
    }

    @Test func groupMembersAreTheTrustedProgramsOfTheGroupsItems() {
        var a = Item(service: "s", account: "a", accessGroup: "g", secret: nil)
        a.accessRule = AccessRule(trusted: [mail.trusted])
        var b = Item(service: "s", account: "b", accessGroup: "g", secret: nil)
        b.accessRule = AccessRule(trusted: [mail.trusted, calendar.trusted])
        var c = Item(service: "s", account: "c", accessGroup: "", secret: nil)
        c.accessRule = AccessRule(trusted: [stranger.trusted])
        #expect(AccessPolicy.groupMembers([a, b, c]) == ["g": [mail.trusted, calendar.trusted]])
        let verdict = AccessPolicy.decide(
            calendar.context, item: a, vaultDefault: .ask, groupMembers: [mail.trusted, calendar.trusted])
        #expect(verdict == .allow("/opt/calendar is of the access group \"g\""))
    }
}

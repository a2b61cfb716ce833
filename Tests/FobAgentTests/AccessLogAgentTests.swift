import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The agent's access log: every decision of the gate is recorded once,
/// with the requester and the channel it was asked through, in batches.
@Suite struct AccessLogAgentTests {
    private func report(_ v: TestVault, _ watermarks: VaultWatermarks) throws -> AccessLogReport {
        let fresh = try Vault(url: v.vault.url)
        try fresh.unlock(password: v.password)
        let keys = AccessLogKeys(logKey: try #require(try fresh.accessLogKey(create: false)))
        let head = AccessLogHead.read(AccessLogHead.path(directory: watermarks.directory, keys: keys))
        return AccessLogReader.read(AccessLogLocation(vaultURL: v.vault.url), keys: keys, head: head)
    }

    /// git, run from bash in a terminal, as the agent would name it.
    static let git = AccessContext(
        requester: Requester(
            pid: 4242, uid: 1000, executable: "/usr/bin/git", identity: nil, arguments: ["git", "credential"],
            parents: [ProcessSummary(pid: 4200, executable: "/bin/bash", name: "bash")], terminal: "/dev/pts/4",
            systemdUnit: "session-2.scope"),
        channel: .git)

    /// An unlocked agent with one item and its log's head state in the test's directory.
    private func agent(_ v: TestVault, rule: AccessRule = AccessRule()) throws -> (AgentCore, VaultWatermarks) {
        var item = Item(service: "mail", account: "ana", secret: .text("s3cret-bytes"))
        item.accessRule = rule
        try v.vault.add(item)
        v.vault.lock()
        let watermarks = VaultWatermarks(environment: ["XDG_STATE_HOME": v.directory.file("state").path])
        try FileManager.default.createDirectory(at: v.directory.file("state"), withIntermediateDirectories: true)
        let core = AgentCore(vaultURL: v.vault.url, watermarks: watermarks)
        let me = AccessLogRequester(pid: getpid(), uid: getuid())
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0), from: me).isOK)
        return (core, watermarks)
    }

    static let read = AgentRequest.get(.key(service: "mail", account: "ana"), limitOne: true, detail: .secret)

    /// A request as the server serves it: consent first, then the answer.
    private func serve(_ core: AgentCore, _ request: AgentRequest, _ context: AccessContext = git) -> AgentResponse {
        switch core.consent(to: request, from: context) {
        case .success(let allowed): return core.handle(allowed)
        case .failure(let refusal): return .failure(refusal)
        }
    }

    private func entries(_ core: AgentCore, _ v: TestVault, _ watermarks: VaultWatermarks) throws -> [AccessLogEntry] {
        #expect(core.flushAccessLog())
        #expect(core.accessLogStatus == .ok)
        let log = try report(v, watermarks)
        #expect(log.problems == [])
        return log.records.map(\.entry)
    }

    @Test func everyReadIsRecordedOnceWithItsRequesterAndChannel() throws {
        let v = try TestVault()
        let (core, watermarks) = try agent(v)
        for _ in 0..<3 { #expect(serve(core, AccessLogAgentTests.read).isItems) }
        // A listing and a read of the listing's detail carry no secret: not recorded.
        _ = serve(core, .list(service: nil))
        _ = serve(core, .get(.key(service: "mail", account: "ana"), limitOne: true, detail: .listing))
        let log = try entries(core, v, watermarks)
        #expect(log.map(\.event) == [.unlockWithPassword, .read, .read, .read])
        let read = try #require(log.last)
        #expect(read.item == ItemKey(service: "mail", account: "ana"))
        #expect(read.channel == .git)
        #expect(read.decision == .allowedRule)
        #expect(read.detail == "the vault's default rule is 'any'")
        #expect(
            read.requester
                == AccessLogRequester(
                    pid: 4242, uid: 1000, executable: "/usr/bin/git", argv0: "git", parents: ["bash(4200)"],
                    tty: "/dev/pts/4", unit: "session-2.scope"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: v.vault.url.path + ".log"))
        #expect(bytes.range(of: Data("s3cret-bytes".utf8)) == nil)
        core.lockAll()
    }

    @Test func aDenialByRuleIsRecorded() throws {
        let v = try TestVault()
        let (core, watermarks) = try agent(v, rule: AccessRule(mode: .deny))
        guard case .failure(.accessDenied) = serve(core, AccessLogAgentTests.read) else {
            Issue.record("a 'deny' rule refuses")
            return
        }
        let log = try entries(core, v, watermarks)
        #expect(log.map(\.event) == [.unlockWithPassword, .denial])
        #expect(log.last?.decision == .denied)
        #expect(log.last?.channel == .git)
        #expect(log.last?.detail == "the rule of service \"mail\", account \"ana\" is 'deny'")
        core.lockAll()
    }

    @Test func eachAnswerIsRecordedWithItsPromptLeaseAndRule() throws {
        let v = try TestVault()
        let (core, watermarks) = try agent(v, rule: AccessRule(mode: .ask))
        let asker = AnsweringAsker()
        core.gate.askers = [asker]
        asker.answers = [.once, .lease(seconds: 600), .deny]
        #expect(serve(core, AccessLogAgentTests.read).isItems)
        #expect(serve(core, AccessLogAgentTests.read).isItems)
        // The lease answers the next without a question.
        #expect(serve(core, AccessLogAgentTests.read).isItems)
        var sh = AccessLogAgentTests.git
        sh.requester.executable = "/bin/sh"
        guard case .failure(.accessDenied) = serve(core, AccessLogAgentTests.read, sh) else {
            Issue.record("a refusal is errSecAuthFailed")
            return
        }
        // Asked, and no one answers in time: timed out.
        sh.requester.executable = "/bin/bash"
        guard case .failure(.consentMissing(let late, .unanswered)) = serve(core, AccessLogAgentTests.read, sh) else {
            Issue.record("no answer in time is errSecInteractionNotAllowed")
            return
        }
        #expect(late.hasSuffix("and no one answered within 60 s"))
        // Nobody to ask: no channel.
        sh.requester.executable = "/bin/dash"
        core.gate.askers = []
        guard case .failure(.consentMissing(let unasked, .noChannel)) = serve(core, AccessLogAgentTests.read, sh) else {
            Issue.record("no channel is errSecInteractionNotAllowed")
            return
        }
        #expect(unasked.hasSuffix("and no one could be asked"))
        let log = try entries(core, v, watermarks).dropFirst()
        #expect(
            log.map { "\($0.event.rawValue) \($0.decision?.rawValue ?? "-")" } == [
                "prompt -", "read allowed-once",
                "prompt -", "lease allowed-lease", "read allowed-lease",
                "read allowed-lease",
                "prompt -", "denial denied",
                "prompt -", "denial timed-out",
                "prompt -", "denial no-channel",
            ])
        #expect(log.suffix(3).first?.detail.hasSuffix("is 'ask'; no one answered within 60 s") == true)
        #expect(log.last?.detail.hasSuffix("is 'ask'; no one could be asked") == true)
        #expect(log.map(\.requester.executable).suffix(2) == ["/bin/dash", "/bin/dash"])
        #expect(log.allSatisfy { $0.item == ItemKey(service: "mail", account: "ana") && $0.channel == .git })
        core.lockAll()
    }

    @Test func alwaysIsARuleChangeThenReadsByTheRule() throws {
        let v = try TestVault()
        let (core, watermarks) = try agent(v, rule: AccessRule(mode: .ask))
        let asker = AnsweringAsker()
        asker.answers = [.always]
        core.gate.askers = [asker]
        var me = AccessLogAgentTests.git
        me.requester.executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        me.requester.identity = ProcessInspector.identity(ofFile: "/proc/self/exe")
        #expect(serve(core, AccessLogAgentTests.read, me).isItems)
        #expect(serve(core, AccessLogAgentTests.read, me).isItems)
        let log = try entries(core, v, watermarks).dropFirst()
        #expect(
            log.map { "\($0.event.rawValue) \($0.decision?.rawValue ?? "-")" } == [
                "prompt -", "rule-change -", "read allowed-rule", "read allowed-rule",
            ])
        #expect(log.dropFirst().first?.detail == "always allow \(me.requester.executable)")
        #expect(asker.answers.isEmpty)
        core.lockAll()
    }

    @Test func aThousandAppendsAreOneBatchedWrite() throws {
        let v = try TestVault()
        let key = try #require(try v.vault.accessLogKey(create: true))
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: v.vault.url), keys: AccessLogKeys(logKey: key), headDirectory: nil)
        let log = AccessLog(writer: writer, batchDelay: 0.05)
        let entry = AccessLogEntry(
            time: Date(), event: .read, requester: AccessLogRequester(pid: 1, executable: "/usr/bin/git"),
            item: ItemKey(service: "s", account: "a"), channel: .git, decision: .allowedRule)
        for _ in 0..<1000 { log.append(entry) }
        // The flushing thread writes them within its batch delay.
        let deadline = Date().addingTimeInterval(5)
        var size = 0
        while Date() < deadline {
            var st = stat()
            if stat(v.vault.url.path + ".log", &st) == 0 { size = Int(st.st_size) }
            if size > 1000 * 60 { break }
            usleep(10_000)
        }
        log.close()
        let report = AccessLogReader.read(
            AccessLogLocation(vaultURL: v.vault.url), keys: AccessLogKeys(logKey: key), head: nil)
        #expect(report.records.count == 1000)
        #expect(report.problems == [])
        #expect(log.status == .ok)
    }

    @Test func aFailingWriteKeepsItsEntriesAndSaysWhy() throws {
        let v = try TestVault()
        let key = try #require(try v.vault.accessLogKey(create: true))
        // A directory where the current file should be: every write fails.
        try FileManager.default.createDirectory(atPath: v.vault.url.path + ".log", withIntermediateDirectories: false)
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: v.vault.url), keys: AccessLogKeys(logKey: key), headDirectory: nil)
        let log = AccessLog(writer: writer, batchDelay: 0.01)
        log.append(AccessLogEntry(time: Date(), event: .read))
        #expect(!log.flush())
        guard case .failing(let reason, let unwritten, 0) = log.status else {
            Issue.record("a failed write shows in the status")
            return
        }
        #expect(reason.contains("vault.db.log"))
        #expect(unwritten == 1)
        try FileManager.default.removeItem(atPath: v.vault.url.path + ".log")
        #expect(log.flush())
        #expect(log.status == .ok)
    }
}

/// Answers each question with the next of ``answers``; then puts
/// questions that no one answers.
private final class AnsweringAsker: AccessAsker, @unchecked Sendable {
    var answers: [AccessAnswer] = []
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        answers.isEmpty ? .unanswered : .answered(answers.removeFirst())
    }
}

extension AgentResponse {
    fileprivate var isItems: Bool {
        if case .items(let found) = self { return !found.isEmpty }
        return false
    }
}

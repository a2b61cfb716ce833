import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The entries of `fob log --json`, read through the agent (which writes
/// what it queued first).
struct LoggedEntries {
    let entries: [[String: Any]]

    init(entries: [[String: Any]]) {
        self.entries = entries
    }

    init(_ fixture: AgentFixture, _ extra: [String] = [], password: Bool = false) throws {
        let result = try fixture.run(["log", "--json"] + extra, password: password)
        #expect(result.status == 0, "\(result.stderrText)")
        entries = (try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]]) ?? []
    }

    /// The entries of `event` about `account` (any account for `nil`), as
    /// "channel decision executable".
    func lines(_ event: String, account: String? = "acct") -> [String] {
        entries.filter {
            $0["event"] as? String == event
                && (account == nil || ($0["item"] as? [String: Any])?["account"] as? String == account)
        }.map {
            let requester = $0["requester"] as? [String: Any] ?? [:]
            let decision = $0["decision"] as? String ?? "-"
            return "\($0["channel"] as? String ?? "-") \(decision) \(requester["executable"] as? String ?? "-")"
        }
    }

    /// The details of the entries of `event` about `account`.
    func details(_ event: String, account: String = "acct") -> [String] {
        entries.filter {
            $0["event"] as? String == event && ($0["item"] as? [String: Any])?["account"] as? String == account
        }.map { $0["detail"] as? String ?? "" }
    }
}

/// Every command that reads secrets records each read, with the program
/// that ran `fob` and the command's channel: `fob export`, `fob verify`,
/// `fob passwd`, `fob sync` and `fob access`, with the master password or
/// through the agent, each through real `fob` processes.
@Suite(.serialized) final class AccessLogCommandTests {
    let fixture: AgentFixture
    /// This test process: the program that runs each `fob` (its parent).
    let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""

    init() throws {
        fixture = try AgentFixture()
        #expect(try fixture.run(["add", "svc", "acct"], input: "s3cret", password: true).status == 0)
        #expect(try fixture.run(["add", "svc", "other"], input: "0ther", password: true).status == 0)
        #expect(try fixture.unlock().status == 0)
    }

    deinit { fixture.stop() }

    /// Whether an unlock with the master password by `channel` was recorded.
    func unlockRecorded(_ log: LoggedEntries, _ channel: String) -> Bool {
        log.entries.contains {
            $0["event"] as? String == "unlock-with-password" && $0["channel"] as? String == channel
                && $0["decision"] as? String == "allowed-password"
        }
    }

    @Test func exportRecordsEachItemItWrote() throws {
        let out = fixture.runtime.url.appendingPathComponent("export.json").path
        let export = try fixture.run(["export", "--output", out], password: true)
        #expect(export.status == 0, "\(export.stderrText)")
        let log = try LoggedEntries(fixture)
        #expect(log.lines("read") == ["export allowed-password \(me)"])
        #expect(log.lines("read", account: "other") == ["export allowed-password \(me)"])
        #expect(log.details("read") == ["the master password: exported as fob-json"])
        #expect(unlockRecorded(log, "export"))
    }

    @Test func verifyRecordsEachRecordItDecrypted() throws {
        let verify = try fixture.run(["verify"], password: true)
        #expect(verify.status == 0, "\(verify.stderrText)")
        let log = try LoggedEntries(fixture)
        #expect(log.lines("read") == ["verify allowed-password \(me)"])
        #expect(log.lines("read", account: "other") == ["verify allowed-password \(me)"])
        #expect(log.details("read") == ["the master password: decrypted to authenticate, not shown"])
        #expect(unlockRecorded(log, "verify"))
        // The entries it wrote pass the next check.
        #expect(try fixture.run(["verify"], password: true).status == 0)
    }

    @Test func passwdRecordsEachItemItReencrypted() throws {
        let newPassword = fixture.runtime.url.appendingPathComponent("new-password").path
        try Data("new horse\n".utf8).write(to: URL(fileURLWithPath: newPassword))
        let passwd = try fixture.run(["passwd", "--new-password-file", newPassword], password: true)
        #expect(passwd.status == 0, "\(passwd.stderrText)")
        // passwd locks the agent: the log is read with the new password.
        try Data("new horse\n".utf8).write(to: URL(fileURLWithPath: fixture.vault.passwordFile))
        let log = try LoggedEntries(fixture, password: true)
        #expect(log.lines("read") == ["passwd allowed-password \(me)"])
        #expect(log.lines("read", account: "other") == ["passwd allowed-password \(me)"])
        #expect(log.details("read") == ["the master password: re-encrypted under a new vault key"])
        #expect(unlockRecorded(log, "passwd"))
    }

    @Test func accessCommandsRecordEachRuleChange() throws {
        // Through the agent: its consent records the change.
        #expect(try fixture.run(["access", "set", "svc", "acct", "ask"]).status == 0)
        // With the master password: the vault is opened here and the change recorded here.
        #expect(try fixture.run(["access", "set", "svc", "other", "deny"], password: true).status == 0)
        #expect(try fixture.run(["access", "default", "ask"], password: true).status == 0)
        let log = try LoggedEntries(fixture)
        #expect(log.lines("rule-change") == ["access allowed-rule \(me)"])
        #expect(log.lines("rule-change", account: "other") == ["access allowed-password \(me)"])
        #expect(
            log.details("rule-change", account: "other") == [
                "the master password: rule now 'deny', 0 trusted and 0 denied programs"
            ])
        #expect(
            log.entries.contains {
                $0["event"] as? String == "rule-change" && $0["item"] is NSNull
                    && $0["detail"] as? String == "the vault's default rule is now 'ask'"
                    && $0["decision"] as? String == "allowed-password"
            }, "\(log.entries.filter { $0["event"] as? String == "rule-change" })")
        #expect(unlockRecorded(log, "access"))
        // `access show` reads no secret: nothing read is recorded.
        #expect(try fixture.run(["access", "show"]).status == 0)
        #expect(try LoggedEntries(fixture).lines("read", account: nil) == [])
    }

    /// A bare git remote and a git configuration of the test's own.
    func gitRemote() throws -> String {
        let home = fixture.runtime.url.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let config = home + "/gitconfig"
        _ = FileManager.default.createFile(atPath: config, contents: Data())
        fixture.extraEnvironment = [
            "HOME": home, "GIT_CONFIG_GLOBAL": config, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
        ]
        let remote = fixture.runtime.url.appendingPathComponent("remote.git").path
        let made = try ChildProcess.run(
            executable: "/usr/bin/git", arguments: ["init", "-q", "--bare", "-b", "main", remote],
            environment: FobProcess.baseEnvironment.merging(fixture.extraEnvironment) { $1 })
        #expect(made.status == 0, "\(made.stderrText)")
        return remote
    }

    @Test(arguments: [false, true])
    func syncRecordsEachItemItSealed(withPassword: Bool) throws {
        let remote = try gitRemote()
        let initialized = try fixture.run(
            ["sync", "init", remote, "--kdf", "interactive", "--name", "desk"], password: true)
        #expect(initialized.status == 0, "\(initialized.stderrText)")
        #expect(try fixture.run(["update", "svc", "acct"], input: "n3w", password: true).status == 0)
        #expect(try fixture.run(["update", "svc", "other"], input: "n3w", password: true).status == 0)
        let before = try LoggedEntries(fixture).entries.count
        let synced = try fixture.run(["sync"], password: withPassword)
        #expect(synced.status == 0, "\(synced.stderrText)")
        let decision = withPassword ? "allowed-password" : "allowed-rule"
        let log = LoggedEntries(entries: Array(try LoggedEntries(fixture).entries.dropFirst(before)))
        #expect(log.lines("read").contains("sync \(decision) \(me)"), "\(log.lines("read"))")
        #expect(log.lines("read", account: "other").contains("sync \(decision) \(me)"))
        #expect(log.lines("read", account: nil).allSatisfy { $0 == "sync \(decision) \(me)" })
        if withPassword { #expect(unlockRecorded(log, "sync")) }
    }
}

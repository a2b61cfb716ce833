import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The access log through a real agent and real commands: each read once,
/// with the program that ran `fob` and the command's channel; a denial, a
/// question, and a command given the master password recorded; any entry
/// deleted, edited or reordered makes `fob verify` exit 93.
@Suite(.serialized) final class AccessLogProcessTests {
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

    /// `fob log --json` through the agent (which writes what it queued first), as a list of entries.
    func log(_ extra: [String] = []) throws -> [[String: Any]] {
        let result = try fixture.run(["log", "--json"] + extra)
        #expect(result.status == 0, "\(result.stderrText)")
        return (try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]]) ?? []
    }

    /// The entries of `event` about `account`, as "channel decision executable".
    func lines(_ entries: [[String: Any]], _ event: String, account: String = "acct") -> [String] {
        entries.filter {
            $0["event"] as? String == event && ($0["item"] as? [String: Any])?["account"] as? String == account
        }.map {
            let requester = $0["requester"] as? [String: Any] ?? [:]
            let decision = $0["decision"] as? String ?? "-"
            return "\($0["channel"] as? String ?? "-") \(decision) \(requester["executable"] as? String ?? "-")"
        }
    }

    @Test func eachReadAppearsOnceWithItsProgramAndChannel() throws {
        #expect(try fixture.run(["get", "svc", "acct"]).stdoutText == "s3cret\n")
        #expect(try fixture.run(["get", "svc", "acct"]).status == 0)
        #expect(try fixture.run(["ls"]).status == 0)
        let entries = try log()
        #expect(lines(entries, "read") == ["get allowed-rule \(me)", "get allowed-rule \(me)"])
        #expect(lines(entries, "read", account: "other") == [])
        let read = try #require(entries.last { $0["event"] as? String == "read" })
        #expect(read["detail"] as? String == "the vault's default rule is 'any'")
        let requester = try #require(read["requester"] as? [String: Any])
        #expect(requester["pid"] as? Int == Int(getpid()))
        #expect(!(requester["parents"] as? [String] ?? []).isEmpty)
        // No secret reaches the log's file.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fixture.vault.path + ".log"))
        #expect(bytes.range(of: Data("s3cret".utf8)) == nil)
    }

    @Test func aDenialAndAQuestionAreRecorded() throws {
        #expect(try fixture.run(["access", "set", "svc", "acct", "deny"], password: true).status == 0)
        let denied = try fixture.run(["get", "svc", "acct"])
        #expect(denied.status == 51)
        #expect(denied.stdout.isEmpty)
        #expect(try fixture.run(["access", "set", "svc", "other", "ask"], password: true).status == 0)
        // No terminal and no desktop: nobody can be asked.
        let unasked = try fixture.run(["get", "svc", "other"])
        #expect(unasked.status == 36)
        #expect(unasked.stdout.isEmpty)
        let entries = try log()
        #expect(lines(entries, "denial") == ["get denied \(me)"])
        #expect(lines(entries, "prompt", account: "other") == ["get - \(me)"])
        #expect(lines(entries, "denial", account: "other") == ["get no-channel \(me)"])
        #expect(lines(entries, "read") + lines(entries, "read", account: "other") == [])
    }

    /// A question put and left unanswered (pinentry's own timeout) is
    /// timed-out; a question no channel could put is no-channel: both exit
    /// 36 with nothing on standard output, each named in the error.
    @Test func noAnswerInTimeAndNoOneToAskAreTwoDecisions() throws {
        #expect(try fixture.run(["access", "set", "svc", "acct", "ask"], password: true).status == 0)
        #expect(try fixture.run(["access", "set", "svc", "other", "ask"], password: true).status == 0)
        // An agent whose pinentry puts the question and hears only its timeout.
        fixture.stop()
        let pinentry = fixture.runtime.url.appendingPathComponent("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while read -r line; do
              case "$line" in
                CONFIRM) echo 'ERR 83886142 Timeout <Pinentry>';;
                BYE) echo OK; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: pinentry))
        chmod(pinentry, 0o755)
        fixture.extraEnvironment["FOB_PINENTRY"] = pinentry
        #expect(try fixture.unlock().status == 0)
        let late = try fixture.run(["get", "svc", "acct"])
        #expect(late.status == 36)
        #expect(late.stdout.isEmpty)
        #expect(late.stderrText.contains("no one answered within 60 s"), "\(late.stderrText)")
        // The same agent with no pinentry to run: no one can be asked.
        fixture.stop()
        fixture.extraEnvironment["FOB_PINENTRY"] = "/nonexistent/pinentry"
        #expect(try fixture.unlock().status == 0)
        let unasked = try fixture.run(["get", "svc", "other"])
        #expect(unasked.status == 36)
        #expect(unasked.stdout.isEmpty)
        #expect(unasked.stderrText.contains("no one could be asked"), "\(unasked.stderrText)")
        let entries = try log()
        #expect(lines(entries, "denial") == ["get timed-out \(me)"])
        #expect(lines(entries, "denial", account: "other") == ["get no-channel \(me)"])
        // `fob log` prints each decision by its name.
        let text = try fixture.run(["log", "--item", "svc", "acct"]).stdoutText
        #expect(text.contains("timed-out"), "\(text)")
    }

    @Test func aCommandGivenTheMasterPasswordIsRecordedNotAsked() throws {
        #expect(try fixture.run(["access", "set", "svc", "acct", "ask"], password: true).status == 0)
        // The agent holds the vault unlocked, but the password opens it here: no question.
        let read = try fixture.run(["get", "svc", "acct"], password: true)
        #expect(read.status == 0)
        #expect(read.stdoutText == "s3cret\n")
        let entries = try log()
        #expect(lines(entries, "read") == ["get allowed-password \(me)"])
        #expect(lines(entries, "prompt") == [])
        #expect(
            entries.contains { $0["event"] as? String == "unlock-with-password" && $0["channel"] as? String == "get" })
    }

    /// An upgrade replaces `fob` while its agent runs: a `fob` started
    /// afterwards runs the new file at the same path and is still Fob's own
    /// command, so its read is made for the program that ran it, through
    /// `fob get`, not taken for a foreign SecItem program's.
    @Test func aFobReplacedWhileItsAgentRunsIsStillFob() throws {
        fixture.stop()
        let directory = fixture.runtime.file("bin")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fob = directory.appendingPathComponent("fob").path
        func install() throws {
            try? FileManager.default.removeItem(atPath: fob + ".new")
            try FileManager.default.copyItem(atPath: FobProcess.binaryURL.path, toPath: fob + ".new")
            #expect(rename(fob + ".new", fob) == 0)
        }
        func run(_ arguments: [String], password: Bool = false) throws -> ProcessResult {
            var environment = FobProcess.baseEnvironment.merging(fixture.environment) { $1 }
            if password { environment["FOB_PASSWORD_FILE"] = fixture.vault.passwordFile }
            return try ChildProcess(executable: fob, arguments: arguments, environment: environment).wait(timeout: 60)
        }
        try install()
        #expect(try run(["unlock"], password: true).status == 0)
        let agent = try #require(fixture.agentPid)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent)/exe") == fob)
        try install()
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent)/exe") == fob + " (deleted)")
        let read = try run(["get", "svc", "acct"])
        #expect(read.stdoutText == "s3cret\n", "\(read.stderrText)")
        #expect(lines(try log(), "read") == ["get allowed-rule \(me)"])
    }

    /// The running agent's log rotates by size: bulk reads through the
    /// agent that write past 1 MiB (its rotation size) start a new file, no
    /// file grows past the size, and `fob log` and `fob verify` read one
    /// chain across the files, every entry once and in order.
    @Test func theAgentsLogRotatesBySizeAndStaysOneChain() throws {
        let csv = fixture.runtime.file("many.csv")
        var text = "name,url,username,password,note\n"
        for i in 0..<500 { text += "bulk,https://bulk.example/,user\(i),pw-\(i),\n" }
        try Data(text.utf8).write(to: csv)
        let imported = try fixture.run(["import", "chrome-csv", csv.path])
        #expect(imported.status == 0, "\(imported.stderrText)")
        let location = AccessLogLocation(vaultURL: URL(fileURLWithPath: fixture.vault.path))
        let client = AgentClient(endpoint: fixture.endpoint)
        let everything = AgentRequest.get(ItemQuery(itemClass: nil), limitOne: false, detail: .secret)
        var reads = 0
        // Until the agent's batches have rotated the file, then once more into the new one.
        while reads < 40 {
            guard case .items(let items) = try client.send(everything) else {
                Issue.record("the agent refused a bulk read")
                return
            }
            #expect(items.count == 502)
            reads += 1
            if location.rotatedSegments().count == 1 { break }
            _ = fixture.eventually(timeout: 1) { !location.rotatedSegments().isEmpty }
        }
        #expect(location.rotatedSegments().count == 1, "\(reads) reads")
        let entries = try log()
        #expect(entries.compactMap { $0["index"] as? Int } == Array(1...entries.count))
        let bulkReads = entries.filter {
            $0["event"] as? String == "read" && ($0["item"] as? [String: Any])?["service"] as? String == "bulk"
        }
        #expect(bulkReads.count == reads * 500)
        for path in [location.current] + location.rotatedSegments().map(location.rotated) {
            let size = (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
            #expect(size > 0 && size <= 1 << 20, "\(path): \(size) bytes")
        }
        let verified = try fixture.run(["verify"], password: true)
        #expect(verified.status == 0, "\(verified.stdoutText)")
        // `fob verify` adds its own entries (its unlock and each item it decrypted) after checking.
        #expect(
            verified.stdoutText.contains("access log verified (\(entries.count) entries)"), "\(verified.stdoutText)")
    }

    /// The log's records: each one's byte range in the current file.
    func records() throws -> (bytes: [UInt8], ranges: [Range<Int>]) {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: fixture.vault.path + ".log")))
        let offsets = try AccessLogFileFormat.parse(bytes).records.map(\.offset) + [bytes.count]
        return (bytes, zip(offsets, offsets.dropFirst()).map { $0..<$1 })
    }

    @Test(arguments: ["delete", "edit", "reorder"])
    func aTamperedEntryMakesVerifyExit93(_ change: String) throws {
        for _ in 0..<3 { #expect(try fixture.run(["get", "svc", "acct"]).status == 0) }
        // The agent writes its batch before the log is read.
        #expect(try log().count >= 4)
        #expect(try fixture.run(["verify"], password: true).status == 0)
        var (bytes, ranges) = try records()
        #expect(ranges.count >= 4)
        let (second, third) = (ranges[1], ranges[2])
        switch change {
        case "delete":
            bytes.removeSubrange(second)
        case "edit":
            bytes[second.upperBound - 40] ^= 0x01
        default:
            let swapped = Array(bytes[third]) + Array(bytes[second])
            bytes.replaceSubrange(second.lowerBound..<third.upperBound, with: swapped)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: fixture.vault.path + ".log"))
        let verify = try fixture.run(["verify"], password: true)
        #expect(verify.status == 93, "\(verify.stdoutText)")
        #expect(verify.stdoutText.contains("damaged: access log"))
    }
}

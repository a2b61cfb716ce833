import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Per-item revisions, `--if-revision` and `fob mv` through the built
/// binary: the same table of operations with the agent and without it.
@Suite(.serialized) struct RevisionProcessTests {
    /// Runs `fob` with arguments and standard input.
    typealias Run = (_ arguments: [String], _ input: String) throws -> ProcessResult

    /// The item `fob get --json` prints, as a dictionary.
    private static func json(_ run: Run, _ service: String, _ account: String) throws -> [String: Any] {
        let result = try run(["get", service, account, "--json"], "")
        #expect(result.status == 0, "\(result.stderrText)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    }

    private static func revision(_ run: Run, _ service: String = "mail", _ account: String = "ana") throws -> Int? {
        try json(run, service, account)["revision"] as? Int
    }

    /// The operations; `how` names the way they ran, for failure messages.
    private static func table(_ how: String, _ run: Run) throws {
        #expect(try run(["add", "mail", "ana"], "one\n").status == 0, "\(how)")
        #expect(try revision(run) == 1, "\(how)")
        #expect(try run(["save", "mail", "ana"], "two\n").status == 0, "\(how)")
        #expect(try revision(run) == 2, "\(how)")
        // A stale revision changes nothing and exits 40.
        let stale = try run(["update", "mail", "ana", "--if-revision", "1", "--label", "L"], "lost\n")
        #expect(stale.status == 40, "\(how): \(stale.stderrText)")
        #expect(
            stale.stderrText
                == "fob: item changed since revision 1 was read: service \"mail\", account \"ana\", now revision 2 (errSecInvalidItemRef)\n",
            "\(how)")
        #expect(try run(["get", "mail", "ana"], "").stdoutText == "two\n", "\(how)")
        #expect(try json(run, "mail", "ana")["label"] is NSNull, "\(how)")
        #expect(try revision(run) == 2, "\(how)")
        // The current one succeeds.
        #expect(try run(["update", "mail", "ana", "--if-revision", "2"], "three\n").status == 0, "\(how)")
        #expect(try run(["get", "mail", "ana"], "").stdoutText == "three\n", "\(how)")
        let listed = try run(["ls", "--json"], "")
        let items = try #require(try JSONSerialization.jsonObject(with: Data(listed.stdout)) as? [[String: Any]])
        #expect(items.map { $0["revision"] as? Int } == [3], "\(how)")
        #expect(try run(["save", "mail", "ana", "--if-revision", "2"], "lost\n").status == 40, "\(how)")
        #expect(try run(["save", "mail", "ana", "--if-revision", "0"], "lost\n").status == 40, "\(how)")
        // Neither stale save changed the secret or the revision.
        #expect(try run(["get", "mail", "ana"], "").stdoutText == "three\n", "\(how)")
        #expect(try revision(run) == 3, "\(how)")
        #expect(try run(["save", "mail", "ana", "--if-revision", "3"], "four\n").status == 0, "\(how)")
        #expect(try run(["save", "new", "item", "--if-revision", "5"], "x\n").status == 44, "\(how)")
        #expect(try run(["save", "new", "item", "--if-revision", "0"], "x\n").status == 0, "\(how)")
        #expect(try run(["rm", "mail", "ana", "--if-revision", "3"], "").status == 40, "\(how)")
        #expect(try revision(run) == 4, "\(how)")
        #expect(try run(["update", "gone", "x", "--if-revision", "1"], "x\n").status == 44, "\(how)")
        // mv keeps the secret, the creation date, and adds one revision.
        let before = try json(run, "mail", "ana")
        #expect(try run(["mv", "mail", "ana", "web", "ana2", "--if-revision", "3"], "").status == 40, "\(how)")
        #expect(try run(["mv", "mail", "ana", "web", "ana2"], "").status == 0, "\(how)")
        #expect(try run(["get", "mail", "ana"], "").status == 44, "\(how)")
        let after = try json(run, "web", "ana2")
        #expect(after["secret"] as? String == "four", "\(how)")
        #expect(after["created"] as? String == before["created"] as? String, "\(how)")
        #expect(after["revision"] as? Int == 5, "\(how)")
        #expect(try run(["mv", "web", "ana2", "new", "item"], "").status == 45, "\(how)")
        #expect(try run(["get", "new", "item"], "").stdoutText == "x\n", "\(how)")
        #expect(try run(["mv", "web", "ana2", "mail"], "").status == 0, "\(how)")
        #expect(try revision(run, "mail", "ana2") == 6, "\(how)")
        #expect(try run(["mv", "gone", "x", "other"], "").status == 44, "\(how)")
        #expect(try run(["rm", "mail", "ana2", "--if-revision", "nope"], "").status == 2, "\(how)")
        #expect(try run(["rm", "mail", "ana2", "--if-revision", "6"], "").status == 0, "\(how)")
        #expect(try run(["get", "mail", "ana2"], "").status == 44, "\(how)")
    }

    @Test func conditionalWritesAndMoveWithoutTheAgent() throws {
        let vault = try ProcessTestVault()
        try Self.table("without the agent") { arguments, input in
            try vault.run(["--no-agent"] + arguments, input: input)
        }
    }

    @Test func conditionalWritesAndMoveThroughTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock().status == 0)
        try Self.table("through the agent") { arguments, input in
            // No password file: every command must be served by the agent.
            try f.run(arguments, input: input)
        }
        #expect(try f.status()["state"] as? String == "unlocked")
    }
}

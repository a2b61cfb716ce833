import FobAgent
import FobCLI
import FobStore
import FobTestSupport
import Foundation
import Testing

/// `fob log`: its filters, its JSON, and `fob verify` on a tampered log.
@Suite struct LogCommandTests {
    /// A vault whose log holds three reads: git of mail/ana, curl of mail/ana an hour later, git of wifi/home.
    private func harness() throws -> (CLIHarness, [String: String]) {
        let h = try CLIHarness()
        let state = h.directory.file("state").path
        let environment = ["XDG_STATE_HOME": state, "HOME": h.directory.url.path, "FOB_AGENT": "0"]
        let vault = try h.openVault()
        let keys = AccessLogKeys(logKey: try #require(try vault.accessLogKey(create: true)))
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: vault.url), keys: keys,
            headDirectory: VaultWatermarks(environment: environment).directory)
        let start = Date(timeIntervalSince1970: 1_767_000_000)
        func read(_ at: Double, _ exe: String, _ service: String, _ account: String) -> AccessLogEntry {
            AccessLogEntry(
                time: start.addingTimeInterval(at), event: .read,
                requester: AccessLogRequester(pid: 42, uid: 1000, executable: exe, argv0: "x"),
                item: ItemKey(service: service, account: account), channel: .git, decision: .allowedRule,
                detail: "rule any")
        }
        try writer.append([
            read(0, "/usr/bin/git", "mail", "ana"), read(3600, "/usr/bin/curl", "mail", "ana"),
            read(7200, "/usr/bin/git", "wifi", "home"),
        ])
        vault.lock()
        return (h, environment)
    }

    @Test func filtersByItemProgramAndTime() throws {
        let (h, env) = try harness()
        let all = h.run(["log"], environment: env)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdoutText.split(separator: "\n").count == 4)
        #expect(all.stdoutText.hasPrefix("TIME"))
        let item = h.run(["log", "--item", "mail", "ana"], environment: env)
        #expect(item.stdoutText.split(separator: "\n").count == 3)
        #expect(!item.stdoutText.contains("wifi"))
        let program = h.run(["log", "--program", "/usr/bin/curl"], environment: env)
        #expect(program.stdoutText.split(separator: "\n").count == 2)
        #expect(program.stdoutText.contains("/usr/bin/curl (42)"))
        let since = h.run(["log", "--since", "2025-12-29T10:30:00Z"], environment: env)
        #expect(since.stdoutText.split(separator: "\n").count == 2)
        #expect(since.stdoutText.contains("wifi/home"))
        let bad = h.run(["log", "--since", "yesterday"], environment: env)
        #expect(bad.status == 2)
        let half = h.run(["log", "ana"], environment: env)
        #expect(half.status == 2)
    }

    /// The filters together, as `fob log --item S A --program P --since T
    /// --json`: an entry is shown only when it passes every one.
    @Test func allFiltersTogetherNarrowTheJSON() throws {
        let (h, env) = try harness()
        func indices(_ filters: [String]) throws -> [Int] {
            let run = h.run(["log"] + filters + ["--json"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [[String: Any]])
            return entries.compactMap { $0["index"] as? Int }
        }
        let item = ["--item", "mail", "ana"]
        #expect(try indices(item + ["--program", "/usr/bin/git", "--since", "2025-12-29T09:00:00Z"]) == [1])
        #expect(try indices(item + ["--program", "/usr/bin/curl", "--since", "2025-12-29T09:00:00Z"]) == [2])
        #expect(try indices(item + ["--program", "/usr/bin/git", "--since", "2025-12-29T09:30:00Z"]) == [])
        #expect(try indices(["--item", "wifi", "home", "--program", "/usr/bin/curl"]) == [])
        #expect(try indices(["--program", "/usr/bin/git", "--since", "2025-12-29T09:30:00Z"]) == [3])
    }

    /// A log rotated by size into several files is one chain to `fob verify`
    /// and `fob log`; an entry removed from an older file, or an older file
    /// removed, makes both exit 93 naming what is gone.
    @Test func aRotatedLogIsOneChainAcrossItsFiles() throws {
        let h = try CLIHarness()
        let environment = [
            "XDG_STATE_HOME": h.directory.file("state").path, "HOME": h.directory.url.path, "FOB_AGENT": "0",
        ]
        let vault = try h.openVault()
        let location = AccessLogLocation(vaultURL: vault.url)
        let keys = AccessLogKeys(logKey: try #require(try vault.accessLogKey(create: true)))
        let writer = AccessLogWriter(
            location: location, keys: keys, headDirectory: VaultWatermarks(environment: environment).directory,
            maxFileBytes: 4096, maxFiles: 20)
        for n in 0..<120 {
            try writer.append([
                AccessLogEntry(
                    time: Date(timeIntervalSince1970: 1_767_000_000 + Double(n)), event: .read,
                    requester: AccessLogRequester(pid: 42, uid: 1000, executable: "/usr/bin/git", argv0: "git"),
                    item: ItemKey(service: "mail", account: "ana \(n)"), channel: .git, decision: .allowedRule,
                    detail: "rule any")
            ])
        }
        vault.lock()
        let segments = location.rotatedSegments()
        #expect(segments.count >= 3)
        let verified = h.run(["verify"], environment: environment)
        #expect(verified.status == 0, "\(verified.stdoutText)")
        #expect(verified.stdoutText.contains("access log verified (120 entries)"), "\(verified.stdoutText)")
        let shown = h.run(["log", "--item", "mail", "ana 0"], environment: environment)
        #expect(shown.status == 0)
        #expect(shown.stdoutText.split(separator: "\n").count == 2)

        // The second entry of the oldest file goes.
        let oldest = location.rotated(segments[0])
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: oldest)))
        let records = try AccessLogFileFormat.parse(bytes).records
        bytes.removeSubrange(records[1].offset..<records[2].offset)
        try Data(bytes).write(to: URL(fileURLWithPath: oldest))
        let removed = h.run(["verify"], environment: environment)
        #expect(removed.status == 93)
        #expect(
            removed.stdoutText.contains("damaged: access log vault.db.log.\(segments[0]): entry 2 was removed"),
            "\(removed.stdoutText)")
        #expect(h.run(["log"], environment: environment).status == 93)

        // A whole file in the middle of the chain goes.
        try FileManager.default.removeItem(atPath: location.rotated(segments[1]))
        let missing = h.run(["verify"], environment: environment)
        #expect(missing.status == 93)
        #expect(missing.stdoutText.contains("are missing: a log file was removed"), "\(missing.stdoutText)")
    }

    /// `fob import fob-vault` reads every secret of the source vault with
    /// that vault's master password: the source's own access log records the
    /// unlock and each item's read once, in one write, as `fob export`
    /// records its own bulk read; `fob verify` still finds one whole chain.
    @Test func importFromAnotherVaultIsRecordedInThatVaultsLog() throws {
        let h = try CLIHarness()
        let source = try CLIHarness()
        let env = ["XDG_STATE_HOME": h.directory.file("state").path, "HOME": h.directory.url.path, "FOB_AGENT": "0"]
        #expect(source.run(["add", "mail", "ana"], input: "pw", environment: env).status == 0)
        #expect(source.run(["add", "wifi", "home"], input: "pw2", environment: env).status == 0)
        func entries() throws -> [[String: Any]] {
            let run = source.run(["log", "--json"], environment: env)
            #expect(run.status == 0, "\(run.stderr)")
            return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [[String: Any]])
        }
        let before = try entries().count
        let imported = h.run(
            ["import", "fob-vault", source.vaultPath, "--source-password-file", source.passwordFile], environment: env)
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try h.secret("wifi", "home") == Array("pw2".utf8))
        let added = try entries().dropFirst(before).map { entry in
            let item = entry["item"] as? [String: Any] ?? [:]
            let name = item.isEmpty ? "-" : "\(item["service"] ?? "")/\(item["account"] ?? "")"
            return "\(entry["event"] ?? "") \(entry["channel"] ?? "") \(entry["decision"] ?? "") \(name)"
        }
        #expect(
            added == [
                "unlock-with-password import allowed-password -", "read import allowed-password mail/ana",
                "read import allowed-password wifi/home",
            ])
        let read = try #require(try entries().last)
        #expect(read["detail"] as? String == "the master password: read by fob import into \(h.vaultPath)")
        let verified = source.run(["verify"], environment: env)
        #expect(verified.status == 0, "\(verified.stdoutText)")
    }

    @Test func jsonHasSortedKeys() throws {
        let (h, env) = try harness()
        let run = h.run(["log", "--json", "--program", "/usr/bin/curl"], environment: env)
        #expect(run.status == 0)
        #expect(
            run.stdoutText
                == #"[{"channel":"git","decision":"allowed-rule","detail":"rule any","event":"read","index":2,"item":{"accessGroup":"","account":"ana","class":"genp","service":"mail"},"requester":{"argv0":"x","executable":"\/usr\/bin\/curl","flatpakId":"","parents":[],"pid":42,"tty":"","uid":1000,"unit":""},"time":"2025-12-29T10:20:00Z"}]"#
                + "\n")
    }

    @Test func anEmptyLogIsNothingAndAnEmptyArray() throws {
        let h = try CLIHarness()
        #expect(h.run(["log"]).stdoutText == "")
        #expect(h.run(["log", "--json"]).stdoutText == "[]\n")
    }

    @Test func aRemovedEntryMakesLogAndVerifyExit93() throws {
        let (h, env) = try harness()
        let path = h.vaultPath + ".log"
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let records = try AccessLogFileFormat.parse(bytes).records
        bytes.removeSubrange(records[1].offset..<records[2].offset)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let verify = h.run(["verify"], environment: env)
        #expect(verify.status == 93)
        #expect(verify.stdoutText.contains("damaged: access log vault.db.log: entry 2 was removed"))
        let log = h.run(["log"], environment: env)
        #expect(log.status == 93)
        #expect(log.stderr.contains("entry 2 was removed"))
        // The 3 entries left, and verify's own unlock with the master password after them.
        #expect(log.stdoutText.split(separator: "\n").count == 4)
        #expect(log.stdoutText.split(separator: "\n").last?.contains("unlock-with-password") == true)
    }

    @Test func verifySaysTheLogVerified() throws {
        let (h, env) = try harness()
        let verify = h.run(["verify"], environment: env)
        #expect(verify.status == 0, "\(verify.stdoutText)")
        #expect(verify.stdoutText.contains("access log verified (3 entries)"))
    }
}

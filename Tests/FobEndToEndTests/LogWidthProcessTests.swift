import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// `fob log` as a person sees it at a terminal and as a script reads it:
/// on a terminal each line fits its width (COLUMNS, else the terminal's
/// size), cutting the item and the program with an ellipsis and keeping the
/// time and the decision whole; piped, every line is whole; `--json` is the
/// same either way.
@Suite struct LogWidthProcessTests {
    static let program = "/home/ana/.local/share/toolbox/bin/deploy-production-secrets"
    static let item = "api.production.example.com/deploy-bot@example.com"

    let vault: ProcessTestVault
    let environment: [String: String]

    /// A vault whose log holds one read of a long-named item by a long-named program.
    init() throws {
        vault = try ProcessTestVault()
        let home = vault.directory.url.path
        environment = vault.environment.merging(["HOME": home, "XDG_STATE_HOME": home + "/state"]) { $1 }
        let opened = try vault.open()
        defer { opened.lock() }
        let keys = AccessLogKeys(logKey: try #require(try opened.accessLogKey(create: true)))
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: opened.url), keys: keys,
            headDirectory: VaultWatermarks(environment: environment).directory)
        try writer.append([
            AccessLogEntry(
                time: Date(timeIntervalSince1970: 1_767_000_000), event: .read,
                requester: AccessLogRequester(pid: 424_242, uid: 1000, executable: Self.program, argv0: "deploy"),
                item: ItemKey(service: "api.production.example.com", account: "deploy-bot@example.com"),
                channel: .git, decision: .allowedUntilLock, detail: "answered")
        ])
    }

    /// The lines `fob log` wrote to a terminal `columns` wide (`nil`: unsized).
    func terminalLines(columns: Int?, _ extra: [String: String] = [:]) throws -> [String] {
        let session = try FobProcess.startInTerminal(
            ["log"], environment: environment.merging(extra) { $1 }, columns: columns)
        #expect(session.wait() == 0, "\(session.outputText)")
        return session.outputText.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }

    @Test func eightyColumnsFitWithTimeAndDecisionWhole() throws {
        let lines = try terminalLines(columns: nil, ["COLUMNS": "80"])
        #expect(lines.count == 2, "\(lines)")
        for line in lines { #expect(line.count <= 80, "\(line.count): \(line)") }
        let entry = try #require(lines.last)
        #expect(entry.hasPrefix("2025-12-29T09:20:00Z  read "), "\(entry)")
        #expect(entry.contains("  allowed-until-lock  git  "), "\(entry)")
        #expect(entry.contains("…"))
        // The program keeps its end, the pid; the item its start.
        #expect(entry.hasSuffix("… (424242)"), "\(entry)")
        #expect(entry.contains("  api.produ"), "\(entry)")
        #expect(lines.first?.hasPrefix("TIME") == true)
    }

    @Test func theTerminalsOwnWidthServesWithoutColumns() throws {
        let lines = try terminalLines(columns: 100)
        let entry = try #require(lines.last)
        #expect(entry.count <= 100, "\(entry)")
        #expect(entry.count > 80, "\(entry)")
        // The program keeps its end: its name's last letters and the pid.
        #expect(entry.hasSuffix("-secrets (424242)"), "\(entry)")
        #expect(entry.contains("…"))
    }

    @Test func aLocaleWithoutUnicodeGetsThreeDots() throws {
        let lines = try terminalLines(columns: nil, ["COLUMNS": "80", "LANG": "C"])
        let entry = try #require(lines.last)
        #expect(entry.count <= 80, "\(entry)")
        #expect(entry.contains("..."))
        #expect(!entry.contains("…"))
    }

    @Test func pipedEveryLineIsWholeAndTheJSONUnchanged() throws {
        let piped = try FobProcess.run(["log"], environment: environment.merging(["COLUMNS": "80"]) { $1 })
        #expect(piped.status == 0, "\(piped.stderrText)")
        #expect(piped.stdoutText.contains(Self.item + "  " + Self.program + " (424242)\n"), "\(piped.stdoutText)")
        let jsonPiped = try FobProcess.run(["log", "--json"], environment: environment)
        let session = try FobProcess.startInTerminal(
            ["log", "--json"], environment: environment.merging(["COLUMNS": "80"]) { $1 })
        #expect(session.wait() == 0)
        #expect(session.outputText == jsonPiped.stdoutText.replacingOccurrences(of: "\n", with: "\r\n"))
        let entries = try JSONSerialization.jsonObject(with: Data(jsonPiped.stdout)) as? [[String: Any]]
        let requester = entries?.first?["requester"] as? [String: Any]
        #expect(requester?["executable"] as? String == Self.program)
    }
}

import FobTestSupport
import Foundation
import Testing

/// The terminal UI as the first channel: a vault whose default is `ask`,
/// the UI open in one pane (80×24), `fob get` from another with no terminal
/// of its own; the request bar appears, F3 and an answer settle it.
@Suite(.serialized) final class TerminalUIConsentTests {
    let fixture: AgentFixture
    let ui: TmuxSession
    let shell: TmuxSession
    let fob = FobProcess.binaryURL.path
    let dir = TemporaryDirectory(prefix: "fob-ui-consent")

    init() throws {
        fixture = try AgentFixture()
        #expect(try fixture.run(["access", "default", "ask"], password: true).status == 0)
        #expect(try fixture.run(["add", "svc", "acct"], input: "s3cret", password: true).status == 0)
        #expect(try fixture.unlock().status == 0)
        ui = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", fob],
            environment: fixture.environment)
        try ui.waitFor("Items ")
        shell = try TmuxSession(width: 120, height: 20, environment: fixture.environment)
    }

    deinit { fixture.stop() }

    /// Starts `fob get svc acct` in a session of its own (no terminal), its
    /// output in files; returns the marker its exit status is written under.
    func startGet() throws -> String {
        let tag = "st" + UUID().uuidString.prefix(8)
        let out = dir.file("\(tag).out").path
        try shell.type(
            "setsid -w sh -c '\(fob) get svc acct' </dev/null >\(out) 2>\(out).err; echo \(tag)=$?")
        try shell.press("Enter")
        return tag
    }

    /// The exit status and standard output of the get marked `tag`.
    func finish(_ tag: String) throws -> (status: Int, output: String) {
        // The status line, not the echoed command (which holds `tag=$?`).
        let screen = try shell.waitUntil(timeout: 70, "the get's status") { screen in
            screen.components(separatedBy: "\n").contains { $0.hasPrefix("\(tag)=") }
        }
        let line = screen.components(separatedBy: "\n").first { $0.hasPrefix("\(tag)=") } ?? ""
        let output = try String(contentsOfFile: dir.file("\(tag).out").path, encoding: .utf8)
        return (Int(line.dropFirst(tag.count + 1)) ?? -1, output)
    }

    /// Waits for the bar, opens the dialog and answers `key`.
    func answer(_ key: String) throws {
        try ui.waitFor("account \"acct\" (fob get)", timeout: 20)
        // Keys in the UI's first instants after an unlock by the agent are
        // ignored (typed-ahead passwords): press again until the dialog shows.
        var shown = false
        for _ in 0..<10 where !shown {
            try ui.press("F3")
            shown = (try? ui.waitFor("t  this program until the vault locks", timeout: 2)) != nil
        }
        #expect(shown)
        try ui.type(key)
        try ui.waitForAbsence(of: "account \"acct\" (fob get)")
    }

    @Test func onceAllowsOneReadAndTheNextAsksAgain() throws {
        let first = try startGet()
        try answer("o")
        let read = try finish(first)
        #expect(read.status == 0)
        #expect(read.output == "s3cret\n")
        let second = try startGet()
        try answer("d")
        let denied = try finish(second)
        #expect(denied.status == 51)
        #expect(denied.output.isEmpty)
    }

    @Test func aLeaseAsksNoSecondQuestion() throws {
        let first = try startGet()
        try answer("m")
        #expect(try finish(first).status == 0)
        let again = try finish(try startGet())
        #expect(again.status == 0)
        #expect(again.output == "s3cret\n")
        #expect(!(try ui.capture()).contains("F3 answer"))
    }
}

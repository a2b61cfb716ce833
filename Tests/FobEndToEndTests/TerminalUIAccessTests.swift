import FobTestSupport
import Foundation
import Testing

/// The terminal UI's share of access rules, at 80×24 through a running
/// agent: the access log view (F4) shows a `fob get` read with its program
/// and channel; the editor's Access row changes an item's rule, which `fob
/// access show` then reads.
@Suite(.serialized) final class TerminalUIAccessTests {
    let fixture: AgentFixture
    let fob = FobProcess.binaryURL.path

    init() throws {
        fixture = try AgentFixture()
        #expect(try fixture.run(["access", "default", "ask"], password: true).status == 0)
        #expect(try fixture.run(["add", "svc", "acct"], input: "s3cret", password: true).status == 0)
        #expect(try fixture.unlock().status == 0)
    }

    deinit { fixture.stop() }

    /// The UI in a private tmux server, on its main screen.
    private func openUI() throws -> TmuxSession {
        let ui = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", fob],
            environment: fixture.environment)
        try ui.waitFor("Items ")
        return ui
    }

    /// Presses `key` until `text` shows: keys in the UI's first second after
    /// it opened on a vault the agent holds are dropped.
    private func press(_ key: String, until text: String, in ui: TmuxSession) throws {
        var shown = false
        for _ in 0..<10 where !shown {
            try ui.press(key)
            shown = (try? ui.waitFor(text, timeout: 2)) != nil
        }
        #expect(shown, "\(text) after \(key)")
    }

    @Test func theLogViewShowsAReadWithItsProgramAndParents() throws {
        // A rule that lets it read without asking, set with the master password (recorded, not asked).
        #expect(try fixture.run(["access", "set", "svc", "acct", "any"], password: true).status == 0)
        let read = try fixture.run(["get", "svc", "acct"])
        #expect(read.status == 0)
        let ui = try openUI()
        try press("F4", until: "Access log", in: ui)
        let screen = try ui.waitForAll("svc/acct", "allowed-rule", "entries; the log verifies")
        #expect(!screen.contains("s3cret"))
        try ui.type("allowed")
        try ui.waitFor("Find allowed")
        try ui.press("Enter")
        let details = try ui.waitForAll("run by ", "detail ")
        #expect(details.contains("program "))
        #expect(!details.contains("s3cret"))
        try ui.press("F4")
        try ui.waitForAbsence(of: "Access log")
        try ui.waitFor("Items ")
    }

    @Test func theAccessRowChangesTheRuleThroughTheAgent() throws {
        let ui = try openUI()
        try press("C-e", until: "Editing svc / acct", in: ui)
        for _ in 0..<15 { try ui.press("Tab") }
        try ui.waitFor("< default (ask) >")
        try ui.press("Right")
        try ui.waitFor("< any >")
        try ui.press("C-s")
        try ui.waitFor("Saved")
        let shown = try fixture.run(["access", "show", "svc", "acct"])
        #expect(shown.status == 0)
        #expect(shown.stdoutText.contains("\nsvc      acct     any\n"), "\(shown.stdoutText)")
    }
}

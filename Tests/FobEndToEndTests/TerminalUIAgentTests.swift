import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The terminal UI over a vault the agent holds unlocked, driven through the
/// built `fob` in tmux at 80×24.
@Suite(.serialized) struct TerminalUIAgentTests {
    /// A master password typed blind while `fob` starts, before its first
    /// frame, is dropped: it becomes neither commands (`c` copies, Enter
    /// opens the editor) nor text, and the screen says the vault was
    /// unlocked already.
    @Test func aPasswordTypedBeforeTheFirstFrameIsDropped() throws {
        let agent = try AgentFixture()
        #expect(try agent.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        #expect(try agent.unlock().status == 0)
        // The shell waits before starting fob: what is typed meanwhile sits in
        // the terminal's input queue as a password typed blind would.
        let command = [FobProcess.binaryURL.path, "--clipboard", "none"]
        let tmux = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "sleep 2; \"$@\"; sleep 60", "sh"] + command,
            environment: agent.environment)
        try tmux.type("correct horse")
        try tmux.press("Enter")
        try tmux.waitFor("already unlocked")
        // Typed keys would be taken right after the first frame: look again once they would have been.
        usleep(700_000)
        let screen = try tmux.capture()
        #expect(screen.contains("already unlocked"), "\(screen)")
        #expect(screen.contains("Items 1/1"))
        #expect(!screen.contains("Editing"), "\(screen)")
        #expect(!screen.contains("Cop"), "\(screen)")
        // Answering keys once the first second (AppModel.startupKeyWindow) is over, as the status line says.
        // (The line may wrap, and may then give way to another notice.)
        try tmux.waitUntil("keys taken again") {
            !$0.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains("keys ignored for 1 s")
        }
        try tmux.press("C-o")
        try tmux.waitFor("New item")
    }

    /// Another process renames the item the editor has open (`fob mv`
    /// through the agent) while the UI runs on the agent: the UI hears the
    /// change on the agent's change feed, and the highlight and the editor
    /// follow the item to its new name; the status line says it was
    /// renamed, not deleted.
    @Test(arguments: TerminalSize.both) func aRenameThroughTheAgentIsFollowed(size: TerminalSize) throws {
        let agent = try AgentFixture()
        defer { agent.stop() }
        for (service, account, secret) in [("aaa", "x", "1"), ("mail", "ana", "hunter2"), ("zzz", "y", "2")] {
            #expect(try agent.run(["add", service, account], input: secret + "\n", password: true).status == 0)
        }
        #expect(try agent.unlock().status == 0)
        let command = [FobProcess.binaryURL.path, "--clipboard", "none"]
        let tmux = try TmuxSession(
            width: size.width, height: size.height, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh"] + command,
            environment: agent.environment)
        // Opened through the agent, which holds the vault unlocked (no password asked), once the
        // first second's keys are taken again (the status line's first note has given way).
        try tmux.waitUntil("the list, keys taken") { screen in
            let words = screen.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            return screen.contains("Items ") && screen.contains("zzz") && !words.contains("keys ignored for 1 s")
        }
        #expect(try !tmux.capture().contains("Master password"))
        try tmux.type("mail")
        try tmux.waitUntil("the filtered list") { $0.contains("mail ana") && !$0.contains("aaa  x") }
        try tmux.press("C-e")
        try tmux.waitFor("Editing mail / ana")
        #expect(try agent.run(["mv", "mail", "ana", "zzzz"]).status == 0)
        let screen = try tmux.waitFor("Renamed elsewhere: mail / ana is now zzzz / ana")
        #expect(!screen.contains("Deleted elsewhere"), "\(screen)")
        try tmux.waitFor("Editing zzzz / ana")
        // The highlight is on the renamed item.
        try tmux.waitFor("▸ zzzz")
        // The UI wrote nothing: the item keeps its secret under its new name only.
        #expect(try agent.run(["get", "zzzz", "ana"]).stdoutText == "hunter2\n")
        #expect(try agent.run(["get", "mail", "ana"]).status == 44)
    }
}

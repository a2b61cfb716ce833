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
}

import FobClipboard
import FobStore
import FobTestSupport
import Foundation
import Testing

/// The real mechanisms: xclip and xsel under a private Xvfb, and tmux in a
/// private server. Time is a test clock; only the helpers really run.
@Suite struct RealClipboardTests {
    /// Copy, check it is there, let the timer clear it, check it is gone;
    /// then copy again, let the user copy something else, and check that
    /// survives the clear.
    private func exercise(_ board: any Clipboard, read: () throws -> String?, userCopies: (String) throws -> Void)
        throws
    {
        let clock = TestClock()
        let runner = SerialQueueRunner()
        let controller = ClipboardController(clipboard: board, clearAfter: 45, clock: clock, runner: runner)
        controller.copy(.text("hunter2-ßecret"))
        #expect(runner.drain(timeout: 10))
        // xsel (and xclip) fork a child that takes the selection after the helper returns.
        #expect(try eventually { try read() == "hunter2-ßecret" })
        #expect(controller.takeEvents() == [.copied(clearAfter: 45)])
        #expect(board.holds(.text("hunter2-ßecret")) == true)
        #expect(board.holds(.text("hunter2")) == false)
        clock.advance(by: 45)
        controller.tick()
        controller.shutdown(timeout: 10)
        #expect(try read() == nil)
        #expect(controller.takeEvents() == [.cleared(.cleared)])

        controller.copy(.text("second secret"))
        #expect(runner.drain(timeout: 10))
        #expect(try eventually { try read() == "second secret" })
        try userCopies("unrelated text")
        #expect(try eventually { try read() == "unrelated text" })
        clock.advance(by: 45)
        controller.tick()
        controller.shutdown(timeout: 10)
        #expect(try read() == "unrelated text")
        #expect(controller.takeEvents().last == .cleared(.leftAlone))
    }

    @Test func xclipUnderXvfb() throws {
        let x = try XvfbServer()
        try exercise(XclipClipboard(environment: x.environment), read: x.clipboardText, userCopies: x.userCopies)
    }

    @Test func xselUnderXvfb() throws {
        let x = try XvfbServer()
        try exercise(XselClipboard(environment: x.environment), read: x.clipboardText, userCopies: x.userCopies)
    }

    @Test func tmuxNamedBuffer() throws {
        let tmux = try TmuxServer()
        let board = TmuxClipboard(
            environment: ["PATH": "/usr/bin:/bin"], bufferName: "fob", serverArguments: ["-L", tmux.name])
        func read() throws -> String? {
            // Any buffer holding a secret counts, not only ours.
            let buffers = try tmux.buffers()
            return buffers["fob"] ?? buffers.values.first { $0.contains("secret") }
        }
        try exercise(board, read: read) { text in
            try tmux.run(["set-buffer", "-b", "fob", text])
        }
        // The user's copy into another buffer is never touched either.
        try tmux.run(["set-buffer", "-b", "mine", "keep me"])
        let controller = ClipboardController(
            clipboard: board, clearAfter: 1, clock: TestClock(), runner: InlineRunner())
        controller.copy(.text("third secret"))
        controller.clearNow()
        let buffers = try tmux.buffers()
        #expect(buffers["mine"] == "keep me")
        #expect(!buffers.values.contains { $0.contains("secret") })
    }

    @Test func tmuxFoundThroughTheTMUXVariable() throws {
        let tmux = try TmuxServer()
        let env = ["PATH": "/usr/bin:/bin", "TMUX": tmux.tmuxVariable]
        #expect(ClipboardFactory.autoMode(environment: env, hasTerminal: false) == .tmux)
        let board = ClipboardFactory.make(mode: .auto, environment: env, terminalDescriptor: nil)
        #expect(board.name == "tmux")
        try board.copy(.text("via TMUX"))
        #expect(try tmux.buffers()["fob"] == "via TMUX")
        try board.clear()
        #expect(try tmux.buffers()["fob"] == nil)
    }
}

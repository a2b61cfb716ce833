import FobClipboard
import FobStore
import FobTestSupport
import Foundation
import Testing

@Suite struct ClipboardControllerTests {
    private func make(clearAfter: TimeInterval = 45, canReadBack: Bool = true) -> (
        ClipboardController, FakeClipboard, TestClock
    ) {
        let clock = TestClock()
        let board = FakeClipboard(canReadBack: canReadBack)
        return (
            ClipboardController(clipboard: board, clearAfter: clearAfter, clock: clock, runner: InlineRunner()), board,
            clock
        )
    }

    @Test func clearsAfterTheDelayIfStillOurs() {
        let (c, board, clock) = make()
        c.copy(.text("pw"))
        #expect(board.contents == "pw")
        #expect(c.takeEvents() == [.copied(clearAfter: 45)])
        #expect(c.clearDeadline == clock.now.addingTimeInterval(45))
        clock.advance(by: 44.9)
        c.tick()
        #expect(board.contents == "pw")
        clock.advance(by: 0.1)
        c.tick()
        #expect(board.contents == nil)
        #expect(c.takeEvents() == [.cleared(.cleared)])
        #expect(!c.holdsOurValue)
    }

    @Test func leavesTextCopiedSinceAlone() {
        let (c, board, clock) = make()
        c.copy(.text("pw"))
        board.userCopies("unrelated")
        clock.advance(by: 45)
        c.tick()
        #expect(board.contents == "unrelated")
        #expect(c.takeEvents().last == .cleared(.leftAlone))
        #expect(!board.calls.contains("clear"))
    }

    @Test func secondCopyRestartsTheTimer() {
        let (c, board, clock) = make()
        c.copy(.text("one"))
        clock.advance(by: 30)
        c.copy(.text("two"))
        clock.advance(by: 30)
        c.tick()
        #expect(board.contents == "two")
        clock.advance(by: 15)
        c.tick()
        #expect(board.contents == nil)
    }

    @Test func zeroMeansNeverButClearNowStillClears() {
        let (c, board, clock) = make(clearAfter: 0)
        c.copy(.text("pw"))
        #expect(c.clearDeadline == nil)
        clock.advance(by: 100_000)
        c.tick()
        #expect(board.contents == "pw")
        c.clearNow()
        #expect(board.contents == nil)
    }

    @Test func withoutReadBackItClearsBlindly() {
        let (c, board, clock) = make(canReadBack: false)
        c.copy(.text("pw"))
        board.userCopies("other")
        clock.advance(by: 45)
        c.tick()
        #expect(board.contents == nil)
        #expect(c.takeEvents().last == .cleared(.clearedUnchecked))
    }

    @Test func copyFailureIsReportedAndNothingIsPending() {
        let (c, board, _) = make()
        board.fail(with: .helperFailed("xclip exited with status 1"))
        c.copy(.text("pw"))
        #expect(c.takeEvents() == [.copyFailed(.helperFailed("xclip exited with status 1"))])
        #expect(!c.holdsOurValue)
        #expect(c.clearDeadline == nil)
    }

    @Test func clearFailureIsReported() {
        let (c, board, clock) = make()
        c.copy(.text("pw"))
        board.fail(with: .helperFailed("boom"))
        clock.advance(by: 45)
        c.tick()
        #expect(c.takeEvents().last == .cleared(.failed(.helperFailed("boom"))))
    }

    @Test func clearNowWithNothingCopiedTouchesNothing() {
        let (c, board, _) = make()
        board.userCopies("mine")
        c.clearNow()
        c.shutdown()
        #expect(board.contents == "mine")
        #expect(board.calls.isEmpty)
    }

    @Test func serialQueueRunnerDoesNotBlockTheCaller() {
        let clock = TestClock()
        let board = FakeClipboard()
        let c = ClipboardController(clipboard: board, clearAfter: 45, clock: clock, runner: SerialQueueRunner())
        c.copy(.text("pw"))
        c.shutdown(timeout: 10)
        #expect(board.contents == nil)
        #expect(board.calls == ["copy", "holds", "clear"])
    }
}

@Suite struct ClipboardSelectionTests {
    @Test func autoPicksInOrder() {
        let path = ["PATH": "/usr/bin:/bin"]
        let hasXclip = FileManager.default.isExecutableFile(atPath: "/usr/bin/xclip")
        #expect(
            ClipboardFactory.autoMode(
                environment: path.merging(["DISPLAY": ":0", "TMUX": "x"]) { a, _ in a }, hasTerminal: true)
                == (hasXclip ? .xclip : .xsel))
        #expect(
            ClipboardFactory.autoMode(
                environment: path.merging(["TMUX": "/tmp/s,1,0"]) { a, _ in a }, hasTerminal: true) == .tmux)
        #expect(ClipboardFactory.autoMode(environment: path, hasTerminal: true) == .osc52)
        #expect(ClipboardFactory.autoMode(environment: path, hasTerminal: false) == .none)
        // WAYLAND_DISPLAY without wl-copy installed falls through.
        #expect(
            ClipboardFactory.autoMode(
                environment: ["PATH": "/nonexistent", "WAYLAND_DISPLAY": "wayland-0"], hasTerminal: true) == .osc52)
    }

    @Test func waylandIsPreferredWhenWlCopyIsInstalled() throws {
        let dir = TemporaryDirectory()
        let tool = dir.file("wl-copy")
        try "#!/bin/sh\nexit 0\n".write(to: tool, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.path)
        let env = ["PATH": dir.url.path + ":/usr/bin", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"]
        #expect(ClipboardFactory.autoMode(environment: env, hasTerminal: true) == .wlCopy)
    }

    @Test func makeBuildsEachMode() {
        let env = ["PATH": "/usr/bin"]
        #expect(ClipboardFactory.make(mode: .xclip, environment: env).name == "xclip")
        #expect(ClipboardFactory.make(mode: .xsel, environment: env).name == "xsel")
        #expect(ClipboardFactory.make(mode: .wlCopy, environment: env).name == "wl-copy")
        #expect(ClipboardFactory.make(mode: .tmux, environment: env).name == "tmux")
        #expect(ClipboardFactory.make(mode: .osc52, environment: env, terminalDescriptor: 1).name == "osc52")
        #expect(ClipboardFactory.make(mode: .none, environment: env).name == "none")
        #expect(ClipboardMode(rawValue: "wl-copy") == .wlCopy)
    }

    @Test func osc52WritesTheEscapeAndAnEmptyOneToClear() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let board = OSC52Clipboard(descriptor: fds[1])
        try board.copy(.text("hunter2"))
        try board.clear()
        #expect(board.holds(.text("hunter2")) == nil)
        #expect(!board.canReadBack)
        close(fds[1])
        let data = FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile()
        #expect(String(decoding: data, as: UTF8.self) == "\u{1B}]52;c;aHVudGVyMg==\u{07}\u{1B}]52;c;\u{07}")
    }

    @Test func helperSeesTheSecretOnStdinOnly() throws {
        let dir = TemporaryDirectory()
        let tool = dir.file("xclip")
        let log = dir.file("log")
        // Records argv, environment and stdin of the helper.
        try """
        #!/bin/sh
        printf '%s\\n' "$@" > "\(log.path).argv"
        env > "\(log.path).env"
        cat > "\(log.path).stdin"
        """.write(to: tool, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.path)
        let board = XclipClipboard(environment: ["PATH": dir.url.path + ":/usr/bin:/bin"])
        try board.copy(.text("top-secret-value"))
        #expect(try String(contentsOfFile: log.path + ".stdin", encoding: .utf8) == "top-secret-value")
        #expect(try !String(contentsOfFile: log.path + ".argv", encoding: .utf8).contains("top-secret"))
        #expect(try !String(contentsOfFile: log.path + ".env", encoding: .utf8).contains("top-secret"))
    }

    /// A helper that never reads its stdin cannot block Fob: a secret larger
    /// than a pipe holds (64 KiB) is given up at the deadline, the helper
    /// killed, and the copy reported as failed.
    @Test func aHelperThatNeverReadsItsInputIsKilledAtTheDeadline() throws {
        let dir = TemporaryDirectory()
        let tool = dir.file("xclip")
        try "#!/bin/sh\nexec sleep 60\n".write(to: tool, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.path)
        let board = XclipClipboard(environment: ["PATH": dir.url.path + ":/usr/bin:/bin"])
        let start = Date()
        #expect(throws: ClipboardError.helperFailed("xclip did not finish within 5 s")) {
            try board.copy(SecretBytes([UInt8](repeating: 0x61, count: 256 * 1024)))
        }
        #expect(Date().timeIntervalSince(start) < 15)
    }

    /// A failed tmux copy says why, in tmux's own words.
    @Test func aFailedTmuxCopyQuotesTheToolsError() throws {
        let dir = TemporaryDirectory()
        let tool = dir.file("tmux")
        try "#!/bin/sh\ncat >/dev/null\necho 'no server running on /tmp/tmux-1000/default' >&2\nexit 1\n".write(
            to: tool, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool.path)
        let board = TmuxClipboard(environment: ["PATH": dir.url.path + ":/usr/bin:/bin"])
        #expect(
            throws: ClipboardError.helperFailed(
                "tmux load-buffer -w -b fob - exited with status 1: no server running on /tmp/tmux-1000/default")
        ) { try board.copy(.text("x")) }
    }

    @Test func missingHelperIsAClearError() {
        let board = XselClipboard(environment: ["PATH": "/nonexistent"])
        #expect(throws: ClipboardError.helperMissing("xsel is not installed")) { try board.copy(.text("x")) }
        #expect(board.holds(.text("x")) == false)
    }
}

/// A runner that keeps the work and never runs it.
private final class HoldingRunner: BackgroundRunner, @unchecked Sendable {
    var held = 0
    func run(_ work: @escaping @Sendable () -> Void) { held += 1 }
    func drain(timeout: TimeInterval) -> Bool { false }
}

@Suite struct OSC52ControllerTests {
    @Test func osc52RunsOnTheCallersThreadAndOtherMechanismsDoNot() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let runner = HoldingRunner()
        let clock = TestClock()
        let c = ClipboardController(
            clipboard: OSC52Clipboard(descriptor: fds[1]), clearAfter: 45, clock: clock, runner: runner)
        c.copy(.text("pw"))
        clock.advance(by: 45)
        c.tick()
        close(fds[1])
        let written = FileHandle(fileDescriptor: fds[0]).readDataToEndOfFile()
        #expect(String(decoding: written, as: UTF8.self) == "\u{1B}]52;c;cHc=\u{07}\u{1B}]52;c;\u{07}")
        #expect(runner.held == 0)
        #expect(c.takeEvents() == [.copied(clearAfter: 45), .cleared(.clearedUnchecked)])

        let other = ClipboardController(clipboard: FakeClipboard(), clock: clock, runner: runner)
        other.copy(.text("pw"))
        #expect(runner.held == 1)
    }
}

@Suite struct WlCopyTests {
    /// A fake wl-copy whose help does or does not list `--sensitive`; it
    /// records its arguments and standard input.
    private func fakeWlCopy(sensitive: Bool) throws -> (TemporaryDirectory, [String: String], String) {
        let dir = TemporaryDirectory()
        let log = dir.file("log").path
        let help = sensitive ? "  -s, --sensitive  mark as sensitive" : "  -o, --paste-once"
        try """
        #!/bin/sh
        if [ "$1" = "--help" ]; then echo "Usage: wl-copy"; echo "\(help)"; exit 0; fi
        printf '%s\\n' "$@" > "\(log).argv"
        cat > "\(log).stdin"
        """.write(to: dir.file("wl-copy"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.file("wl-copy").path)
        return (dir, ["PATH": dir.url.path + ":/usr/bin:/bin"], log)
    }

    @Test func sensitiveIsPassedWhenSupported() throws {
        let (dir, env, log) = try fakeWlCopy(sensitive: true)
        let board = WlCopyClipboard(environment: env)
        #expect(board.marksAsPassword)
        try board.copy(.text("pw"))
        #expect(try String(contentsOfFile: log + ".argv", encoding: .utf8) == "--sensitive\n")
        #expect(try String(contentsOfFile: log + ".stdin", encoding: .utf8) == "pw")
        _ = dir
    }

    @Test func plainCopyWithAnOlderWlCopy() throws {
        let (dir, env, log) = try fakeWlCopy(sensitive: false)
        let board = WlCopyClipboard(environment: env)
        #expect(!board.marksAsPassword)
        try board.copy(.text("pw"))
        // printf with no arguments writes one empty line: no argument was given.
        #expect(try String(contentsOfFile: log + ".argv", encoding: .utf8) == "\n")
        try board.clear()
        #expect(try String(contentsOfFile: log + ".argv", encoding: .utf8) == "--clear\n")
        _ = dir
    }
}

@Suite struct HelperDescriptorTests {
    @Test func helpersInheritOnlyTheirStandardStreams() throws {
        let dir = TemporaryDirectory()
        let log = dir.file("fds").path
        try """
        #!/bin/sh
        ls /proc/$$/fd > "\(log)"
        cat > /dev/null
        """.write(to: dir.file("xsel"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir.file("xsel").path)
        // A descriptor of this process without close-on-exec, at a number nothing else uses.
        let marker: Int32 = 777
        let opened = Glibc.open("/dev/null", O_RDONLY)
        #expect(dup2(opened, marker) == marker)
        close(opened)
        defer { close(marker) }
        try XselClipboard(environment: ["PATH": dir.url.path + ":/usr/bin:/bin"]).copy(.text("x"))
        let fds = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").compactMap { Int32($0) }
        #expect(fds.contains(0) && fds.contains(1) && fds.contains(2))
        #expect(!fds.contains(marker))
    }
}

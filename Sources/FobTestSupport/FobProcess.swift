import FobSystem
import Foundation
@preconcurrency import Glibc

/// Runs the built `fob` binary as a child process, for end-to-end tests.
///
/// The binary is `fob` next to the test bundle (`.build/debug/fob`, built
/// by `swift build --build-tests`), or `$FOB_BINARY` when set. The child
/// runs in a new session without a controlling terminal and with only the
/// environment given (``baseEnvironment`` plus `environment`), so nothing of
/// the test runner's environment leaks in.
///
/// ```swift
/// let result = try FobProcess.run(["--vault", path, "get", "mail", "ana"],
///                                 environment: ["FOB_PASSWORD_FILE": passwordPath])
/// #expect(result.status == 0)
/// #expect(result.stdoutText == "secret\n")
/// ```
public enum FobProcess {
    /// The `fob` executable under test.
    public static var binaryURL: URL {
        if let override = ProcessInfo.processInfo.environment["FOB_BINARY"], !override.isEmpty {
            return URL(fileURLWithPath: override)
        }
        var candidates: [URL] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
            // The runner may sit inside `X.xctest/` or next to it.
            for _ in 0..<3 {
                candidates.append(directory.appendingPathComponent("fob"))
                directory.deleteLastPathComponent()
            }
        }
        candidates.append(packageRoot.appendingPathComponent(".build/debug/fob"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates.last!
    }

    /// The package's root directory (where `Package.swift` is).
    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    /// The environment every child starts from: `PATH`, `LANG=C.UTF-8`, a
    /// `HOME` that does not exist (so no real vault is ever touched), and
    /// `FOB_AGENT=0` (so no test leaves an agent behind; agent tests set
    /// `FOB_AGENT=1` and a private `XDG_RUNTIME_DIR`), and a `FOB_PINENTRY`
    /// that does not exist: the machine's own pinentry, without a terminal or
    /// a display, gives up at once, and a test whose prompt it served would
    /// race it (tests that need pinentry name their own).
    public static let baseEnvironment: [String: String] = [
        "FOB_AGENT": "0",
        "FOB_PINENTRY": "/nonexistent/pinentry",
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/nonexistent/fob-test-home",
    ]

    /// Starts `fob` and returns at once (for races and `kill -9`).
    /// - Parameters:
    ///   - arguments: the arguments after `fob`.
    ///   - environment: added to ``baseEnvironment`` (a value replaces the base one).
    ///   - stdin: bytes for standard input, which is then closed.
    ///   - holdStdinOpen: keep standard input open until ``ChildProcess/closeStdin()``.
    /// - Throws: ``ChildProcessError`` when the binary is missing or cannot start.
    public static func start(
        _ arguments: [String], environment: [String: String] = [:],
        stdin: [UInt8] = [], holdStdinOpen: Bool = false
    ) throws -> ChildProcess {
        try ChildProcess(
            executable: try executablePath(), arguments: arguments,
            environment: baseEnvironment.merging(environment) { $1 }, stdin: stdin,
            holdStdinOpen: holdStdinOpen)
    }

    /// Runs `fob` to the end.
    /// - Parameters:
    ///   - arguments: the arguments after `fob`.
    ///   - environment: added to ``baseEnvironment``.
    ///   - stdin: bytes for standard input (UTF-8 of a string: `Array("x".utf8)`).
    ///   - timeout: seconds before the child is killed and the result marked timed out.
    /// - Throws: ``ChildProcessError`` when the binary is missing or cannot start.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:],
        stdin: [UInt8] = [], timeout: Double = 60
    ) throws -> ProcessResult {
        try start(arguments, environment: environment, stdin: stdin).wait(timeout: timeout)
    }

    /// Runs `fob` with standard input from `stdin`'s UTF-8 bytes.
    public static func run(
        _ arguments: [String], environment: [String: String] = [:],
        input stdin: String, timeout: Double = 60
    ) throws -> ProcessResult {
        try run(arguments, environment: environment, stdin: Array(stdin.utf8), timeout: timeout)
    }

    /// Starts `fob` on a new pseudo-terminal that is its controlling
    /// terminal and its standard input, output and error.
    /// - Parameters:
    ///   - arguments: the arguments after `fob`.
    ///   - environment: added to ``baseEnvironment`` (with `TERM=xterm-256color`).
    ///   - columns: the terminal's width, as a window of that many columns
    ///     and 24 rows would set it; `nil` leaves it unset (0 by 0).
    public static func startInTerminal(
        _ arguments: [String], environment: [String: String] = [:], columns: Int? = nil
    ) throws -> TerminalSession {
        try TerminalSession(
            executable: try executablePath(), arguments: arguments,
            environment: baseEnvironment.merging(["TERM": "xterm-256color"]) { $1 }.merging(environment) { $1 },
            columns: columns)
    }

    private static func executablePath() throws -> String {
        let path = binaryURL.path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ChildProcessError(description: "no fob binary at \(path); run `swift build --build-tests` first")
        }
        return path
    }
}

/// A program running on a pseudo-terminal (its controlling terminal), for
/// testing masked prompts: send keys, read what the terminal shows.
public final class TerminalSession: @unchecked Sendable {
    /// The child's process id.
    public let pid: pid_t
    private let master: Int32
    /// `TIOCSPTLCK` (`_IOW('T', 0x31, int)`) and `TIOCGPTN` (`_IOR('T', 0x30, unsigned int)`).
    static let setLock: UInt = 0x4004_5431
    static let getNumber: UInt = 0x8004_5430
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private let exited = DispatchSemaphore(value: 0)
    private let readerDone = DispatchSemaphore(value: 0)
    private var exitStatus: Int32?

    /// Starts `executable` in a new session whose controlling terminal is a
    /// new pseudo-terminal.
    /// - Parameter columns: the terminal's width (`TIOCSWINSZ`, 24 rows), set
    ///   before the program starts; `nil` leaves the size unset (0 by 0).
    /// - Throws: ``ChildProcessError`` when the terminal or process cannot be made.
    public init(executable: String, arguments: [String], environment: [String: String], columns: Int? = nil) throws {
        // posix_openpt, unlockpt and ptsname are GNU extensions Swift does
        // not see; these are the Linux calls they make.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, TerminalSession.setLock, &unlock) == 0,
            ioctl(master, TerminalSession.getNumber, &number) == 0
        else {
            throw ChildProcessError(description: "cannot make a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        let slavePath = "/dev/pts/\(number)"
        self.master = master
        if let columns {
            var size = winsize(ws_row: 24, ws_col: UInt16(clamping: columns), ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        }
        do {
            ChildProcess.spawnLock.lock()
            defer { ChildProcess.spawnLock.unlock() }
            // After setsid, opening the terminal without O_NOCTTY makes it
            // the controlling terminal; stdout and stderr are copies of it.
            pid = try ChildProcess.spawn(
                executable: executable, arguments: arguments, environment: environment,
                standardInput: .file(slavePath, flags: O_RDWR),
                standardOutput: .descriptor(0), standardError: .descriptor(0), newSession: true)
        } catch {
            close(master)
            throw error
        }
        let reader = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(master, &chunk, chunk.count)
                if n > 0 {
                    lock.lock()
                    buffer += chunk[0..<n]
                    lock.unlock()
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    break // EIO once the child has closed the terminal
                }
            }
            readerDone.signal()
        }
        reader.start()
        let waiter = Thread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            lock.lock()
            exitStatus = ChildProcessSpawner.exitCode(waitStatus: status)
            lock.unlock()
            exited.signal()
        }
        waiter.start()
    }

    deinit {
        if (lock.withLock { exitStatus }) == nil { kill(pid, SIGKILL) }
        close(master)
    }

    /// The terminal's local mode flags (`c_lflag`: `ECHO`, `ICANON`, …) as
    /// the program last set them.
    public var localFlags: UInt32 {
        var attributes = termios()
        _ = tcgetattr(master, &attributes)
        return attributes.c_lflag
    }

    /// Sets the terminal's local mode flags, as a shell does when its job
    /// stops (it puts back its own cooked modes).
    public func setLocalFlags(_ flags: UInt32) {
        var attributes = termios()
        _ = tcgetattr(master, &attributes)
        attributes.c_lflag = flags
        _ = tcsetattr(master, TCSANOW, &attributes)
    }

    /// Everything the program has written to the terminal so far.
    public var output: [UInt8] { lock.withLock { buffer } }

    /// ``output`` as UTF-8 text.
    public var outputText: String { String(decoding: output, as: UTF8.self) }

    /// Types `bytes` (keys: `[0x7F]` is Backspace, `[0x15]` Ctrl-U, `[0x03]` Ctrl-C, `[0x0D]` Enter).
    public func send(_ bytes: [UInt8]) {
        FileDescriptorIO.writeAll(bytes, to: master)
    }

    /// Types the UTF-8 bytes of `text`.
    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Polls until the terminal output contains `text`.
    /// - Parameter timeout: seconds.
    /// - Returns: whether it appeared in time.
    @discardableResult
    public func waitFor(_ text: String, timeout: Double = 20) -> Bool {
        let needle = Array(text.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if TerminalSession.contains(output, needle) { return true }
            usleep(10_000)
        }
        return TerminalSession.contains(output, needle)
    }

    /// Waits for the program to end; kills it with SIGKILL after `timeout` seconds.
    /// - Returns: its exit status (128 + signal when a signal ended it), or `nil` on timeout.
    public func wait(timeout: Double = 20) -> Int32? {
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            kill(pid, SIGKILL)
            exited.wait()
            exited.signal()
            return nil
        }
        exited.signal()
        // The reader ends when the terminal closes: then all output is in.
        if readerDone.wait(timeout: .now() + 5) == .success { readerDone.signal() }
        return lock.withLock { exitStatus }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}

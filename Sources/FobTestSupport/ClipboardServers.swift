import FobSystem
import Foundation
@preconcurrency import Glibc

/// Why a test server could not start or a command failed.
public struct TestServerError: Error, CustomStringConvertible {
    /// What failed.
    public var description: String
    /// - Parameter description: what failed.
    public init(_ description: String) { self.description = description }
}

/// Runs a program to the end and returns its exit status and standard output,
/// through the product's ``ChildProcessRunner`` (signals at their defaults
/// and unblocked, so that helpers which stay running, such as xclip, xsel
/// and the tmux server, can be ended by a signal).
/// - Parameters:
///   - executable: an absolute path.
///   - input: bytes for standard input.
///   - environment: the complete environment (default: this process's).
///   - captureOutput: read standard output; pass `false` for programs that
///     leave a child running with it (xclip, xsel), or the read never ends.
///   - newSession: start it in a new session (no controlling terminal).
/// - Throws: ``ChildProcessError`` when it cannot start or runs past 5 minutes.
public func runTool(
    _ executable: String, _ arguments: [String], input: [UInt8] = [],
    environment: [String: String]? = nil, captureOutput: Bool = true,
    newSession: Bool = false
) throws -> (status: Int32, output: String) {
    do {
        let result = try ChildProcessRunner.run(
            executable, arguments: arguments, environment: environment ?? ProcessInfo.processInfo.environment,
            input: input, captureOutput: captureOutput, maxOutput: 256 << 20, timeout: 300, newSession: newSession)
        return (result.status, String(decoding: result.output, as: UTF8.self))
    } catch {
        throw ChildProcessError(description: "\(executable): \(error)")
    }
}

/// Polls `condition` every 50 ms until it holds or `timeout` seconds pass.
/// - Returns: whether it held.
public func eventually(timeout: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        usleep(50_000)
    }
    return try condition()
}

/// A private X server (`Xvfb :N -nolisten tcp`) on a free display number,
/// killed by its pid when the value goes away.
public final class XvfbServer: @unchecked Sendable {
    /// The display, such as `:437`.
    public let display: String
    /// The server's process id.
    public let pid: pid_t
    private var running = true

    /// Whether Xvfb is installed.
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/Xvfb") }

    /// Starts Xvfb and waits until its socket accepts connections.
    /// - Throws: ``TestServerError`` when Xvfb or xclip is missing (`scripts/setup --test`
    ///   installs them) or the server does not come up within 10 s.
    public init() throws {
        guard XvfbServer.isAvailable, FileManager.default.isExecutableFile(atPath: "/usr/bin/xclip") else {
            throw TestServerError("Xvfb and xclip are needed: run scripts/setup --test")
        }
        var chosen: Int?
        for _ in 0..<50 {
            let n = Int.random(in: 300...2000)
            if !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)")
                && !FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock")
            {
                chosen = n
                break
            }
        }
        guard let number = chosen else { throw TestServerError("no free X display number") }
        display = ":\(number)"
        pid = try ChildProcess.spawn(
            executable: "/usr/bin/Xvfb", arguments: [display, "-nolisten", "tcp", "-screen", "0", "320x200x24"],
            environment: ["PATH": "/usr/bin:/bin"],
            standardInput: .null, standardOutput: .null, standardError: .null, newSession: true)
        let socket = "/tmp/.X11-unix/X\(number)"
        let up = eventually { FileManager.default.fileExists(atPath: socket) }
        guard up, kill(pid, 0) == 0 else {
            stop()
            throw TestServerError("Xvfb \(display) did not start")
        }
    }

    /// Ends the server (SIGTERM to its pid, then waits).
    public func stop() {
        guard running else { return }
        running = false
        kill(pid, SIGTERM)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    deinit { stop() }

    /// An environment for clipboard helpers on this display.
    public var environment: [String: String] {
        ["PATH": "/usr/local/bin:/usr/bin:/bin", "DISPLAY": display, "HOME": NSTemporaryDirectory()]
    }

    /// What `xclip -selection clipboard -out` prints, or `nil` when the clipboard is empty or unowned.
    ///
    /// xclip waits for the selection's owner without a deadline of its own;
    /// an owner that exits in the middle of the transfer (xsel's or xclip's
    /// background child, replaced by the next copy) once left it waiting
    /// for the runner's 300 s. Each read gets 15 s and is tried three times.
    public func clipboardText() throws -> String? {
        var lastError: (any Error)?
        for _ in 0..<3 {
            do {
                let result = try ChildProcessRunner.run(
                    "/usr/bin/xclip", arguments: ["-selection", "clipboard", "-out"], environment: environment,
                    input: [], captureOutput: true, maxOutput: 1 << 20, timeout: 15, newSession: false)
                let text = String(decoding: result.output, as: UTF8.self)
                return result.status == 0 && !text.isEmpty ? text : nil
            } catch {
                lastError = error
            }
        }
        throw ChildProcessError(description: "/usr/bin/xclip: \(lastError.map { "\($0)" } ?? "no answer")")
    }

    /// Copies `text` as another program would (`xclip -selection clipboard -in`).
    public func userCopies(_ text: String) throws {
        _ = try runTool(
            "/usr/bin/xclip", ["-selection", "clipboard", "-in"], input: Array(text.utf8), environment: environment,
            captureOutput: false)
    }
}

/// A private tmux server (`tmux -L NAME -f /dev/null`) with one detached
/// session, killed (`kill-server`) when the value goes away.
public final class TmuxServer: @unchecked Sendable {
    /// The `-L` socket name.
    public let name: String
    /// The socket's path, for a `TMUX` variable.
    public let socketPath: String

    /// Starts the server with a detached session running `sleep`.
    public init() throws {
        name = "fobvm-\(getpid())-\(UUID().uuidString.prefix(8))"
        let started = try runTool(
            "/usr/bin/tmux", ["-L", name, "-f", "/dev/null", "new-session", "-d", "-s", "s", "sleep 600"])
        guard started.status == 0 else { throw TestServerError("tmux did not start") }
        socketPath = try runTool("/usr/bin/tmux", ["-L", name, "display-message", "-p", "#{socket_path}"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    deinit { _ = try? runTool("/usr/bin/tmux", ["-L", name, "kill-server"]) }

    /// Runs `tmux -L NAME arguments…`.
    @discardableResult
    public func run(_ arguments: [String], input: [UInt8] = []) throws -> (status: Int32, output: String) {
        try runTool("/usr/bin/tmux", ["-L", name] + arguments, input: input)
    }

    /// Every paste buffer: name and content.
    public func buffers() throws -> [String: String] {
        let names = try run(["list-buffers", "-F", "#{buffer_name}"]).output.split(separator: "\n").map(String.init)
        var out: [String: String] = [:]
        for name in names { out[name] = try run(["show-buffer", "-b", name]).output }
        return out
    }

    /// A `TMUX` value that points tmux clients at this server.
    public var tmuxVariable: String { "\(socketPath),\(getpid()),0" }
}

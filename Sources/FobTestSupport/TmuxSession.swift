import Foundation

/// A private tmux server with one session, for driving the terminal UI in
/// tests: its own socket (`tmux -L NAME -f /dev/null`), a clean environment,
/// literal typing, named keys, pane captures and polling for text. The
/// server is killed when the value goes away.
public final class TmuxSession: @unchecked Sendable {
    /// Why a tmux step failed.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the last screen when it helps.
        public let description: String
    }

    /// The `-L` socket name.
    public let socket: String
    /// The temporary home directory given to the pane (removed with the session).
    public let home: TemporaryDirectory

    /// Starts a detached session of `width` × `height` cells running `command`.
    /// - Parameters:
    ///   - width: columns (default 110).
    ///   - height: rows (default 32).
    ///   - command: what the pane runs, as an argument vector; default a bare
    ///     POSIX shell with prompt `$ `.
    ///   - environment: added to the clean environment (`HOME`, `TERM=xterm-256color`,
    ///     `LANG=C.UTF-8`, `PATH`, `FOB_AGENT=0` so that no agent outlives the
    ///     test, and the server's `TMUX`), overriding it.
    /// - Throws: `Failure` when tmux cannot start.
    public init(
        width: Int = 110, height: Int = 32, command: [String]? = nil,
        environment: [String: String] = [:]
    ) throws {
        socket = "fobtest-\(getpid())-\(UUID().uuidString.prefix(8))"
        home = TemporaryDirectory(prefix: "fob-tmux-home")
        var env: [String: String] = [
            "HOME": home.url.path,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "PS1": "$ ",
            "ENV": "/dev/null",
            "FOB_AGENT": "0",
        ]
        for (k, v) in environment { env[k] = v }
        let argv = env.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + (command ?? ["/bin/sh"])
        // `TMUX` (this server's socket) is the one variable passed through, so
        // programs in the pane can reach the server as they would in real use.
        let line = "exec env -i TMUX=\"$TMUX\" " + Self.shellQuoted(argv)
        try Self.startServer(
            socket: socket,
            arguments: [
                "new-session", "-d", "-s", "s", "-x", String(width),
                "-y", String(height), line,
            ])
        // Keep a program's exit visible and let the test read its status.
        _ = try? run(["set-option", "-g", "remain-on-exit", "on"])
    }

    deinit {
        _ = try? run(["kill-server"])
    }

    /// Starts the server with `posix_spawn`: standard streams on /dev/null
    /// (the daemon would otherwise hold a pipe of ours open forever) and
    /// every signal unblocked and at its default (test threads block them,
    /// and the pane's programs would inherit that mask).
    private static func startServer(socket: String, arguments: [String]) throws {
        let result = try runTool(
            "/usr/bin/tmux", ["-L", socket, "-f", "/dev/null"] + arguments,
            environment: ["PATH": "/usr/bin:/bin"], captureOutput: false, newSession: true)
        guard result.status == 0 else {
            throw Failure(description: "tmux new-session failed (status \(result.status))")
        }
    }

    /// Runs a tmux subcommand on this server.
    /// - Returns: its standard output.
    /// - Throws: `Failure` when tmux exits non-zero.
    @discardableResult
    public func run(_ arguments: [String], input: Data? = nil) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        p.arguments = ["-L", socket, "-f", "/dev/null"] + arguments
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        if let input {
            let inPipe = Pipe()
            p.standardInput = inPipe
            try p.run()
            inPipe.fileHandleForWriting.write(input)
            try inPipe.fileHandleForWriting.close()
        } else {
            p.standardInput = FileHandle.nullDevice
            try p.run()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw Failure(
                description: "tmux \(arguments.first ?? "") failed: \(String(decoding: errData, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// Types `text` literally (`send-keys -l`).
    public func type(_ text: String) throws { try run(["send-keys", "-t", "s", "-l", text]) }

    /// Presses keys by tmux name (`Enter`, `Escape`, `Tab`, `BTab`, `C-c`, `Up`, …).
    public func press(_ keys: String...) throws { try run(["send-keys", "-t", "s"] + keys) }

    /// The visible pane as text, one line per row (`capture-pane -p`).
    public func capture(escapes: Bool = false) throws -> String {
        try run(["capture-pane", "-t", "s", "-p"] + (escapes ? ["-e"] : []))
    }

    /// A tmux format evaluated for the pane (`display-message -p`).
    public func display(_ format: String) throws -> String {
        try run(["display-message", "-t", "s", "-p", format]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls the pane every 50 ms until `condition` holds.
    /// - Parameters:
    ///   - timeout: seconds before giving up.
    ///   - what: a description for the failure message.
    /// - Returns: the capture that satisfied `condition`.
    /// - Throws: `Failure` with the last capture after `timeout`.
    @discardableResult
    public func waitUntil(
        timeout: TimeInterval = 15, _ what: String = "condition",
        _ condition: (String) -> Bool
    ) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var last = ""
        while true {
            last = (try? capture()) ?? last
            if condition(last) { return last }
            if Date() > deadline {
                throw Failure(description: "timed out waiting for \(what); screen:\n\(last)")
            }
            usleep(50_000)
        }
    }

    /// Polls until the pane shows `text`.
    @discardableResult
    public func waitFor(_ text: String, timeout: TimeInterval = 15) throws -> String {
        try waitUntil(timeout: timeout, "\"\(text)\"") { $0.contains(text) }
    }

    /// Polls until the pane shows every one of `texts` at once: the state a
    /// test goes on to check, not only a title drawn before the rest.
    @discardableResult
    public func waitForAll(_ texts: String..., timeout: TimeInterval = 15) throws -> String {
        try waitUntil(timeout: timeout, texts.map { "\"\($0)\"" }.joined(separator: " and ")) { screen in
            texts.allSatisfy { screen.contains($0) }
        }
    }

    /// Polls until the pane no longer shows `text`.
    @discardableResult
    public func waitForAbsence(of text: String, timeout: TimeInterval = 15) throws -> String {
        try waitUntil(timeout: timeout, "\"\(text)\" to go") { !$0.contains(text) }
    }

    /// Resizes the window (the program gets SIGWINCH).
    public func resize(width: Int, height: Int) throws {
        try run(["resize-window", "-t", "s", "-x", String(width), "-y", String(height)])
    }

    /// The process id of the pane's first process (the shell, or the command).
    public func panePID() throws -> pid_t {
        guard let pid = pid_t(try display("#{pane_pid}")) else { throw Failure(description: "no pane pid") }
        return pid
    }

    /// The id of the first child of the pane's process (a program started from the shell).
    /// - Throws: `Failure` when it has none within `timeout` seconds.
    public func childPID(timeout: TimeInterval = 10) throws -> pid_t {
        let parent = try panePID()
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let pid = Self.children(of: parent).first { return pid }
            usleep(50_000)
        }
        throw Failure(description: "no child of pane process \(parent)")
    }

    /// The names and first bytes of every paste buffer (`list-buffers`).
    public func buffers() throws -> [String] {
        try run(["list-buffers", "-F", "#{buffer_name} #{buffer_sample}"])
            .split(separator: "\n").map(String.init)
    }

    /// Runs `command` in the pane's shell and returns what it printed, read
    /// between two markers (an empty string when they are out of order).
    /// Throws `Failure` when the markers do not show within `timeout` seconds.
    public func shell(_ command: String, timeout: TimeInterval = 15) throws -> String {
        let tag = UUID().uuidString.prefix(6)
        // The markers are typed split by an empty quote, so only the shell's
        // output holds them whole. A marker line may begin with the prompt:
        // keys typed before the shell draws its prompt are echoed above it.
        try type("echo B\"\"\(tag); \(command); echo E\"\"\(tag)")
        try press("Enter")
        func marker(_ lines: [String], _ name: String) -> Int? {
            lines.lastIndex { $0.hasSuffix(name + tag) }
        }
        let screen = try waitUntil(timeout: timeout, "output of \(command)") {
            let lines = $0.components(separatedBy: "\n")
            return marker(lines, "B") != nil && marker(lines, "E") != nil
        }
        let lines = screen.components(separatedBy: "\n")
        guard let start = marker(lines, "B"), let end = marker(lines, "E"), start < end else { return "" }
        return lines[(start + 1)..<end].joined(separator: "\n")
    }

    /// Child process ids of `parent`, from /proc.
    public static func children(of parent: pid_t) -> [pid_t] {
        let path = "/proc/\(parent)/task/\(parent)/children"
        guard let s = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return s.split(separator: " ").compactMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// `argv` as one POSIX shell command line.
    public static func shellQuoted(_ argv: [String]) -> String {
        argv.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
    }
}

import FobSystem
import Foundation
@preconcurrency import Glibc

/// Runs clipboard helper programs: the secret goes to the child's stdin,
/// never to argv or the environment.
enum HelperProcess {
    /// What a helper run produced.
    struct Result {
        var status: Int32
        /// stdout when captured (may hold a secret: wipe it after use).
        var output: [UInt8]
    }

    private static let ignorePipeSignal: Void = {
        signal(SIGPIPE, SIG_IGN)
        return ()
    }()

    /// Runs `tool arguments…`, writes `input` to its stdin, waits for it.
    ///
    /// The child is started by ``ChildProcessSpawner``, every signal at its
    /// default and none blocked (threads of this process may block signals,
    /// and a helper such as xclip, which stays running, must still obey SIGTERM).
    /// - Parameters:
    ///   - input: bytes for stdin (then closed); `nil` gives an empty stdin.
    ///   - captureOutput: read stdout (else it goes to /dev/null).
    ///   - timeout: seconds before the helper is killed.
    /// - Throws: `.helperMissing` if it is not installed or cannot start;
    ///   `.helperFailed` if it outruns `timeout` (also while taking its
    ///   input: a helper that never reads its stdin is killed at the
    ///   deadline, whatever the input's size), if its stdin cannot be
    ///   written, or if it cannot be waited for (`waitpid` failing is
    ///   never counted as success).
    static func run(
        _ tool: String, _ arguments: [String], input: SecretBytes? = nil, captureOutput: Bool = false,
        environment: [String: String], timeout: TimeInterval = 5
    ) throws(ClipboardError) -> Result {
        _ = ignorePipeSignal
        guard let path = ExecutableLookup.find(tool, environment: environment) else {
            throw .helperMissing("\(tool) is not installed")
        }
        let stdinPipe: (read: Int32, write: Int32)
        let stdoutPipe: (read: Int32, write: Int32)
        do {
            stdinPipe = try ChildProcessSpawner.makePipe()
        } catch {
            throw .helperMissing(error.description)
        }
        do {
            stdoutPipe = captureOutput ? try ChildProcessSpawner.makePipe() : (-1, -1)
        } catch {
            close(stdinPipe.read)
            close(stdinPipe.write)
            throw .helperMissing(error.description)
        }
        let pid: pid_t
        do {
            // Helpers such as xclip fork a child that keeps running to own
            // the selection; without captureOutput it must not hold a pipe
            // anyone waits on, so its stdout is /dev/null.
            pid = try ChildProcessSpawner.spawn(
                executable: path, arguments: arguments, environment: environment,
                standardInput: .descriptor(stdinPipe.read),
                standardOutput: captureOutput ? .descriptor(stdoutPipe.write) : .null,
                standardError: .null)
        } catch {
            for fd in [stdinPipe.read, stdinPipe.write, stdoutPipe.read, stdoutPipe.write] where fd >= 0 { close(fd) }
            throw .helperMissing("cannot start \(tool): \(error.reason)")
        }
        close(stdinPipe.read)
        if captureOutput { close(stdoutPipe.write) }
        let deadline = Date().addingTimeInterval(timeout)
        var inputFailure: String?
        if let input {
            let end = FileDescriptorIO.monotonicNow() + timeout
            switch input.withUnsafeBytes({ FileDescriptorIO.writeAll($0, to: stdinPipe.write, deadline: end) }) {
            case .written: break
            case .timedOut: inputFailure = "\(tool) did not take its input within \(Int(timeout)) s"
            // EPIPE: the helper left without reading; its exit status tells.
            case .failed(let code) where code == EPIPE: break
            case .failed(let code): inputFailure = "cannot write to \(tool): \(String(cString: strerror(code)))"
            }
        }
        close(stdinPipe.write)
        if let inputFailure {
            kill(pid, SIGKILL)
            _ = FileDescriptorIO.waitForExit(pid)
            if captureOutput { close(stdoutPipe.read) }
            throw .helperFailed(inputFailure)
        }
        var output: [UInt8] = []
        var timedOut = false
        if captureOutput {
            let readFD = stdoutPipe.read
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let remaining = Int32(max(0, deadline.timeIntervalSinceNow) * 1000)
                var fds = [pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 1, remaining)
                if ready < 0 {
                    if errno == EINTR { continue }
                    break
                }
                if ready == 0 {
                    timedOut = true
                    break
                }
                let n = chunk.withUnsafeMutableBytes { Glibc.read(readFD, $0.baseAddress!, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    break
                }
                if n == 0 { break }
                grow(&output, with: chunk[0..<n])
            }
            chunk.wipe()
            close(readFD)
        }
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { break }
            if r < 0 && errno != EINTR {
                // Not knowing how the helper ended is not success.
                output.wipe()
                throw .helperFailed("cannot wait for \(tool): \(String(cString: strerror(errno)))")
            }
            if timedOut || Date() >= deadline {
                timedOut = true
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                break
            }
            usleep(2_000)
        }
        if timedOut {
            output.wipe()
            throw .helperFailed("\(tool) did not finish within \(Int(timeout)) s")
        }
        return Result(status: ChildProcessSpawner.exitCode(waitStatus: status), output: output)
    }

    /// Appends, wiping the old storage when the array has to move.
    private static func grow(_ array: inout [UInt8], with more: ArraySlice<UInt8>) {
        if array.count + more.count > array.capacity {
            var bigger: [UInt8] = []
            bigger.reserveCapacity(max(array.capacity * 2, array.count + more.count, 4096))
            bigger.append(contentsOf: array)
            array.wipe()
            array = bigger
        }
        array.append(contentsOf: more)
    }

    /// Runs a helper and fails unless it exits 0.
    static func check(
        _ tool: String, _ arguments: [String], input: SecretBytes? = nil,
        environment: [String: String]
    ) throws(ClipboardError) {
        let result = try run(tool, arguments, input: input, environment: environment)
        guard result.status == 0 else {
            throw .helperFailed("\(tool) \(arguments.joined(separator: " ")) exited with status \(result.status)")
        }
    }

    /// Runs a reading helper and compares its stdout with `secret` in
    /// constant time; `false` when it fails or prints something else.
    static func outputEquals(
        _ secret: SecretBytes, _ tool: String, _ arguments: [String],
        environment: [String: String]
    ) -> Bool {
        guard var result = try? run(tool, arguments, captureOutput: true, environment: environment) else {
            return false
        }
        defer { result.output.wipe() }
        guard result.status == 0 else { return false }
        return SecretBytes(result.output) == secret
    }
}

/// Wayland: `wl-copy` (secret on stdin), read back with `wl-paste --no-newline`,
/// cleared with `wl-copy --clear`.
///
/// wl-copy 2.3 and later take `--sensitive`, which also offers the
/// `x-kde-passwordManagerHint` type (value `secret`) so clipboard managers
/// leave the copy out of their history; it is passed when `wl-copy --help`
/// lists it. Older versions copy plain text only.
public struct WlCopyClipboard: Clipboard {
    /// The environment helpers run with (`PATH`, `DISPLAY`, `WAYLAND_DISPLAY`; never the secret).
    public let environment: [String: String]
    /// - Parameter environment: the environment for the helpers.
    public init(environment: [String: String]) { self.environment = environment }
    public var name: String { "wl-copy" }
    public var canReadBack: Bool { true }

    /// Whether this wl-copy marks copies as sensitive (`--sensitive` in its help).
    public var marksAsPassword: Bool {
        guard let path = ExecutableLookup.find("wl-copy", environment: environment) else { return false }
        return WlCopyClipboard.sensitiveSupport.withLock { cache in
            if let known = cache[path] { return known }
            var result = try? HelperProcess.run("wl-copy", ["--help"], captureOutput: true, environment: environment)
            defer { result?.output.wipe() }
            let supported = result.map { String(decoding: $0.output, as: UTF8.self).contains("--sensitive") } ?? false
            cache[path] = supported
            return supported
        }
    }

    /// Whether each wl-copy binary (by path) takes `--sensitive`.
    private static let sensitiveSupport = LockedCache()

    public func copy(_ secret: SecretBytes) throws(ClipboardError) {
        try HelperProcess.check(
            "wl-copy", marksAsPassword ? ["--sensitive"] : [], input: secret, environment: environment)
    }
    public func holds(_ secret: SecretBytes) -> Bool? {
        HelperProcess.outputEquals(secret, "wl-paste", ["--no-newline"], environment: environment)
    }
    public func clear() throws(ClipboardError) {
        try HelperProcess.check("wl-copy", ["--clear"], environment: environment)
    }
}

/// A dictionary behind a lock.
final class LockedCache: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: Bool] = [:]
    func withLock<R>(_ body: (inout [String: Bool]) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&values)
    }
}

/// X11 with xclip: `xclip -selection clipboard -in` (secret on stdin; xclip
/// stays running to own the selection), read back with `-out`, cleared by
/// owning the selection with an empty value.
///
/// xclip serves one target per process, so the copy is `UTF8_STRING` text
/// and cannot also offer `x-kde-passwordManagerHint`.
public struct XclipClipboard: Clipboard {
    /// The environment helpers run with (`PATH`, `DISPLAY`, `WAYLAND_DISPLAY`; never the secret).
    public let environment: [String: String]
    /// - Parameter environment: the environment for the helpers.
    public init(environment: [String: String]) { self.environment = environment }
    public var name: String { "xclip" }
    public var canReadBack: Bool { true }
    public func copy(_ secret: SecretBytes) throws(ClipboardError) {
        try HelperProcess.check("xclip", ["-selection", "clipboard", "-in"], input: secret, environment: environment)
    }
    public func holds(_ secret: SecretBytes) -> Bool? {
        HelperProcess.outputEquals(secret, "xclip", ["-selection", "clipboard", "-out"], environment: environment)
    }
    public func clear() throws(ClipboardError) {
        try HelperProcess.check(
            "xclip", ["-selection", "clipboard", "-in"], input: SecretBytes([UInt8]()), environment: environment)
    }
}

/// X11 with xsel: `xsel --clipboard --input` (secret on stdin), read back
/// with `--output`, cleared with `--clear`. Like xclip, one target only.
public struct XselClipboard: Clipboard {
    /// The environment helpers run with (`PATH`, `DISPLAY`, `WAYLAND_DISPLAY`; never the secret).
    public let environment: [String: String]
    /// - Parameter environment: the environment for the helpers.
    public init(environment: [String: String]) { self.environment = environment }
    public var name: String { "xsel" }
    public var canReadBack: Bool { true }
    public func copy(_ secret: SecretBytes) throws(ClipboardError) {
        try HelperProcess.check("xsel", ["--clipboard", "--input"], input: secret, environment: environment)
    }
    public func holds(_ secret: SecretBytes) -> Bool? {
        HelperProcess.outputEquals(secret, "xsel", ["--clipboard", "--output"], environment: environment)
    }
    public func clear() throws(ClipboardError) {
        try HelperProcess.check("xsel", ["--clipboard", "--clear"], environment: environment)
    }
}

/// tmux: the secret goes into a named paste buffer with
/// `tmux load-buffer -w -b NAME -` (stdin; `-w` also forwards it to the
/// outer terminal's clipboard through OSC 52), is read back with
/// `show-buffer -b NAME`, and cleared with `delete-buffer -b NAME`.
///
/// tmux keeps every buffer it is sent and ignores an empty OSC 52, so this
/// named buffer is the only thing Fob can remove: the copy forwarded to the
/// outer terminal by `-w` stays there.
public struct TmuxClipboard: Clipboard {
    /// The environment tmux runs with (`TMUX` names the server; never the secret).
    public let environment: [String: String]
    /// The paste buffer's name; default `fob`.
    public let bufferName: String
    /// Arguments before the tmux command, such as `["-L", "socket"]`; empty
    /// inside tmux, where `$TMUX` names the server.
    public let serverArguments: [String]

    /// - Parameters:
    ///   - environment: the environment for tmux.
    ///   - bufferName: the paste buffer to use.
    ///   - serverArguments: e.g. `["-L", "name"]` to reach a private server.
    public init(environment: [String: String], bufferName: String = "fob", serverArguments: [String] = []) {
        self.environment = environment
        self.bufferName = bufferName
        self.serverArguments = serverArguments
    }
    public var name: String { "tmux" }
    public var canReadBack: Bool { true }
    public func copy(_ secret: SecretBytes) throws(ClipboardError) {
        try HelperProcess.check(
            "tmux", serverArguments + ["load-buffer", "-w", "-b", bufferName, "-"], input: secret,
            environment: environment)
    }
    public func holds(_ secret: SecretBytes) -> Bool? {
        HelperProcess.outputEquals(
            secret, "tmux", serverArguments + ["show-buffer", "-b", bufferName], environment: environment)
    }
    public func clear() throws(ClipboardError) {
        // A missing buffer is already clear.
        _ = try HelperProcess.run(
            "tmux", serverArguments + ["delete-buffer", "-b", bufferName], environment: environment)
    }
}

/// OSC 52: writes `ESC ] 52 ; c ; base64 BEL` to the terminal, which sets its
/// clipboard (also over SSH). Clearing sends an empty selection. The
/// terminal's clipboard cannot be read back, so ``holds(_:)`` is `nil` and a
/// due clear happens whatever the clipboard holds by then.
public final class OSC52Clipboard: Clipboard, @unchecked Sendable {
    private let descriptor: Int32?
    private let lock = NSLock()

    /// - Parameter descriptor: the terminal's file descriptor; `nil` opens
    ///   `/dev/tty` for each write.
    public init(descriptor: Int32? = nil) { self.descriptor = descriptor }

    /// Whether `/dev/tty` can be opened (there is a controlling terminal).
    public static func canOpenTerminal() -> Bool {
        let fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        if fd >= 0 {
            close(fd)
            return true
        }
        return false
    }

    public var name: String { "osc52" }
    public var canReadBack: Bool { false }
    /// A write of a few bytes to the terminal, kept between the front end's frames.
    public var runsOnCallerThread: Bool { true }

    /// The escape sequence that sets the clipboard to `payload` (empty: clear).
    /// - Important: the result holds the base64 of the secret; wipe it after use.
    static func sequence(for payload: SecretBytes) -> [UInt8] {
        var out: [UInt8] = Array("\u{1B}]52;c;".utf8)
        let encoded = payload.base64()
        out.reserveCapacity(out.count + encoded.count + 1)
        encoded.withUnsafeBytes { out.append(contentsOf: $0) }
        out.append(0x07)
        return out
    }

    private func send(_ payload: SecretBytes) throws(ClipboardError) {
        var bytes = OSC52Clipboard.sequence(for: payload)
        defer { bytes.wipe() }
        let fd: Int32
        var opened = false
        if let descriptor {
            fd = descriptor
        } else {
            fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
            guard fd >= 0 else { throw .terminal(String(cString: strerror(errno))) }
            opened = true
        }
        defer { if opened { close(fd) } }
        let failure: String? = lock.withLock {
            FileDescriptorIO.writeAll(bytes, to: fd) ? nil : String(cString: strerror(errno))
        }
        if let failure { throw .terminal(failure) }
    }

    public func copy(_ secret: SecretBytes) throws(ClipboardError) { try send(secret) }
    public func holds(_ secret: SecretBytes) -> Bool? { nil }
    public func clear() throws(ClipboardError) { try send(SecretBytes([UInt8]())) }
}

/// No clipboard (`--clipboard none`): copying fails with a clear message.
public struct NoClipboard: Clipboard {
    /// The mechanism that has no clipboard.
    public init() {}
    public var name: String { "none" }
    public var canReadBack: Bool { false }
    public func copy(_ secret: SecretBytes) throws(ClipboardError) {
        throw .unavailable("no clipboard mechanism (set --clipboard or FOB_CLIPBOARD)")
    }
    public func holds(_ secret: SecretBytes) -> Bool? { false }
    public func clear() throws(ClipboardError) {}
}

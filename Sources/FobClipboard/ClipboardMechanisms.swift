import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Runs clipboard helper programs through ``ChildProcessRunner``: the
/// secret goes to the child's stdin, never to argv or the environment.
enum HelperProcess {
    /// Runs `tool arguments…` (found on the environment's `PATH`), writes
    /// `input` to its stdin and waits for it.
    /// - Parameters:
    ///   - input: bytes for stdin (then closed); `nil` gives an empty stdin.
    ///   - captureOutput: read stdout (else it goes to /dev/null, so that
    ///     a helper's long-lived child, such as xclip's, holds no pipe).
    ///   - timeout: seconds before the helper is killed.
    /// - Returns: how it ended and its stdout (wipe it after use).
    /// - Throws: `.helperMissing` if it is not installed or cannot start;
    ///   `.helperFailed` if it outruns `timeout` (also while taking its
    ///   input), if its stdin cannot be written, or if it cannot be waited for.
    static func run(
        _ tool: String, _ arguments: [String], input: SecretBytes? = nil, captureOutput: Bool = false,
        captureError: Bool = false, environment: [String: String], timeout: Double = 5
    ) throws(ClipboardError) -> ChildProcessResult {
        guard let path = ExecutableLookup.find(tool, environment: environment) else {
            throw .helperMissing("\(tool) is not installed")
        }
        let outcome = (input ?? SecretBytes([UInt8]())).withUnsafeBytes { bytes in
            Result { () throws(ChildProcessFailure) -> ChildProcessResult in
                try ChildProcessRunner.run(
                    path, arguments: arguments, environment: environment, input: bytes,
                    captureOutput: captureOutput, captureError: captureError, timeout: timeout)
            }
        }
        switch outcome {
        case .success(let result): return result
        case .failure(.notStarted(let error)): throw .helperMissing("cannot start \(tool): \(error.reason)")
        case .failure(let failure): throw .helperFailed("\(tool) \(failure)")
        }
    }

    /// Runs a helper and fails unless it exits 0.
    /// - Parameter quotingError: read the helper's stderr and quote its
    ///   first line in the failure (tmux's "no server running on …"), which
    ///   names the cause; only for helpers that leave no long-lived child
    ///   behind holding the pipe (not xclip, xsel or wl-copy).
    static func check(
        _ tool: String, _ arguments: [String], input: SecretBytes? = nil, quotingError: Bool = false,
        environment: [String: String]
    ) throws(ClipboardError) {
        var result = try run(tool, arguments, input: input, captureError: quotingError, environment: environment)
        defer { result.wipe() }
        guard result.status == 0 else {
            let said = firstLine(of: result.errorOutput)
            throw .helperFailed(
                "\(tool) \(arguments.joined(separator: " ")) exited with status \(result.status)"
                    + (said.isEmpty ? "" : ": \(said)"))
        }
    }

    /// The first non-empty line of a helper's stderr, control characters
    /// dropped, at most 160 characters.
    static func firstLine(of bytes: [UInt8]) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first { !$0.allSatisfy(\.isWhitespace) }
        let clean = String(
            (line ?? "").unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        return clean.count > 160 ? String(clean.prefix(159)) + "…" : clean
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
    private let lock = Lock()
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
            "tmux", serverArguments + ["load-buffer", "-w", "-b", bufferName, "-"], input: secret, quotingError: true,
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
    private let lock = Lock()

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

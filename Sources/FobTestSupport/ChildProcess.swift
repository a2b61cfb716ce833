import FobSystem
import Foundation
@preconcurrency import Glibc

/// What a finished child process left: its status and everything it wrote.
public struct ProcessResult: Sendable, Equatable {
    /// The exit status, or 128 + the signal number when a signal ended it.
    public var status: Int32
    /// The signal that ended the process, if one did.
    public var signal: Int32?
    /// Everything written to standard output.
    public var stdout: [UInt8]
    /// Everything written to standard error.
    public var stderr: [UInt8]
    /// Whether the process was killed because it outran its timeout.
    public var timedOut: Bool

    /// Standard output as UTF-8 text.
    public var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var stderrText: String { String(decoding: stderr, as: UTF8.self) }
}

/// Errors starting a child process.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
}

/// A child process started by ``ChildProcessSpawner`` in a new session (so it has
/// no controlling terminal), with its standard input, output and error on
/// pipes, its signals reset to their defaults and an explicit environment.
///
/// Input is written and output collected on a background thread, so large
/// outputs never block; ``wait(timeout:)`` kills the child with SIGKILL if it
/// outruns the timeout.
public final class ChildProcess: @unchecked Sendable {
    /// The child's process id.
    public let pid: pid_t
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: ProcessResult?
    private let wakeFD: Int32

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - executable: an absolute path.
    ///   - arguments: the arguments after the program name.
    ///   - environment: the complete environment of the child.
    ///   - stdin: bytes written to its standard input, which is then closed.
    ///   - holdStdinOpen: keep standard input open after `stdin` is written,
    ///     until ``closeStdin()`` (so the child blocks reading it).
    /// - Throws: ``ChildProcessError`` when the process cannot be started.
    public init(
        executable: String, arguments: [String], environment: [String: String], stdin: [UInt8] = [],
        holdStdinOpen: Bool = false
    ) throws {
        ChildProcess.ignoreSIGPIPE
        // pipe2 is not visible to Swift: pipe, then close-on-exec, under the
        // spawn lock so that no other child inherits these ends meanwhile.
        ChildProcess.spawnLock.lock()
        defer { ChildProcess.spawnLock.unlock() }
        let input: (read: Int32, write: Int32)
        let output: (read: Int32, write: Int32)
        let errors: (read: Int32, write: Int32)
        let wake: (read: Int32, write: Int32)
        do {
            input = try ChildProcessSpawner.makePipe()
            output = try ChildProcessSpawner.makePipe()
            errors = try ChildProcessSpawner.makePipe()
            wake = try ChildProcessSpawner.makePipe()
        } catch {
            throw ChildProcessError(description: error.description)
        }
        wakeFD = wake.write
        let pid = try ChildProcess.spawn(
            executable: executable, arguments: arguments, environment: environment,
            standardInput: .descriptor(input.read), standardOutput: .descriptor(output.write),
            standardError: .descriptor(errors.write), newSession: true)
        self.pid = pid
        close(input.read)
        close(output.write)
        close(errors.write)
        let stdinFD = input.write
        let stdoutFD = output.read
        let stderrFD = errors.read
        let wakeRead = wake.read
        _ = fcntl(stdinFD, F_SETFL, fcntl(stdinFD, F_GETFL) | O_NONBLOCK)
        let thread = Thread { [self] in
            let (out, err) = ChildProcess.pump(
                stdin: stdin, hold: holdStdinOpen, stdinFD: stdinFD, stdoutFD: stdoutFD,
                stderrFD: stderrFD, wakeFD: wakeRead)
            close(wakeRead)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            let signal: Int32? = (status & 0x7f) != 0 ? status & 0x7f : nil
            let code = signal.map { 128 + $0 } ?? ((status >> 8) & 0xff)
            lock.lock()
            result = ProcessResult(status: code, signal: signal, stdout: out, stderr: err, timedOut: false)
            lock.unlock()
            done.signal()
        }
        thread.start()
    }

    deinit { close(wakeFD) }

    /// Closes the child's standard input once everything given is written
    /// (for a child started with `holdStdinOpen`).
    public func closeStdin() {
        var byte: UInt8 = 1
        _ = write(wakeFD, &byte, 1)
    }

    /// Sends `signal` (such as `SIGKILL`) to the child.
    public func send(signal: Int32) { kill(pid, signal) }

    /// Waits for the child to end; after `timeout` seconds kills it with SIGKILL
    /// and reports ``ProcessResult/timedOut``.
    /// - Parameter timeout: seconds.
    public func wait(timeout: Double = 60) -> ProcessResult {
        var timedOut = false
        if done.wait(timeout: .now() + timeout) == .timedOut {
            timedOut = true
            kill(pid, SIGKILL)
            done.wait()
        }
        done.signal() // let later calls return at once
        lock.lock()
        defer { lock.unlock() }
        var final = result!
        final.timedOut = final.timedOut || timedOut
        return final
    }

    /// Starts `executable` and waits for it (see ``init(executable:arguments:environment:stdin:)``).
    public static func run(
        executable: String, arguments: [String], environment: [String: String],
        stdin: [UInt8] = [], timeout: Double = 60
    ) throws -> ProcessResult {
        try ChildProcess(executable: executable, arguments: arguments, environment: environment, stdin: stdin)
            .wait(timeout: timeout)
    }

    /// Held while pipes are made and children spawned.
    static let spawnLock = NSLock()

    private static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Starts a child with the product's ``ChildProcessSpawner`` (explicit
    /// environment, signals at their defaults and unblocked, only
    /// descriptors 0–2 inherited), so tests start programs the way Fob does.
    /// - Throws: ``ChildProcessError`` naming the `posix_spawn` error.
    static func spawn(
        executable: String, arguments: [String], environment: [String: String],
        standardInput: ChildProcessSpawner.Stream, standardOutput: ChildProcessSpawner.Stream,
        standardError: ChildProcessSpawner.Stream, newSession: Bool
    ) throws -> pid_t {
        do {
            return try ChildProcessSpawner.spawn(
                executable: executable, arguments: arguments, environment: environment,
                standardInput: standardInput, standardOutput: standardOutput,
                standardError: standardError, newSession: newSession)
        } catch {
            throw ChildProcessError(description: error.description)
        }
    }

    /// Writes `stdin` and reads both outputs until they close.
    private static func pump(
        stdin: [UInt8], hold: Bool, stdinFD: Int32, stdoutFD: Int32, stderrFD: Int32,
        wakeFD: Int32
    ) -> ([UInt8], [UInt8]) {
        var out: [UInt8] = []
        var err: [UInt8] = []
        var written = 0
        var inFD: Int32 = stdinFD
        var held = hold
        var wake = hold ? wakeFD : -1
        if stdin.isEmpty && !held {
            close(inFD)
            inFD = -1
        }
        var outFD = stdoutFD
        var errFD = stderrFD
        var buffer = [UInt8](repeating: 0, count: 65536)
        while outFD >= 0 || errFD >= 0 || (inFD >= 0 && !(held && written == stdin.count)) {
            let wantWrite = inFD >= 0 && written < stdin.count
            var fds = [
                pollfd(fd: wantWrite ? inFD : -1, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: outFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: errFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 4, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if fds[3].revents != 0 {
                held = false
                wake = -1
                if inFD >= 0 && written == stdin.count {
                    close(inFD)
                    inFD = -1
                }
            }
            if wantWrite && fds[0].revents != 0 {
                let n = stdin.withUnsafeBytes { write(inFD, $0.baseAddress! + written, stdin.count - written) }
                if n > 0 { written += n }
                if n < 0 && errno != EAGAIN && errno != EINTR || (written == stdin.count && !held) {
                    close(inFD)
                    inFD = -1
                }
            }
            for index in 1...2 where fds[index].revents != 0 {
                let fd = fds[index].fd
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    if index == 1 { out += buffer[0..<n] } else { err += buffer[0..<n] }
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(fd)
                    if index == 1 { outFD = -1 } else { errFD = -1 }
                }
            }
        }
        if inFD >= 0 { close(inFD) }
        return (out, err)
    }
}

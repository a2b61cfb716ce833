import FoundationEssentials
@preconcurrency import Glibc

/// How a child run by ``ChildProcessRunner`` ended, with what it printed.
///
/// - Important: ``output`` and ``errorOutput`` may hold secrets (a
///   clipboard's contents, a decrypted entry, a helper's answer): call
///   ``wipe()`` once they are used.
public struct ChildProcessResult: Sendable {
    /// How the child ended.
    public enum Termination: Sendable, Equatable {
        /// It exited with this status (0–255).
        case exited(Int32)
        /// A signal (such as `SIGKILL`, 9) ended it.
        case signaled(Int32)
    }

    /// How the child ended.
    public var termination: Termination
    /// Its standard output when captured, else empty.
    public var output: [UInt8]
    /// Its standard error when captured (at most the run's `maxError`
    /// bytes; the rest was read and dropped), else empty.
    public var errorOutput: [UInt8]

    /// Whether it exited with status 0.
    public var succeeded: Bool { termination == .exited(0) }

    /// The status as shells report it: the exit status, or 128 + the signal number.
    public var status: Int32 {
        switch termination {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }

    /// Zeroes both outputs (`explicit_bzero`) and empties them.
    public mutating func wipe() {
        output.wipe()
        errorOutput.wipe()
        output = []
        errorOutput = []
    }
}

/// Why ``ChildProcessRunner/run(_:arguments:environment:input:captureOutput:captureError:maxOutput:maxError:timeout:)``
/// has no result; in each case the child is gone (killed and reaped) and
/// every buffer of the run wiped.
public enum ChildProcessFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// No pipe could be made or the program could not start (ENOENT for a
    /// missing executable, EACCES, ENOEXEC …).
    case notStarted(ChildProcessSpawner.SpawnError)
    /// The deadline passed, after this many seconds; the child was killed (`SIGKILL`).
    case timedOut(seconds: Double)
    /// The standard output grew past this many bytes; the child was killed.
    case tooLarge(limit: Int)
    /// Its standard input could not be written (an `errno` value other than
    /// EPIPE: a child that leaves without reading is judged by its status).
    case inputFailed(Int32)
    /// `waitpid` failed (an `errno` value): how it ended is unknown, which is never success.
    case waitFailed(Int32)

    /// A sentence for messages (no output of the child, which may be secret).
    public var description: String {
        switch self {
        case .notStarted(let error): "cannot start: \(error.description)"
        case .timedOut(let seconds): "did not finish within \(Self.seconds(seconds))"
        case .tooLarge(let limit): "printed more than \(limit) bytes"
        case .inputFailed(let code): "cannot write its input: \(String(cString: strerror(code)))"
        case .waitFailed(let code): "cannot wait for it: \(String(cString: strerror(code)))"
        }
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// Runs one child program to its end: its arguments, bytes for its standard
/// input, its standard output and error read into memory, all within a
/// deadline and a size limit. Fob's one way to run a program and wait for
/// it: the clipboard helpers, `gpg` for pass imports, `fob-http` and `fob-xml`.
///
/// The child is started by ``ChildProcessSpawner`` (explicit environment,
/// signals at their defaults, descriptors 0–2 only). The input is written
/// while the outputs are read (`poll`), so a child that prints a lot
/// before it has read all of its input cannot deadlock with this process
/// on two full pipes. Every buffer of the run (the read chunk, an output's
/// storage left behind as it grows, the outputs of a failed run) is zeroed
/// with `explicit_bzero`.
///
/// - Important: secrets go only through `input` and come back only
///   through the outputs; `arguments` and `environment` are visible to
///   other users in `/proc/PID/cmdline` and `/proc/PID/environ` (the
///   latter to the same user) and must never hold one.
public enum ChildProcessRunner {
    /// Runs `executable` and waits for it.
    ///
    /// A standard stream that is not captured is `/dev/null`: a helper
    /// that forks a long-lived child (xclip keeping the selection) must not
    /// leave it holding a pipe this process reads to its end.
    /// - Parameters:
    ///   - executable: an absolute path (see ``ExecutableLookup``).
    ///   - arguments: the arguments after the program name (never a secret).
    ///   - environment: the child's complete environment (never a secret).
    ///   - input: bytes for its standard input, which is then closed (an
    ///     empty buffer: closed at once). The caller keeps and wipes it.
    ///   - captureOutput: read standard output (else `/dev/null`).
    ///   - captureError: read standard error (else `/dev/null`).
    ///   - maxOutput: the largest standard output, in bytes; more is
    ///     ``ChildProcessFailure/tooLarge(limit:)``.
    ///   - maxError: the standard error kept, in bytes; the rest is dropped.
    ///   - timeout: seconds the whole run may take, from the start to the
    ///     child's exit; then ``ChildProcessFailure/timedOut(seconds:)``.
    ///   - newSession: start the child in a new session (no controlling
    ///     terminal; see ``ChildProcessSpawner``).
    /// - Returns: how it ended and what it printed (wipe it after use).
    /// - Throws: ``ChildProcessFailure``.
    public static func run(
        _ executable: String, arguments: [String] = [], environment: [String: String],
        input: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        captureOutput: Bool = true, captureError: Bool = false,
        maxOutput: Int = 1 << 20, maxError: Int = 4096, timeout: Double, newSession: Bool = false
    ) throws(ChildProcessFailure) -> ChildProcessResult {
        _ = ignorePipeSignal
        var run = try Run(
            executable, arguments: arguments, environment: environment,
            captureOutput: captureOutput, captureError: captureError, newSession: newSession)
        run.exchange(
            input: input, deadline: FileDescriptorIO.monotonicNow() + timeout, timeout: timeout,
            limits: (maxOutput, maxError))
        return try run.finish()
    }

    /// Runs `executable` with `input` from a byte array; see
    /// ``run(_:arguments:environment:input:captureOutput:captureError:maxOutput:maxError:timeout:)``.
    public static func run(
        _ executable: String, arguments: [String] = [], environment: [String: String], input: [UInt8],
        captureOutput: Bool = true, captureError: Bool = false,
        maxOutput: Int = 1 << 20, maxError: Int = 4096, timeout: Double, newSession: Bool = false
    ) throws(ChildProcessFailure) -> ChildProcessResult {
        let result = input.withUnsafeBytes { bytes in
            Result { () throws(ChildProcessFailure) -> ChildProcessResult in
                try run(
                    executable, arguments: arguments, environment: environment, input: bytes,
                    captureOutput: captureOutput, captureError: captureError,
                    maxOutput: maxOutput, maxError: maxError, timeout: timeout, newSession: newSession)
            }
        }
        return try result.get()
    }

    /// A write to a pipe whose reader has gone fails with EPIPE instead of
    /// ending this process.
    private static let ignorePipeSignal: Void = {
        signal(SIGPIPE, SIG_IGN)
        return ()
    }()

    /// One started child and this process's ends of its pipes (-1 once closed).
    private struct Run {
        let pid: pid_t
        var stdin: Int32
        var stdout: Int32
        var stderr: Int32
        var output: [UInt8] = []
        var errorOutput: [UInt8] = []
        var failure: ChildProcessFailure?
        var deadline: Double = 0
        var timeout: Double = 0

        init(
            _ executable: String, arguments: [String], environment: [String: String],
            captureOutput: Bool, captureError: Bool, newSession: Bool
        ) throws(ChildProcessFailure) {
            var pipes: [(read: Int32, write: Int32)] = []
            func closeAll() {
                pipes.forEach {
                    close($0.read)
                    close($0.write)
                }
            }
            do {
                for _ in 0..<(1 + (captureOutput ? 1 : 0) + (captureError ? 1 : 0)) {
                    pipes.append(try ChildProcessSpawner.makePipe())
                }
                let input = pipes[0]
                let output = captureOutput ? pipes[1] : nil
                let error = captureError ? pipes[pipes.count - 1] : nil
                pid = try ChildProcessSpawner.spawn(
                    executable: executable, arguments: arguments, environment: environment,
                    standardInput: .descriptor(input.read),
                    standardOutput: output.map { .descriptor($0.write) } ?? .null,
                    standardError: error.map { .descriptor($0.write) } ?? .null, newSession: newSession)
                stdin = input.write
                stdout = output?.read ?? -1
                stderr = error?.read ?? -1
                close(input.read)
                if let output { close(output.write) }
                if let error { close(error.write) }
            } catch {
                closeAll()
                throw .notStarted(error)
            }
        }

        /// Writes `input` and reads the outputs until both outputs end, the
        /// deadline passes or something fails (then ``failure`` is set).
        mutating func exchange(
            input: UnsafeRawBufferPointer, deadline: Double, timeout: Double, limits: (output: Int, error: Int)
        ) {
            self.deadline = deadline
            self.timeout = timeout
            var sent = 0
            if input.isEmpty {
                closeInput()
            } else {
                _ = fcntl(stdin, F_SETFL, fcntl(stdin, F_GETFL) | O_NONBLOCK)
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            defer { chunk.wipe() }
            while failure == nil && (stdin >= 0 || stdout >= 0 || stderr >= 0) {
                let remaining = deadline - FileDescriptorIO.monotonicNow()
                guard remaining > 0 else {
                    failure = .timedOut(seconds: timeout)
                    return
                }
                var fds = [
                    pollfd(fd: stdin, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: stdout, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: stderr, events: Int16(POLLIN), revents: 0),
                ]
                // poll ignores entries whose descriptor is negative.
                let ready = poll(&fds, 3, Int32(min(remaining, 1) * 1000) + 1)
                guard ready > 0 else { continue } // EINTR, or nothing yet
                if fds[0].revents != 0 { writeInput(input, sent: &sent) }
                if fds[1].revents != 0 { readOutput(into: &chunk, limit: limits.output) }
                if fds[2].revents != 0 { readError(into: &chunk, limit: limits.error) }
            }
        }

        private mutating func writeInput(_ input: UnsafeRawBufferPointer, sent: inout Int) {
            let n = write(stdin, input.baseAddress! + sent, input.count - sent)
            if n > 0 { sent += n }
            if n < 0 && errno != EAGAIN && errno != EINTR && errno != EPIPE { failure = .inputFailed(errno) }
            // Done, or the child stopped reading (EPIPE): its status tells.
            if sent == input.count || n < 0 && errno != EAGAIN && errno != EINTR { closeInput() }
        }

        private mutating func readOutput(into chunk: inout [UInt8], limit: Int) {
            let n = Self.readOnce(&stdout, into: &chunk)
            if n > 0 && output.count + n > limit { failure = .tooLarge(limit: limit) }
            if n > 0 && failure == nil { output.appendWiping(chunk[0..<n]) }
        }

        private mutating func readError(into chunk: inout [UInt8], limit: Int) {
            let n = Self.readOnce(&stderr, into: &chunk)
            if n > 0 && errorOutput.count < limit {
                errorOutput.appendWiping(chunk[0..<min(n, limit - errorOutput.count)])
            }
        }

        /// Reads once from `fd` into `chunk`; at its end (or an error)
        /// closes it and sets it to -1.
        /// - Returns: the number of bytes read, 0 at the end.
        private static func readOnce(_ fd: inout Int32, into chunk: inout [UInt8]) -> Int {
            let descriptor = fd
            let n = chunk.withUnsafeMutableBytes { FileDescriptorIO.read(descriptor, into: $0) }
            guard n > 0 else {
                close(fd)
                fd = -1
                return 0
            }
            return n
        }

        private mutating func closeInput() {
            if stdin >= 0 { close(stdin) }
            stdin = -1
        }

        /// Closes what is open, waits for the child until the deadline
        /// (killing it on a failure or at the deadline) and makes the result.
        mutating func finish() throws(ChildProcessFailure) -> ChildProcessResult {
            closeInput()
            for fd in [stdout, stderr] where fd >= 0 { close(fd) }
            stdout = -1
            stderr = -1
            var status: Int32 = 0
            if failure == nil {
                switch Self.wait(pid, until: deadline) {
                case .ended(let word): status = word
                case .failed(let code): failure = .waitFailed(code)
                case .deadline: failure = .timedOut(seconds: timeout)
                }
            }
            if let failure {
                kill(pid, SIGKILL)
                _ = FileDescriptorIO.waitForExit(pid)
                output.wipe()
                errorOutput.wipe()
                throw failure
            }
            let signal = status & 0x7f
            let termination: ChildProcessResult.Termination =
                signal != 0 ? .signaled(signal) : .exited((status >> 8) & 0xff)
            return ChildProcessResult(termination: termination, output: output, errorOutput: errorOutput)
        }

        private enum Wait {
            case ended(Int32)
            case failed(Int32)
            case deadline
        }

        /// Waits for `pid` until `deadline`, polling with `WNOHANG` at
        /// intervals that double from 50 µs to 10 ms (a child that has
        /// closed its outputs is usually gone within microseconds, so a
        /// short run is not made longer by much).
        private static func wait(_ pid: pid_t, until deadline: Double) -> Wait {
            var status: Int32 = 0
            var pause: UInt32 = 50
            while true {
                let r = waitpid(pid, &status, WNOHANG)
                if r == pid { return .ended(status) }
                if r < 0 && errno != EINTR { return .failed(errno) }
                if FileDescriptorIO.monotonicNow() >= deadline { return .deadline }
                usleep(pause)
                pause = min(pause * 2, 10_000)
            }
        }
    }
}

extension Array where Element == UInt8 {
    /// Appends `more`; when the storage must grow, the old storage is
    /// zeroed (``wipe()``) before it is freed, so no copy of a secret is
    /// left behind in freed memory.
    public mutating func appendWiping(_ more: ArraySlice<UInt8>) {
        if count + more.count > capacity {
            var bigger: [UInt8] = []
            bigger.reserveCapacity(Swift.max(capacity * 2, count + more.count, 4096))
            bigger.append(contentsOf: self)
            wipe()
            self = bigger
        }
        append(contentsOf: more)
    }
}

@preconcurrency import Glibc

/// Reading and writing whole buffers on file descriptors, the one copy of
/// the `EINTR` and short-write loops that pipes, terminals and sockets need.
public enum FileDescriptorIO {
    /// Writes all of `bytes` to `fd`, retrying after `EINTR` and short writes.
    /// - Parameters:
    ///   - bytes: what to write (a secret stays in the caller's buffer).
    ///   - fd: a blocking descriptor, such as a pipe's write end or a terminal; not closed.
    /// - Returns: `false` when a write fails (EPIPE once the reader has gone;
    ///   SIGPIPE must then be ignored or it ends this process first).
    @discardableResult
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Bool {
        guard var next = bytes.baseAddress else { return true }
        var left = bytes.count
        while left > 0 {
            let n = write(fd, next, left)
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 { return false }
            next += n
            left -= n
        }
        return true
    }

    /// Writes all of `bytes` to `fd`; see ``writeAll(_:to:)-(UnsafeRawBufferPointer,_)``.
    /// - Returns: `false` when a write fails.
    @discardableResult
    public static func writeAll(_ bytes: [UInt8], to fd: Int32) -> Bool {
        bytes.withUnsafeBytes { writeAll($0, to: fd) }
    }

    /// How ``writeAll(_:to:deadline:)`` ended.
    public enum DeadlineWrite: Sendable, Equatable {
        /// Every byte was written.
        case written
        /// The reader took no more before the deadline.
        case timedOut
        /// A write failed; the `errno` value (EPIPE once the reader has gone).
        case failed(Int32)
    }

    /// Writes all of `bytes` to `fd` unless the reader stops taking them:
    /// `fd` is made non-blocking and each write waits in `poll` for room,
    /// at most until `deadline`. A pipe holds 64 KiB, so a child that never
    /// reads its stdin would otherwise block the writer for ever.
    /// - Parameters:
    ///   - bytes: what to write.
    ///   - fd: a pipe's write end or socket (left non-blocking; not closed).
    ///   - deadline: `CLOCK_MONOTONIC` seconds (see ``monotonicNow()``).
    /// - Returns: ``DeadlineWrite``.
    public static func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32, deadline: Double) -> DeadlineWrite {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard var next = bytes.baseAddress else { return .written }
        var left = bytes.count
        while left > 0 {
            let n = write(fd, next, left)
            if n > 0 {
                next += n
                left -= n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            guard n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) else { return .failed(n == 0 ? EIO : errno) }
            let remaining = deadline - monotonicNow()
            guard remaining > 0 else { return .timedOut }
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready < 0 && errno != EINTR { return .failed(errno) }
        }
        return .written
    }

    /// Seconds on `CLOCK_MONOTONIC` (never goes back; for deadlines).
    public static func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Reads once into `buffer`, retrying after `EINTR`.
    /// - Returns: the number of bytes read (0 at end of file), or -1 with
    ///   `errno` set (never EINTR).
    public static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = Glibc.read(fd, base, buffer.count)
            if n < 0 && errno == EINTR { continue }
            return n
        }
    }

    /// Waits for `pid` to end, retrying after `EINTR`.
    /// - Returns: the `waitpid` status word, or `nil` when `waitpid` fails
    ///   (ECHILD: not our child, or already reaped).
    public static func waitForExit(_ pid: pid_t) -> Int32? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return status
    }
}

/// Finding programs the way a shell does.
public enum ExecutableLookup {
    /// The path of `tool`: itself when it contains a `/` and is executable,
    /// else the first executable `DIR/tool` for DIR in `PATH`.
    /// - Parameters:
    ///   - tool: a program name such as `xclip`, or a path.
    ///   - environment: where `PATH` is read (default search path
    ///     `/usr/local/bin:/usr/bin:/bin` when unset).
    /// - Returns: the path, or `nil` when none is found.
    public static func find(_ tool: String, environment: [String: String]) -> String? {
        if tool.contains("/") { return access(tool, X_OK) == 0 ? tool : nil }
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(tool)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Where Fob's helper program `name` (`fob-http`, `fob-xml`) is: the
    /// path in `environment[override]` (which must be executable), else
    /// next to the running program (`/proc/self/exe`), else on `PATH`.
    /// - Returns: an executable path, or `nil`.
    public static func helper(_ name: String, override: String, environment: [String: String]) -> String? {
        if let path = environment[override], !path.isEmpty {
            return find(path, environment: environment)
        }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        if length > 0 {
            let exe = String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let slash = exe.lastIndex(of: "/") {
                let sibling = String(exe[...slash]) + name
                if access(sibling, X_OK) == 0 { return sibling }
            }
        }
        return find(name, environment: environment)
    }
}

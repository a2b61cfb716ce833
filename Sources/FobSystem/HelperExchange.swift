import Foundation
@preconcurrency import Glibc

/// One run of one of Fob's helper programs (`fob-http`, `fob-xml`): the
/// input on its standard input, the answer read from its standard output,
/// within a deadline and a size limit. The helpers exist so that `fob`
/// itself loads no network or XML library; their input and answer may hold
/// secrets, so nothing goes through arguments, and every buffer of this
/// exchange is wiped (`explicit_bzero`) once read.
public enum HelperExchange {
    /// How a run ended.
    public enum Outcome {
        /// The helper exited 0; its standard output (wipe it after use).
        case answered([UInt8])
        /// The helper exited with another status or was killed by a signal.
        case failed
        /// The deadline passed (the helper was killed).
        case timedOut
        /// The answer grew past the limit (the helper was killed).
        case tooLarge
        /// The helper could not be started: why.
        case notStarted(String)
    }

    /// Where helper `name` is: the path in `environment[override]` (which
    /// must be executable), else next to the running program
    /// (`/proc/self/exe`), else on `PATH`.
    /// - Returns: an executable path, or `nil`.
    public static func locate(_ name: String, override: String, environment: [String: String]) -> String? {
        if let path = environment[override], !path.isEmpty {
            return ExecutableLookup.find(path, environment: environment)
        }
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let sibling = URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent(name).path
            if access(sibling, X_OK) == 0 { return sibling }
        }
        return ExecutableLookup.find(name, environment: environment)
    }

    /// Runs `path` with no arguments and `environment`, writes `input` to
    /// its standard input and closes it, then reads its standard output
    /// until it ends; standard error goes to /dev/null.
    /// - Parameters:
    ///   - deadline: ``FileDescriptorIO/monotonicNow()`` seconds by which
    ///     the helper must have answered.
    ///   - maxOutput: the largest answer, in bytes.
    public static func run(
        _ path: String, input: [UInt8], environment: [String: String],
        deadline: Double, maxOutput: Int
    ) -> Outcome {
        signal(SIGPIPE, SIG_IGN)
        let stdin: (read: Int32, write: Int32)
        let stdout: (read: Int32, write: Int32)
        do {
            stdin = try ChildProcessSpawner.makePipe()
            stdout = try ChildProcessSpawner.makePipe()
        } catch {
            return .notStarted(error.description)
        }
        let pid: pid_t
        do {
            pid = try ChildProcessSpawner.spawn(
                executable: path, arguments: [], environment: environment,
                standardInput: .descriptor(stdin.read), standardOutput: .descriptor(stdout.write),
                standardError: .null)
        } catch {
            [stdin.read, stdin.write, stdout.read, stdout.write].forEach { close($0) }
            return .notStarted(error.description)
        }
        close(stdin.read)
        close(stdout.write)
        // Writes the input and reads the answer at once, so that a helper
        // that answers while it still reads cannot block on a full pipe.
        var stdinOpen = !input.isEmpty
        if stdinOpen {
            _ = fcntl(stdin.write, F_SETFL, fcntl(stdin.write, F_GETFL) | O_NONBLOCK)
        } else {
            close(stdin.write)
        }
        var sent = 0
        var answer: [UInt8] = []
        answer.reserveCapacity(65_536)
        var outcome: Outcome?
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while outcome == nil {
            let remaining = deadline - FileDescriptorIO.monotonicNow()
            if remaining <= 0 {
                outcome = .timedOut
                break
            }
            var fds = [pollfd(fd: stdout.read, events: Int16(POLLIN), revents: 0)]
            if stdinOpen { fds.append(pollfd(fd: stdin.write, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 && errno != EINTR {
                outcome = .failed
                break
            }
            if ready <= 0 { continue }
            if stdinOpen, fds.count > 1, fds[1].revents != 0 {
                let n = input.withUnsafeBytes { write(stdin.write, $0.baseAddress! + sent, $0.count - sent) }
                if n > 0 { sent += n }
                if sent == input.count || (n < 0 && errno != EAGAIN && errno != EINTR) {
                    // Done, or the helper stopped reading (EPIPE): it answers or fails on its own.
                    close(stdin.write)
                    stdinOpen = false
                }
            }
            guard fds[0].revents != 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { FileDescriptorIO.read(stdout.read, into: $0) }
            if n <= 0 { break }
            if answer.count + n > maxOutput {
                outcome = .tooLarge
                break
            }
            if answer.count + n > answer.capacity {
                // Grow by hand so the old buffer is wiped, not just freed.
                var bigger: [UInt8] = []
                bigger.reserveCapacity(max(answer.capacity * 2, answer.count + n))
                bigger += answer
                wipe(&answer)
                answer = bigger
            }
            answer += chunk[0..<n]
        }
        if stdinOpen { close(stdin.write) }
        wipe(&chunk)
        close(stdout.read)
        if outcome != nil { kill(pid, SIGKILL) }
        let status = FileDescriptorIO.waitForExit(pid)
        if let outcome {
            wipe(&answer)
            return outcome
        }
        guard let status, ChildProcessSpawner.exitCode(waitStatus: status) == 0 else {
            wipe(&answer)
            return .failed
        }
        return .answered(answer)
    }

    /// Zeroes `bytes` in a way the compiler keeps (`explicit_bzero`).
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { explicit_bzero(base, $0.count) } }
    }
}

import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Asks for the master password on the requester's own controlling
/// terminal, as sudo does: the agent opens that terminal (`O_NOCTTY`, so it
/// never becomes the agent's), checks that it is a terminal of this user,
/// discards what was typed ahead, turns echo off, writes the question and
/// reads one line into wiped memory; the terminal's modes are restored on
/// every path. Nothing goes to the requester's standard output, and the
/// password never goes through a file, argv or the environment.
public struct TerminalPasswordPrompt: Sendable {
    /// How asking ended.
    public enum Outcome: Sendable, Equatable {
        /// The line typed (without its newline).
        case password(SecretBytes)
        /// No terminal to ask on: the requester has none, or it cannot be
        /// opened, is not a terminal, or is another user's.
        case unreachable
        /// The question was put and refused (an empty line, end of input)
        /// or not answered within the timeout.
        case refused
    }

    /// The longest password read, in bytes; more is a refusal.
    public static let maxBytes = 1024

    /// A prompt.
    public init() {}

    /// Asks on `terminal`.
    /// - Parameters:
    ///   - question: the text before the prompt, already safe to show (``displaySafe(_:)``).
    ///   - terminal: the requester's controlling terminal (`/dev/pts/3`), or `nil`.
    ///   - timeout: how long to wait for the line, in seconds.
    /// - Returns: the password, or why there is none.
    public func ask(_ question: String, terminal: String?, timeout: Double) -> Outcome {
        guard let terminal, terminal.hasPrefix("/dev/") else { return .unreachable }
        let fd = open(terminal, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return .unreachable }
        defer { close(fd) }
        var st = stat()
        var saved = termios()
        guard fstat(fd, &st) == 0, st.st_uid == getuid(), isatty(fd) == 1, tcgetattr(fd, &saved) == 0 else {
            return .unreachable
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK)
        quiet.c_lflag |= tcflag_t(ECHONL | ICANON)
        tcflush(fd, TCIFLUSH)
        guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else { return .unreachable }
        defer { tcsetattr(fd, TCSAFLUSH, &saved) }
        guard FileDescriptorIO.writeAll(Array(question.utf8), to: fd) else { return .unreachable }
        var line = TerminalPasswordPrompt.readLine(fd, until: SocketIO.monotonic() + timeout)
        defer { line?.wipe() }
        guard let typed = line, !typed.isEmpty else {
            _ = FileDescriptorIO.writeAll(
                Array((line == nil ? "\nfob: no answer; refused\n" : "fob: refused\n").utf8), to: fd)
            return .refused
        }
        return .password(SecretBytes(typed))
    }

    /// One line within the deadline, without its newline; `nil` for none
    /// (the time ran out, the terminal closed, or the line was too long).
    private static func readLine(_ fd: Int32, until deadline: Double) -> [UInt8]? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(maxBytes + 1)
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            let left = deadline - SocketIO.monotonic()
            guard left > 0 else {
                bytes.wipe()
                return nil
            }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { continue }
            guard ready > 0, read(fd, &byte, 1) == 1, bytes.count <= maxBytes else {
                bytes.wipe()
                return nil
            }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { return bytes }
            bytes.append(byte)
        }
    }
}

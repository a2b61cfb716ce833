import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Asks on the requester's own controlling terminal, as sudo does: the
/// agent opens that terminal (`O_NOCTTY`, so it never becomes the agent's),
/// discards what was typed ahead, writes the question and reads one line.
/// Nothing goes to the requester's standard output. A requester with no
/// terminal cannot be asked here.
public struct TerminalAsker: AccessAsker {
    /// The length of the lease answer `m`, in seconds (15 minutes).
    public var leaseSeconds: Double

    /// - Parameter leaseSeconds: the lease the `m` answer gives.
    public init(leaseSeconds: Double = 900) {
        self.leaseSeconds = leaseSeconds
    }

    /// - Returns: the answer; ``AccessOutcome/unreachable`` when the
    ///   requester has no terminal, or it cannot be opened or written;
    ///   ``AccessOutcome/unanswered`` when no line came within `timeout`.
    public func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        guard let fd = Self.openTerminal(of: question.context.requester) else { return .unreachable }
        defer { close(fd) }
        tcflush(fd, TCIFLUSH)
        guard write(fd, TerminalAsker.prompt(question, leaseSeconds: leaseSeconds)) else { return .unreachable }
        let line = readLine(fd, timeout: timeout)
        guard let line else {
            _ = write(fd, "\nfob: no answer; refused\n")
            return .unanswered
        }
        let answer = TerminalAsker.answer(line, leaseSeconds: leaseSeconds)
        _ = write(fd, answer == .deny ? "fob: refused\n" : "fob: allowed\n")
        return .answered(answer)
    }

    /// Tells the requester on its own terminal, if it has one, that its
    /// question waits elsewhere (`text`, one line that names no secret), so
    /// a `fob get` typed in a shell does not sit silent while the terminal
    /// UI is asked. Nothing is read; a requester with no terminal, or one
    /// that cannot be opened, is told nothing.
    public static func tell(_ requester: Requester, _ text: String) {
        guard let fd = openTerminal(of: requester) else { return }
        defer { close(fd) }
        _ = FileDescriptorIO.writeAll(Array(text.utf8), to: fd)
    }

    /// The requester's controlling terminal opened for reading and writing
    /// (never made the agent's own), when it is a terminal device under
    /// `/dev` owned by this user; `nil` otherwise. The caller closes it.
    private static func openTerminal(of requester: Requester) -> Int32? {
        guard let path = requester.terminal, path.hasPrefix("/dev/") else { return nil }
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_uid == getuid(), isatty(fd) == 1 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// The question's text: who (program, pid, parents, directory,
    /// terminal), which item, through what, why, and the choices.
    public static func prompt(_ question: AccessQuestion, leaseSeconds: Double) -> String {
        let r = question.context.requester
        var text = "\nfob: \(r.programName)[\(r.pid)] (\(displaySafe(r.executable))) asks for "
        text += "\(displaySafe(question.subject)) through \(displaySafe(question.context.via))\n"
        if !r.parents.isEmpty { text += "     run by \(displaySafe(r.chain()))\n" }
        text += "     in \(displaySafe(r.workingDirectory)) on \(r.terminal ?? "no terminal"); \(question.reason)\n"
        let lease = AccessPrompt.leaseText(seconds: leaseSeconds)
        text += "Allow? [t] this program until the vault locks, [o] once, [m] \(lease), "
        text += "[a] always for this item, [d] deny: "
        return text
    }

    /// The answer a typed line means; anything else is a denial.
    public static func answer(_ line: String, leaseSeconds: Double) -> AccessAnswer {
        switch line.lowercased().first {
        case "t": return .untilLock
        case "o": return .once
        case "m": return .lease(seconds: leaseSeconds)
        case "a": return .always
        default: return .deny
        }
    }

    private func write(_ fd: Int32, _ text: String) -> Bool {
        FileDescriptorIO.writeAll(Array(text.utf8), to: fd)
    }

    /// One line (at most 64 bytes kept) within `timeout` seconds, or `nil`.
    private func readLine(_ fd: Int32, timeout: Double) -> String? {
        let deadline = SocketIO.monotonic() + timeout
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let left = deadline - SocketIO.monotonic()
            guard left > 0 else { return nil }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&p, 1, Int32(min(left, 1) * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { return nil }
            if ready == 0 { continue }
            let n = read(fd, &byte, 1)
            guard n == 1 else { return nil }
            if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                return String(decoding: bytes, as: UTF8.self)
            }
            if bytes.count < 64 { bytes.append(byte) }
        }
    }
}

import FobStore
import FobSystem
@preconcurrency import Glibc

/// Why a masked prompt gave no answer.
public enum PromptError: Error, Equatable, Sendable {
    /// There is no controlling terminal to ask on.
    case noTerminal
    /// The user pressed Ctrl-C (or Ctrl-D on an empty line).
    case interrupted
    /// More than the allowed number of bytes was typed.
    case tooLong(maxBytes: Int)
}

/// Asks for a secret with a masked prompt: the master password, or an item's
/// secret when standard input is a terminal.
public protocol SecretPrompter: AnyObject {
    /// Shows `prompt`, reads one line without echoing it (one `•` per
    /// character typed) and returns its bytes.
    /// - Parameters:
    ///   - prompt: the text before the field, such as `"Master password: "`.
    ///   - maxBytes: the longest answer accepted, in bytes of UTF-8.
    /// - Throws: ``PromptError``: `.noTerminal` at once when there is no
    ///   terminal, `.interrupted` on Ctrl-C, `.tooLong` past `maxBytes`.
    /// - Important: the answer goes straight into ``SecretBytes``; the
    ///   terminal shows only bullets.
    func readSecret(prompt: String, maxBytes: Int) throws(PromptError) -> SecretBytes
    /// Shows `prompt` and reads one line that is no secret (a number, a
    /// fingerprint), echoed as typed; keys and errors as ``readSecret(prompt:maxBytes:)``.
    func readLine(prompt: String, maxBytes: Int) throws(PromptError) -> String
}

extension SecretPrompter {
    /// The line read by ``readSecret(prompt:maxBytes:)`` (for a prompter
    /// that does not echo): invalid UTF-8 gives an empty line.
    public func readLine(prompt: String, maxBytes: Int) throws(PromptError) -> String {
        try readSecret(prompt: prompt, maxBytes: maxBytes).unsafeString ?? ""
    }
}

/// A process without a controlling terminal: every prompt fails with
/// ``PromptError/noTerminal`` at once.
public final class NoTerminal: SecretPrompter {
    public init() {}

    /// Always throws ``PromptError/noTerminal``.
    public func readSecret(prompt: String, maxBytes: Int) throws(PromptError) -> SecretBytes {
        throw .noTerminal
    }
}

/// The line editor behind a masked prompt, byte by byte, without any
/// terminal: it keeps the typed bytes and says what to echo.
///
/// Keys: printable bytes are appended (one `•` per UTF-8 character, shown on
/// its first byte); Backspace (DEL or Ctrl-H) removes one whole UTF-8
/// character; Ctrl-U clears the line; Enter (CR or LF) finishes; Ctrl-C, or
/// Ctrl-D on an empty line, cancels; escape sequences (arrow keys) and other
/// control bytes are ignored.
public struct MaskedLineEditor {
    /// What a key did.
    public enum Outcome: Equatable, Sendable {
        /// Keep reading keys.
        case editing
        /// Enter was pressed: the line is complete.
        case finished
        /// Ctrl-C or Ctrl-D on an empty line.
        case cancelled
    }

    /// The bullet shown for each character: U+2022.
    public static let bullet: [UInt8] = Array("•".utf8)
    /// What erases one bullet: backspace, space, backspace.
    public static let erase: [UInt8] = [0x08, 0x20, 0x08]

    private var buffer: [UInt8]
    private let maxBytes: Int
    private let visible: Bool
    /// Whether more than `maxBytes` bytes were typed (the excess is dropped).
    public private(set) var overflowed = false
    private var escapeState = 0 // 0 none, 1 after ESC, 2 inside a CSI/SS3 sequence

    /// - Parameters:
    ///   - maxBytes: the longest line kept, in bytes; the buffer is
    ///     reserved up front so it never reallocates (and leaves no copies).
    ///   - visible: echo the bytes typed instead of bullets (a line that is no secret).
    public init(maxBytes: Int, visible: Bool = false) {
        self.maxBytes = maxBytes
        self.visible = visible
        buffer = []
        buffer.reserveCapacity(maxBytes)
    }

    /// The number of characters (UTF-8 lead bytes) in the line.
    public var characterCount: Int { buffer.reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) } }

    /// What the terminal shows of the line: a bullet per character, or the line itself when visible.
    public var shown: [UInt8] {
        visible ? buffer : Array(repeating: MaskedLineEditor.bullet, count: characterCount).flatMap { $0 }
    }

    /// Handles one input byte.
    /// - Parameters:
    ///   - byte: the next byte read from the terminal.
    ///   - echo: receives the bytes to write back to the terminal.
    /// - Returns: whether the line goes on, is finished or was cancelled.
    public mutating func feed(_ byte: UInt8, echo: inout [UInt8]) -> Outcome {
        switch escapeState {
        case 1:
            escapeState = (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "O")) ? 2 : 0
            return .editing
        case 2:
            if (0x40...0x7E).contains(byte) { escapeState = 0 }
            return .editing
        default:
            break
        }
        switch byte {
        case 0x0D, 0x0A:
            return .finished
        case 0x03:
            return .cancelled
        case 0x04:
            return buffer.isEmpty ? .cancelled : .editing
        case 0x1B:
            escapeState = 1
        case 0x7F, 0x08:
            guard !buffer.isEmpty else { break }
            while let last = buffer.last, last & 0xC0 == 0x80 { buffer.removeLast() }
            if !buffer.isEmpty { buffer.removeLast() }
            echo += MaskedLineEditor.erase
        case 0x15:
            for _ in 0..<characterCount { echo += MaskedLineEditor.erase }
            buffer.wipe()
            buffer.removeAll(keepingCapacity: true)
        case 0..<0x20:
            break
        default:
            guard buffer.count < maxBytes else {
                overflowed = true
                break
            }
            buffer.append(byte)
            if visible {
                echo.append(byte)
            } else if byte & 0xC0 != 0x80 {
                echo += MaskedLineEditor.bullet
            }
        }
        return .editing
    }

    /// Moves the line into ``SecretBytes`` and wipes the editor's copy.
    public mutating func take() -> SecretBytes {
        let secret = SecretBytes(buffer)
        buffer.wipe()
        buffer.removeAll(keepingCapacity: true)
        return secret
    }
}

/// The controlling terminal (`/dev/tty`): masked prompts in raw mode
/// (termios), the terminal restored on return, on Ctrl-C, and on SIGTERM,
/// SIGHUP or SIGINT from elsewhere while the prompt is up.
///
/// Ctrl-Z (or SIGTSTP) restores the terminal and suspends; on resume
/// (SIGCONT, also after a SIGSTOP that could not be caught) the prompt's raw
/// mode is set again, so nothing typed after `fg` is echoed or
/// line-buffered by a terminal the shell left in cooked mode.
public final class ControllingTerminal: SecretPrompter {
    private let path: String

    /// - Parameter path: the terminal device; `/dev/tty` is the controlling terminal.
    public init(path: String = "/dev/tty") { self.path = path }

    /// Opens the terminal, asks, restores the terminal.
    /// - Throws: ``PromptError``; `.noTerminal` at once when `path` cannot be opened.
    public func readSecret(prompt: String, maxBytes: Int) throws(PromptError) -> SecretBytes {
        try read(prompt: prompt, maxBytes: maxBytes, visible: false)
    }

    /// As ``readSecret(prompt:maxBytes:)``, echoing what is typed.
    public func readLine(prompt: String, maxBytes: Int) throws(PromptError) -> String {
        try read(prompt: prompt, maxBytes: maxBytes, visible: true).unsafeString ?? ""
    }

    private func read(prompt: String, maxBytes: Int, visible: Bool) throws(PromptError) -> SecretBytes {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .noTerminal }
        defer { close(fd) }
        var saved = termios()
        guard tcgetattr(fd, &saved) == 0 else { throw .noTerminal }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        raw.c_iflag &= ~tcflag_t(ICRNL | INLCR | IXON)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        TerminalRestore.install(fd: fd, saved: saved, raw: raw)
        defer { TerminalRestore.uninstall() }
        _ = tcsetattr(fd, TCSAFLUSH, &raw)
        defer { _ = tcsetattr(fd, TCSADRAIN, &saved) }

        writeAll(fd, Array(prompt.utf8))
        var editor = MaskedLineEditor(maxBytes: maxBytes, visible: visible)
        var byte: UInt8 = 0
        var echo: [UInt8] = []
        while true {
            let n = Glibc.read(fd, &byte, 1)
            let readError = n < 0 ? errno : 0
            // Ctrl-Z (ISIG is off in raw mode): suspend like the shell's
            // job control would, with the terminal restored meanwhile.
            let ctrlZ = n == 1 && byte == 0x1A
            if ctrlZ {
                byte = 0
                TerminalRestore.suspend()
            }
            if TerminalRestore.suspended != 0 {
                // Back from a suspension, on a new line: the prompt again.
                TerminalRestore.suspended = 0
                writeAll(fd, Array(prompt.utf8) + editor.shown)
            }
            if ctrlZ || readError == EINTR { continue }
            // End of input or a read error (the terminal hung up): give up rather than use half a line.
            let outcome: MaskedLineEditor.Outcome = n == 1 ? editor.feed(byte, echo: &echo) : .cancelled
            byte = 0
            if !echo.isEmpty {
                writeAll(fd, echo)
                echo.removeAll(keepingCapacity: true)
            }
            switch outcome {
            case .editing:
                continue
            case .finished:
                writeAll(fd, [0x0D, 0x0A])
                let secret = editor.take()
                if editor.overflowed { throw .tooLong(maxBytes: maxBytes) }
                return secret
            case .cancelled:
                writeAll(fd, [0x0D, 0x0A])
                _ = editor.take()
                throw .interrupted
            }
        }
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        FileDescriptorIO.writeAll(bytes, to: fd)
    }
}

/// Restores the terminal when a signal ends or suspends the process during
/// a prompt, and sets the prompt's raw mode again on resume. Only
/// async-signal-safe calls run in the handlers (`tcsetattr`, `write`,
/// `signal`, `raise`, `sigprocmask`).
private enum TerminalRestore {
    nonisolated(unsafe) static var fd: Int32 = -1
    nonisolated(unsafe) static var saved = termios()
    nonisolated(unsafe) static var raw = termios()
    nonisolated(unsafe) static var previous: [Int32: sigaction] = [:]
    /// Set to 1 by ``suspend()``: the prompt is to be shown again.
    nonisolated(unsafe) static var suspended: sig_atomic_t = 0
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Restores the terminal, stops the process (SIGTSTP at its default
    /// action), and once continued puts the prompt's raw mode back.
    /// Called from the SIGTSTP handler and for a typed Ctrl-Z.
    static func suspend() {
        guard fd >= 0 else { return }
        _ = tcsetattr(fd, TCSANOW, &saved)
        var newline: (UInt8, UInt8) = (0x0D, 0x0A)
        _ = Glibc.write(fd, &newline, 2)
        var stop = sigaction()
        stop.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&stop.sa_mask)
        var handler = sigaction()
        sigaction(SIGTSTP, &stop, &handler)
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGTSTP)
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
        // Stops here; returns once continued (or at once in an orphaned
        // process group, where the kernel does not stop it).
        raise(SIGTSTP)
        sigaction(SIGTSTP, &handler, nil)
        _ = tcsetattr(fd, TCSANOW, &raw)
        suspended = 1
    }

    static func install(fd: Int32, saved: termios, raw: termios) {
        TerminalRestore.saved = saved
        TerminalRestore.raw = raw
        TerminalRestore.fd = fd
        var stop = sigaction()
        stop.__sigaction_handler.sa_handler = { _ in TerminalRestore.suspend() }
        sigemptyset(&stop.sa_mask)
        var oldStop = sigaction()
        sigaction(SIGTSTP, &stop, &oldStop)
        previous[SIGTSTP] = oldStop
        // After a stop that could not be caught (SIGSTOP), or a shell that
        // reset the terminal while the job was stopped: raw mode again.
        var resume = sigaction()
        resume.__sigaction_handler.sa_handler = { _ in
            if TerminalRestore.fd >= 0 { _ = tcsetattr(TerminalRestore.fd, TCSANOW, &TerminalRestore.raw) }
        }
        sigemptyset(&resume.sa_mask)
        resume.sa_flags = SA_RESTART
        var oldResume = sigaction()
        sigaction(SIGCONT, &resume, &oldResume)
        previous[SIGCONT] = oldResume
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                if TerminalRestore.fd >= 0 {
                    _ = tcsetattr(TerminalRestore.fd, TCSANOW, &TerminalRestore.saved)
                    var newline: (UInt8, UInt8) = (0x0D, 0x0A)
                    _ = Glibc.write(TerminalRestore.fd, &newline, 2)
                }
                Glibc.signal(signal, SIG_DFL)
                raise(signal)
            }
            sigemptyset(&action.sa_mask)
            var old = sigaction()
            sigaction(signal, &action, &old)
            previous[signal] = old
        }
    }

    static func uninstall() {
        for (signal, var old) in previous { sigaction(signal, &old, nil) }
        previous = [:]
        fd = -1
    }
}

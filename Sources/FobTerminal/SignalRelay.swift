import FobSystem
@preconcurrency import Glibc

// State the signal handlers read. Written only by the main thread while the
// handlers are not installed (or before they can run), then left alone.
nonisolated(unsafe) private var relayWriteFD: Int32 = -1
nonisolated(unsafe) private var emergencyBytes: UnsafeMutableBufferPointer<UInt8>? = nil
nonisolated(unsafe) private var emergencyTermios: UnsafeMutablePointer<termios>? = nil
nonisolated(unsafe) private var emergencyArmed: sig_atomic_t = 0

/// Writes the signal number into the self-pipe; `write` is async-signal-safe.
private func relaySignal(_ signal: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(relayWriteFD, &byte, 1)
    errno = saved
}

/// Puts the terminal back (saved termios, escape sequences) with
/// async-signal-safe calls only: used for crashes and `exit` from elsewhere.
private func emergencyRestore() {
    guard emergencyArmed != 0 else { return }
    emergencyArmed = 0
    if let t = emergencyTermios { _ = tcsetattr(0, TCSANOW, t) }
    if let b = emergencyBytes, let base = b.baseAddress { _ = write(1, base, b.count) }
}

/// A crash (trap, abort, bad access): restore the terminal, then die of the
/// same signal with the default action.
private func fatalSignal(_ signal: Int32) {
    emergencyRestore()
    var action = sigaction()
    action.__sigaction_handler.sa_handler = SIG_DFL
    sigemptyset(&action.sa_mask)
    _ = sigaction(signal, &action, nil)
    _ = raise(signal)
}

private func atExitRestore() { emergencyRestore() }

/// What a relayed signal asks the input loop to do.
public enum TerminalSignal: Equatable, Sendable {
    /// SIGINT, SIGTERM or SIGHUP: restore the terminal and end with `128 + number`.
    case terminate(Int32)
    /// SIGTSTP: restore the terminal and stop; redraw after SIGCONT.
    case suspend
    /// SIGCONT: the process was continued; redraw everything.
    case resume
    /// SIGWINCH: the terminal changed size.
    case resize
}

/// Turns asynchronous signals into bytes on a pipe the input loop polls
/// (the self-pipe trick), and keeps a crash-safe copy of how to restore the
/// terminal.
final class SignalRelay {
    /// The read end, for `poll`.
    let readFD: Int32
    private let writeFD: Int32
    static let relayed: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGTSTP, SIGCONT, SIGWINCH]
    static let fatal: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT]
    private var atExitRegistered = false

    /// Creates the pipe (both ends non-blocking, close-on-exec).
    /// - Throws: `TerminalError.system` if `pipe2` fails.
    init() throws(TerminalError) {
        // Non-blocking and close-on-exec from the start (pipe2).
        guard let fds = CloseOnExec.pipe(nonBlocking: true) else { throw .system("pipe2", errno) }
        readFD = fds.read
        writeFD = fds.write
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Installs the handlers. Call before `newterm`, so ncurses keeps ours
    /// (it installs its own only where the disposition is the default).
    func install() {
        relayWriteFD = writeFD
        for s in Self.relayed { Self.setHandler(s, relaySignal) }
        for s in Self.fatal { Self.setHandler(s, fatalSignal) }
        // A parent may have left them blocked (a mask is inherited across
        // exec); blocked, they would never reach the handlers.
        var set = sigset_t()
        sigemptyset(&set)
        for s in Self.relayed + Self.fatal { sigaddset(&set, s) }
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        if !atExitRegistered {
            atExitRegistered = true
            atexit(atExitRestore)
        }
    }

    /// Puts every handler back to the default.
    func uninstall() {
        for s in Self.relayed + Self.fatal { Self.setDefault(s) }
    }

    /// Keeps `termios` and the bytes that leave full-screen mode so a crash
    /// or a stray `exit` can restore the terminal; `disarm` when restored.
    func arm(termios saved: termios, restoreSequence: [UInt8]) {
        emergencyArmed = 0
        if emergencyTermios == nil { emergencyTermios = .allocate(capacity: 1) }
        emergencyTermios!.pointee = saved
        emergencyBytes?.deallocate()
        let bytes = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: restoreSequence.count)
        _ = bytes.initialize(from: restoreSequence)
        emergencyBytes = bytes
        emergencyArmed = 1
    }

    /// The terminal is in its normal state again: crashes need not touch it.
    func disarm() { emergencyArmed = 0 }

    /// Reads every pending signal, oldest first, without blocking.
    func drain() -> [TerminalSignal] {
        var out: [TerminalSignal] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let n = read(readFD, &buffer, buffer.count)
            if n <= 0 { break }
            for b in buffer[0..<n] {
                let s = Int32(b)
                let event: TerminalSignal
                switch s {
                case SIGTSTP: event = .suspend
                case SIGCONT: event = .resume
                case SIGWINCH: event = .resize
                default: event = .terminate(s)
                }
                // Many SIGWINCHes in a row are one resize.
                if event == .resize, out.last == .resize { continue }
                out.append(event)
            }
        }
        return out
    }

    /// Stops this process as SIGTSTP's default action would; returns after SIGCONT.
    func stopSelf() {
        Self.setDefault(SIGTSTP)
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTSTP)
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        _ = raise(SIGTSTP)
        Self.setHandler(SIGTSTP, relaySignal)
    }

    private static func setHandler(_ s: Int32, _ handler: @escaping @convention(c) (Int32) -> Void) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = handler
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        _ = sigaction(s, &action, nil)
    }

    private static func setDefault(_ s: Int32) {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = SIG_DFL
        sigemptyset(&action.sa_mask)
        _ = sigaction(s, &action, nil)
    }
}

/// Why the terminal UI could not start or continue.
public enum TerminalError: Error, Equatable, CustomStringConvertible {
    /// Standard input or output is not a terminal.
    case notATerminal
    /// ncurses could not set up the terminal (unknown `TERM`, for example).
    case cannotInitialise(String)
    /// A system call failed: its name and `errno`.
    case system(String, Int32)

    /// One line naming the cause.
    public var description: String {
        switch self {
        case .notATerminal: return "the terminal UI needs a terminal on standard input and output"
        case .cannotInitialise(let term): return "cannot set up the terminal (TERM=\(term))"
        case .system(let call, let code): return "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}

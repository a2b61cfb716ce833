@preconcurrency import CNcurses
import FobSystem
@preconcurrency import Glibc

/// The ncurses screen: set up in `init`, put back by `close()` (also on
/// signals, crashes and `exit`), with one polling input loop step in
/// ``poll(timeout:)`` and drawing in ``present(_:)``.
///
/// `setlocale(LC_ALL, "")` runs before `newterm`; the terminal gets cbreak,
/// noecho, keypad and nonl modes, no XON/XOFF (Ctrl-S is a key), a 25 ms `ESCDELAY` and bracketed paste
/// (`ESC [?2004h`, turned off again on every exit).
final class TerminalScreen {
    /// Turns bracketed paste on and off (xterm control sequences).
    static let pasteOn: [UInt8] = Array("\u{1B}[?2004h".utf8)
    static let pasteOff: [UInt8] = Array("\u{1B}[?2004l".utf8)

    private let relay: SignalRelay
    private var screen: OpaquePointer?
    private var savedTermios = termios()
    private(set) var theme: Theme
    let glyphs: Glyphs
    private var shown: Canvas?
    private var active = false
    private let decoderLimit = 4096
    private var emptyReads = 0

    /// The terminal's size in cells.
    var size: (rows: Int, columns: Int) { (Int(fob_lines()), Int(fob_cols())) }

    /// Starts full-screen mode on the controlling terminal (standard input and output).
    /// - Parameter environment: for `NO_COLOR` and `TERM`.
    /// - Throws: `TerminalError.notATerminal` when stdin or stdout is not a
    ///   terminal, `.cannotInitialise` when ncurses cannot set it up.
    init(environment: [String: String]) throws(TerminalError) {
        guard isatty(0) == 1, isatty(1) == 1 else { throw .notATerminal }
        setlocale(LC_ALL, "")
        glyphs = Glyphs.current(term: environment["TERM"])
        relay = try SignalRelay()
        guard tcgetattr(0, &savedTermios) == 0 else { throw .system("tcgetattr", errno) }
        relay.install()
        guard let s = newterm(nil, stdout, stdin) else {
            relay.uninstall()
            throw .cannotInitialise(environment["TERM"] ?? "")
        }
        screen = s
        set_term(s)
        theme = Theme(environment: environment)
        relay.arm(termios: savedTermios, restoreSequence: Self.restoreSequence())
        enterProgramMode()
        active = true
    }

    deinit { close() }

    /// Drops every key typed and not yet read (`flushinp`, which empties the
    /// terminal's input queue too).
    func dropTypeahead() {
        _ = flushinp()
    }

    /// Leaves full-screen mode and puts the terminal back as it was; safe to call twice.
    func close() {
        guard active else { return }
        active = false
        leaveProgramMode()
        relay.disarm()
        relay.uninstall()
        if let s = screen {
            delscreen(s)
            screen = nil
        }
    }

    /// Waits up to `timeout` milliseconds for a key or a signal.
    /// - Returns: the signals and raw keys that arrived (both may be empty on a timeout).
    func poll(timeout: Int32) -> (signals: [TerminalSignal], input: [RawInput]) {
        var fds = [
            pollfd(fd: 0, events: Int16(POLLIN), revents: 0),
            pollfd(fd: relay.readFD, events: Int16(POLLIN), revents: 0),
        ]
        let n = Glibc.poll(&fds, 2, timeout)
        var signals: [TerminalSignal] = []
        if n > 0, fds[1].revents != 0 { signals = relay.drain() }
        var input: [RawInput] = []
        if n > 0, fds[0].revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
            // The terminal went away: behave as on SIGHUP.
            signals.append(.terminate(SIGHUP))
        } else if n > 0, fds[0].revents & Int16(POLLIN) != 0 {
            input = readKeys()
            // Readable yet nothing to read, again and again: end of file.
            emptyReads = input.isEmpty ? emptyReads + 1 : 0
            if emptyReads > 100 { signals.append(.terminate(SIGHUP)) }
        }
        return (signals, input)
    }

    /// Every key ncurses has ready, without waiting (beyond `ESCDELAY` after an Esc).
    func readKeys() -> [RawInput] {
        var out: [RawInput] = []
        var c: wint_t = 0
        while out.count < decoderLimit {
            let r = wget_wch(fob_stdscr(), &c)
            if r == KEY_CODE_YES, Int32(c) == KEY_MOUSE {
                var row: Int32 = 0
                var column: Int32 = 0
                var button: Int32 = 0
                if fob_read_mouse(&row, &column, &button) == 0 {
                    out.append(.mouse(row: Int(row), column: Int(column), button: Int(button)))
                }
            } else if r == KEY_CODE_YES {
                out.append(.function(Int32(c)))
            } else if r == OK {
                out.append(.character(UInt32(c)))
            } else {
                break
            }
        }
        return out
    }

    /// Follows a size change: asks the kernel for the size and resizes ncurses's screens.
    func resize() {
        var rows: Int32 = 0
        var cols: Int32 = 0
        if fob_winsize(1, &rows, &cols) == 0, rows > 0, cols > 0 {
            _ = resizeterm(rows, cols)
        }
        shown = nil
    }

    /// Restores the terminal and stops the process (SIGTSTP); after `fg`,
    /// takes the terminal back and forgets what was on screen.
    func suspend() {
        leaveProgramMode()
        relay.disarm()
        relay.stopSelf()
        relay.arm(termios: savedTermios, restoreSequence: Self.restoreSequence())
        enterProgramMode()
        resize()
    }

    /// Forgets what is on screen so the next ``present(_:)`` draws everything.
    func invalidate() {
        shown = nil
        _ = clearok(fob_curscr(), true)
    }

    /// Draws the rows of `canvas` that differ from what is on screen.
    func present(_ canvas: Canvas) {
        let win = fob_stdscr()
        let old = shown.flatMap { ($0.rows == canvas.rows && $0.columns == canvas.columns) ? $0 : nil }
        if old == nil { _ = werase(win) }
        var cc = cchar_t()
        var wide: [wchar_t] = Array(repeating: 0, count: 6)
        for row in 0..<canvas.rows {
            if let old, (0..<canvas.columns).allSatisfy({ old[row, $0] == canvas[row, $0] }) { continue }
            for col in 0..<canvas.columns {
                let cell = canvas[row, col]
                guard let text = cell.text else { continue }
                var i = 0
                for scalar in text.unicodeScalars where i < 5 {
                    wide[i] = wchar_t(bitPattern: scalar.value)
                    i += 1
                }
                wide[i] = 0
                _ = setcchar(&cc, wide, theme.attributes(for: cell.role), theme.pair(for: cell.role), nil)
                _ = mvwadd_wch(win, Int32(row), Int32(col), &cc)
            }
        }
        if let cursor = canvas.cursor {
            _ = curs_set(1)
            _ = wmove(win, Int32(cursor.row), Int32(cursor.column))
        } else {
            _ = curs_set(0)
        }
        _ = wnoutrefresh(win)
        _ = doupdate()
        shown = canvas
    }

    private func enterProgramMode() {
        _ = cbreak()
        _ = noecho()
        _ = nonl()
        _ = intrflush(fob_stdscr(), false)
        _ = keypad(fob_stdscr(), true)
        _ = nodelay(fob_stdscr(), true)
        _ = set_escdelay(25)
        // The mouse: a click selects, the wheel scrolls; reported at once (no click timing).
        _ = mouseinterval(0)
        _ = mousemask(fob_mouse_events(), nil)
        // Ctrl-S saves in the editor: turn off XON/XOFF flow control, which
        // would otherwise stop the output on Ctrl-S (savedTermios puts it back).
        var modes = termios()
        if tcgetattr(0, &modes) == 0 {
            modes.c_iflag &= ~tcflag_t(IXON)
            _ = tcsetattr(0, TCSANOW, &modes)
        }
        _ = curs_set(0)
        _ = refresh()
        writeAll(Self.pasteOn)
        shown = nil
    }

    private func leaveProgramMode() {
        writeAll(Self.pasteOff)
        _ = mousemask(0, nil)
        _ = curs_set(1)
        _ = endwin()
        _ = tcsetattr(0, TCSANOW, &savedTermios)
        // endwin leaves the alternate screen through rmcup; say it again for
        // terminals whose terminfo entry has none, and show the cursor.
        writeAll(Array("\u{1B}[?25h".utf8))
    }

    private func writeAll(_ bytes: [UInt8]) {
        _ = fflush(stdout)
        FileDescriptorIO.writeAll(bytes, to: 1)
    }

    /// What a crash handler writes: bracketed paste off, attributes reset,
    /// keypad-transmit mode off (terminfo `rmkx`, else `ESC [ ? 1 l ESC >`:
    /// ncurses turned it on for `keypad`, and left on it makes the shell's
    /// arrow keys send the wrong codes), the terminfo `rmcup` (leave the
    /// alternate screen), cursor shown.
    private static func restoreSequence() -> [UInt8] {
        // Mouse reporting off too (the modes ncurses turns on for mousemask).
        var bytes = pasteOff + Array("\u{1B}[0m\u{1B}[?1006l\u{1B}[?1000l".utf8)
        if let rmkx = tigetstr("rmkx"), Int(bitPattern: rmkx) > 0 {
            bytes += Array(String(cString: rmkx).utf8)
        } else {
            bytes += Array("\u{1B}[?1l\u{1B}>".utf8)
        }
        if let rmcup = tigetstr("rmcup"), Int(bitPattern: rmcup) > 0 {
            bytes += Array(String(cString: rmcup).utf8)
        } else {
            bytes += Array("\u{1B}[?1049l".utf8)
        }
        bytes += Array("\u{1B}[?25h\r\n".utf8)
        return bytes
    }
}

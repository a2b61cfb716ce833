import FoundationEssentials
@preconcurrency import Glibc

/// A conversation with `pinentry`, the program of the Assuan protocol that
/// gpg and rbw use to ask a person (its commands as in pinentry's manual:
/// `SETTITLE`, `SETDESC`, `SETPROMPT`, `SETERROR`, `SETOK`, `SETCANCEL`,
/// `SETNOTOK`, `SETTIMEOUT`, `GETPIN`, `CONFIRM`, `BYE`; each answered by a
/// line `OK …` or `ERR CODE …`; a PIN comes back as a `D` line with `%XX`
/// escapes). The pipes are this object's; the process is started in a
/// session of its own and reaped by its owner: ``end()``, or by
/// ``PinentryConversation/pid``.
public final class PinentryConversation: @unchecked Sendable {
    /// The pinentry process.
    public let pid: pid_t
    private let input: Int32
    private let output: Int32
    private var closed = false

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
    }

    /// The pinentry program: `FOB_PINENTRY` (a name looked up on `PATH`, or a
    /// path), else `pinentry` on `PATH`; `nil` when there is none.
    /// - Parameter environment: where `FOB_PINENTRY` and `PATH` are read.
    public static func program(_ environment: [String: String]) -> String? {
        if let named = environment["FOB_PINENTRY"], !named.isEmpty {
            return ExecutableLookup.find(named, environment: environment)
        }
        return ExecutableLookup.find("pinentry", environment: environment)
    }

    /// Starts pinentry with pipes to its standard input and from its
    /// standard output (standard error to /dev/null), in a new session.
    /// - Parameters:
    ///   - program: the pinentry executable.
    ///   - environment: its environment (`DISPLAY`, `WAYLAND_DISPLAY` …; never a secret).
    /// - Returns: the conversation, or `nil` when pinentry cannot start.
    public static func start(program: String, environment: [String: String]) -> PinentryConversation? {
        guard let toChild = try? ChildProcessSpawner.makePipe() else { return nil }
        guard let fromChild = try? ChildProcessSpawner.makePipe() else {
            close(toChild.read)
            close(toChild.write)
            return nil
        }
        let pid = try? ChildProcessSpawner.spawn(
            executable: program, arguments: [], environment: environment,
            standardInput: .descriptor(toChild.read), standardOutput: .descriptor(fromChild.write),
            standardError: .null, newSession: true)
        close(toChild.read)
        close(fromChild.write)
        guard let pid else {
            close(toChild.write)
            close(fromChild.read)
            return nil
        }
        return PinentryConversation(pid: pid, input: toChild.write, output: fromChild.read)
    }

    /// Closes both pipes (pinentry then reads the end of its input); once.
    public func closePipes() {
        guard !closed else { return }
        closed = true
        close(input)
        close(output)
    }

    deinit { closePipes() }

    /// Ends the conversation and the process: `BYE`, both pipes closed,
    /// SIGTERM for a pinentry still running half a second later, and the
    /// child reaped. For an owner that has no other use for the pid after.
    public func end() {
        _ = send("BYE")
        closePipes()
        var status: Int32 = 0
        for _ in 0..<50 {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid || (reaped < 0 && errno != EINTR) { return }
            usleep(10_000)
        }
        kill(pid, SIGTERM)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Sends one command line.
    /// - Returns: whether it was written whole.
    public func send(_ command: String) -> Bool {
        FileDescriptorIO.writeAll(Array((command + "\n").utf8), to: input)
    }

    /// Sends a command and reads its answer.
    /// - Returns: whether pinentry answered `OK`.
    public func command(_ command: String, until deadline: Double? = nil) -> Bool {
        send(command) && nextLine(until: deadline)?.hasPrefix("OK") == true
    }

    /// The next line without its newline (never used for a PIN), or `nil`
    /// at the end, past `deadline` (``monotonicSeconds()``), or past 4,096 bytes.
    public func nextLine(until deadline: Double? = nil) -> String? {
        var line = readLine(until: deadline)
        defer { line?.wipe() }
        return line.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The answer to `GETPIN` (sent here): the PIN of a `D` line followed
    /// by `OK`, `%XX`-decoded into wiped memory; `nil` on `ERR` (cancelled)
    /// or the end.
    public func pin() -> SecretBytes? {
        guard send("GETPIN"), var line = readLine(until: nil) else { return nil }
        defer { line.wipe() }
        guard line.starts(with: Array("D ".utf8)) else { return nil }
        // An Assuan line escapes `%`, CR and LF; a stray `%` stands for itself.
        var decoded = PercentDecoding.decode(line[2...], malformed: .literal) ?? []
        defer { decoded.wipe() }
        guard nextLine()?.hasPrefix("OK") == true else { return nil }
        return SecretBytes(decoded)
    }

    /// Which button of a `CONFIRM` dialog was pressed.
    public enum Button: Sendable, Equatable {
        /// The OK button (`SETOK`): pinentry answers `OK`.
        case ok
        /// The third button (`SETNOTOK`): `ERR` with code 114, "not confirmed".
        case notOK
        /// Cancel (`SETCANCEL`), or the window closed: `ERR` with code 99, "cancelled".
        case cancel
        /// No button: the dialog's own timeout (`SETTIMEOUT`) passed, `ERR` with code 62, "timeout".
        case timedOut
    }

    /// Sends `CONFIRM` and reads which button was pressed.
    /// - Parameter deadline: when to stop waiting (``monotonicSeconds()``).
    /// - Returns: the button; `nil` for no answer by `deadline`, the end,
    ///   or another error (pinentry's own timeout, no display).
    public func confirm(until deadline: Double) -> Button? {
        guard send("CONFIRM"), let line = nextLine(until: deadline) else { return nil }
        return PinentryConversation.button(answer: line)
    }

    /// The button an answer to `CONFIRM` means: `OK`, or an `ERR` whose
    /// code's low 16 bits (the libgpg-error code; the source is in the high
    /// bits) are 114 (not confirmed), 99 (cancelled) or 62 (timeout); `nil` for anything else.
    public static func button(answer line: String) -> Button? {
        if line == "OK" || line.hasPrefix("OK ") { return .ok }
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0] == "ERR", let code = UInt32(parts[1]) else { return nil }
        switch code & 0xFFFF {
        case 114: return .notOK
        case 99: return .cancel
        case 62: return .timedOut
        default: return nil
        }
    }

    /// `text` as an Assuan parameter: `%`, CR and LF written `%25`, `%0D`,
    /// `%0A`, and cut (at a whole character) so the line stays under
    /// Assuan's 1,000 bytes.
    public static func escaped(_ text: String, limit: Int = 900) -> String {
        var out = ""
        var bytes = 0
        for character in text {
            let piece: String
            switch character {
            case "%": piece = "%25"
            case "\r": piece = "%0D"
            case "\n", "\r\n": piece = "%0A"
            default: piece = String(character)
            }
            bytes += piece.utf8.count
            guard bytes <= limit else { break }
            out += piece
        }
        return out
    }

    /// Seconds of `CLOCK_MONOTONIC`, the clock of every deadline here.
    public static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    private func readLine(until deadline: Double?) -> [UInt8]? {
        var line: [UInt8] = []
        // Room for the longest line at once: no reallocation leaves a copy of a PIN behind.
        line.reserveCapacity(4097)
        var byte: UInt8 = 0
        while true {
            if let deadline {
                let left = deadline - PinentryConversation.monotonicSeconds()
                guard left > 0 else { return nil }
                var p = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, Int32(min(left, 1) * 1000) + 1)
                if ready < 0 && errno == EINTR { continue }
                guard ready >= 0 else { return nil }
                if ready == 0 { continue }
            }
            let n = read(output, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return line }
            line.append(byte)
            guard line.count <= 4096 else { return nil }
        }
    }
}

import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// Asks the master password with `pinentry`, the program of the Assuan
/// protocol that gpg and rbw use (its commands as in pinentry's manual:
/// `SETTITLE`, `SETDESC`, `SETPROMPT`, `SETERROR`, `GETPIN`, `BYE`; the
/// PIN comes back as `D` with `%XX` escapes), on a thread of its own so
/// the bus keeps answering while the user types. Each password read goes to
/// `unlock`; a wrong one is asked again (3 tries in all).
final class PinentryUnlock: @unchecked Sendable {
    /// The pinentry process.
    let pid: pid_t
    private let input: Int32
    private let output: Int32

    /// Takes the write end of the pipe to pinentry and the read end of the pipe from it.
    private init(pid: pid_t, toChild: (read: Int32, write: Int32), fromChild: (read: Int32, write: Int32)) {
        self.pid = pid
        input = toChild.write
        output = fromChild.read
    }

    /// The pinentry program: `FOB_PINENTRY`, else `pinentry` on `PATH`; `nil` when none.
    static func program(_ environment: [String: String]) -> String? {
        if let named = environment["FOB_PINENTRY"], !named.isEmpty {
            return ExecutableLookup.find(named, environment: environment)
        }
        return ExecutableLookup.find("pinentry", environment: environment)
    }

    /// Starts pinentry and its conversation.
    /// - Parameters:
    ///   - program: the pinentry executable.
    ///   - environment: pinentry's environment (`DISPLAY`, `WAYLAND_DISPLAY` …; never a secret).
    ///   - unlock: tries a password; `true` when it unlocked the vault.
    /// - Returns: the running conversation, or `nil` when pinentry cannot start.
    static func start(
        program: String, environment: [String: String], unlock: @escaping @Sendable (SecretBytes) -> Bool
    ) -> PinentryUnlock? {
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
        let conversation = PinentryUnlock(pid: pid, toChild: toChild, fromChild: fromChild)
        DetachedThread.start { conversation.converse(unlock) }
        return conversation
    }

    /// Ends pinentry (a dismissed or expired prompt) with SIGTERM, unless
    /// it has ended and been reaped: its pid may then name another process.
    /// - Returns: whether the signal was sent.
    @discardableResult
    func cancel() -> Bool {
        state.withLock { state in
            guard !state.reaped else { return false }
            return kill(pid, SIGTERM) == 0
        }
    }

    /// Whether pinentry was reaped, and whether the conversation ended
    /// without a password that unlocked the vault (the user cancelled,
    /// three tries failed, or pinentry could not run: no display, no
    /// terminal; its prompts are then dismissed). Changed together under
    /// the lock that ``cancel()`` takes, so no signal follows the reaping.
    private let state = Mutex((reaped: false, gaveUp: false))
    /// Whether the conversation ended without unlocking (see above).
    var gaveUp: Bool { state.withLock { $0.gaveUp } }
    /// Whether pinentry has ended and was reaped.
    var isReaped: Bool { state.withLock { $0.reaped } }

    private func converse(_ unlock: @Sendable (SecretBytes) -> Bool) {
        var unlocked = false
        defer {
            close(input)
            close(output)
            // Waits for the end without reaping (the pid stays this child's
            // zombie), then reaps under the lock: ``cancel()`` either signals
            // before that or sees `reaped`.
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
            let ended = unlocked
            state.withLock { state in
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                state.reaped = true
                if !ended { state.gaveUp = true }
            }
        }
        var reader = LineReader(fd: output)
        guard reader.next()?.hasPrefix("OK") == true else { return }
        for command in [
            "SETTITLE Fob", "SETDESC A program asks for secrets kept in your Fob vault; unlock it.",
            "SETPROMPT Master password:",
        ] {
            guard send(command), reader.next()?.hasPrefix("OK") == true else { return }
        }
        for attempt in 0..<3 {
            if attempt > 0, !(send("SETERROR Wrong password") && reader.next()?.hasPrefix("OK") == true) { return }
            guard send("GETPIN"), let password = reader.pin() else { return }
            if unlock(password) {
                unlocked = true
                break
            }
        }
        _ = send("BYE")
    }

    private func send(_ command: String) -> Bool {
        let bytes = Array((command + "\n").utf8)
        return bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) == $0.count }
    }
}

/// Lines from pinentry, read byte by byte (pinentry answers one line at a time).
private struct LineReader {
    let fd: Int32

    /// The next line without its newline, or `nil` at the end (never used for the PIN).
    mutating func next() -> String? {
        var line = readLine()
        defer { line?.wipe() }
        return line.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The PIN of a `D` line followed by `OK`, `%XX`-decoded into wiped memory; `nil` on `ERR` (cancelled).
    mutating func pin() -> SecretBytes? {
        guard var line = readLine() else { return nil }
        defer { line.wipe() }
        guard line.starts(with: Array("D ".utf8)) else { return nil }
        var decoded: [UInt8] = []
        defer { decoded.wipe() }
        var index = 2
        while index < line.count {
            if line[index] == UInt8(ascii: "%"), index + 2 < line.count,
                let value = UInt8(String(decoding: line[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                decoded.append(value)
                index += 3
            } else {
                decoded.append(line[index])
                index += 1
            }
        }
        guard next()?.hasPrefix("OK") == true else { return nil }
        return SecretBytes(decoded)
    }

    private func readLine() -> [UInt8]? {
        var line: [UInt8] = []
        // Room for the longest line at once: no reallocation leaves a copy of the PIN behind.
        line.reserveCapacity(4097)
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return line }
            line.append(byte)
            guard line.count <= 4096 else { return nil }
        }
    }
}

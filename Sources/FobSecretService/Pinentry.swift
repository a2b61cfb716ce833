import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// Asks the master password with `pinentry` (FobSystem's
/// ``PinentryConversation``: `SETTITLE`, `SETDESC`, `SETPROMPT`,
/// `SETERROR`, `GETPIN`, `BYE`), on a thread of its own so the bus keeps
/// answering while the user types. Each password read goes to `unlock`; a
/// wrong one is asked again (3 tries in all).
final class PinentryUnlock: @unchecked Sendable {
    /// The pinentry process.
    let pid: pid_t
    private let conversation: PinentryConversation

    private init(_ conversation: PinentryConversation) {
        self.conversation = conversation
        pid = conversation.pid
    }

    /// The pinentry program: `FOB_PINENTRY`, else `pinentry` on `PATH`; `nil` when none.
    static func program(_ environment: [String: String]) -> String? {
        PinentryConversation.program(environment)
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
        guard let conversation = PinentryConversation.start(program: program, environment: environment) else {
            return nil
        }
        let running = PinentryUnlock(conversation)
        DetachedThread.start { running.converse(unlock) }
        return running
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
            conversation.closePipes()
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
        guard conversation.nextLine()?.hasPrefix("OK") == true else { return }
        for command in [
            "SETTITLE Fob", "SETDESC A program asks for secrets kept in your Fob vault; unlock it.",
            "SETPROMPT Master password:",
        ] {
            guard conversation.command(command) else { return }
        }
        for attempt in 0..<3 {
            if attempt > 0, !conversation.command("SETERROR Wrong password") { return }
            guard let password = conversation.pin() else { return }
            if unlock(password) {
                unlocked = true
                break
            }
        }
        _ = conversation.send("BYE")
    }
}

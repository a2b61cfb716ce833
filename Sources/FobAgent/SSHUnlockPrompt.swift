import FobSSH
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Asks for the master password when an SSH signature finds the vault
/// locked, through pinentry (`$FOB_PINENTRY`, else `pinentry` on `PATH`): on
/// the requester's own terminal when it has one (Assuan's `OPTION ttyname`,
/// which pinentry-curses and pinentry-tty use), else on the desktop. The
/// dialog names the program, its pid, the key and the destination. The
/// password is read into wiped memory, never through a file, argv or the
/// environment.
public struct SSHUnlockPrompt: Sendable {
    private let environment: [String: String]
    /// How long the question waits for an answer, in seconds.
    public var timeout: Double

    /// - Parameters:
    ///   - environment: the agent's environment (`FOB_PINENTRY`, `PATH`,
    ///     `DISPLAY`, `TERM` …; no secret), which pinentry runs with.
    ///   - timeout: how long to wait for an answer, in seconds.
    public init(environment: [String: String], timeout: Double = 60) {
        self.environment = environment
        self.timeout = timeout
    }

    /// The text of the question.
    public static func description(_ sign: SSHSignContext) -> String {
        let program = sign.requester.map { "\($0.programName) (pid \($0.pid), \($0.executable))" } ?? "A program"
        return displaySafe("\(program) asks the SSH agent for a signature with \(VaultSSHApproval.describe(sign)).")
            + "\n\nThe vault is locked: its master password unlocks it."
    }

    /// Asks; `nil` when pinentry is missing, cannot show anything, or the question was cancelled or timed out.
    public func password(for sign: SSHSignContext) -> SecretBytes? {
        guard let program = PinentryConversation.program(environment),
            let pinentry = PinentryConversation.start(program: program, environment: environment)
        else { return nil }
        defer { SSHUnlockPrompt.end(pinentry) }
        let deadline = PinentryConversation.monotonicSeconds() + timeout
        guard pinentry.nextLine(until: deadline)?.hasPrefix("OK") == true else { return nil }
        var commands: [String] = []
        if let tty = sign.requester?.terminal, tty.hasPrefix("/dev/") {
            commands += ["OPTION ttyname=\(tty)", "OPTION ttytype=\(environment["TERM"] ?? "xterm")"]
        }
        commands += [
            "SETTITLE Fob: unlock the vault to sign",
            "SETDESC " + PinentryConversation.escaped(SSHUnlockPrompt.description(sign)),
            "SETPROMPT Master password:", "SETTIMEOUT \(max(1, Int(timeout)))",
        ]
        for command in commands {
            // An older pinentry may refuse an option: it still asks.
            guard pinentry.send(command), pinentry.nextLine(until: deadline) != nil else { return nil }
        }
        return pinentry.pin()
    }

    /// `BYE`, the pipes closed, SIGTERM for a pinentry still running a moment later, and the child reaped.
    private static func end(_ pinentry: PinentryConversation) {
        _ = pinentry.send("BYE")
        pinentry.closePipes()
        var status: Int32 = 0
        for _ in 0..<50 {
            let reaped = waitpid(pinentry.pid, &status, WNOHANG)
            if reaped == pinentry.pid || (reaped < 0 && errno != EINTR) { return }
            usleep(10_000)
        }
        kill(pinentry.pid, SIGTERM)
        while waitpid(pinentry.pid, &status, 0) < 0 && errno == EINTR {}
    }
}

import FobSSH
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Asks for the master password when an SSH signature finds the vault
/// locked: first on the requester's own controlling terminal, as sudo does
/// (``TerminalPasswordPrompt``: `ssh` run in a terminal asks there); for a
/// requester with no terminal that can be opened, through pinentry
/// (`$FOB_PINENTRY`, else `pinentry` on `PATH`) on the desktop. A question
/// put on the terminal and refused there (an empty line, no answer in time)
/// is not asked again through pinentry. The question names the program,
/// its pid, the key and the destination. The password is read into wiped
/// memory, never through a file, argv or the environment.
public struct SSHUnlockPrompt: Sendable {
    private let environment: [String: String]
    private let terminal = TerminalPasswordPrompt()
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
        request(sign) + "\n\n" + lockedLine
    }

    /// Who asks for which signature, safe to show.
    static func request(_ sign: SSHSignContext) -> String {
        let program = sign.requester.map { "\($0.programName) (pid \($0.pid), \($0.executable))" } ?? "A program"
        return displaySafe("\(program) asks the SSH agent for a signature with \(VaultSSHApproval.describe(sign)).")
    }

    static let lockedLine = "The vault is locked: its master password unlocks it."

    /// The question on the requester's terminal: the description, then the prompt.
    public static func terminalQuestion(_ sign: SSHSignContext) -> String {
        "\nfob: \(request(sign))\n     \(lockedLine)\nfob: master password (an empty line refuses): "
    }

    /// Asks on the requester's terminal, else through pinentry.
    /// - Returns: the password; `nil` when no one could be asked, or the
    ///   question was refused, cancelled or timed out.
    public func password(for sign: SSHSignContext) -> SecretBytes? {
        switch terminal.ask(
            SSHUnlockPrompt.terminalQuestion(sign), terminal: sign.requester?.terminal, timeout: timeout)
        {
        case .password(let typed): return typed
        case .refused: return nil
        case .unreachable: return pinentryPassword(for: sign)
        }
    }

    /// Asks through pinentry; `nil` when pinentry is missing, cannot show
    /// anything, or the question was cancelled or timed out.
    public func pinentryPassword(for sign: SSHSignContext) -> SecretBytes? {
        guard let program = PinentryConversation.program(environment),
            let pinentry = PinentryConversation.start(program: program, environment: environment)
        else { return nil }
        defer { pinentry.end() }
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

}

import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Asks through pinentry (the desktop's dialog, or pinentry-curses) when
/// the requester has no terminal of its own to be asked on: a Secret
/// Service client, a program started by the desktop or a service. The
/// dialog names the program, its pid, its parents (shortened), the item
/// and the channel. A `CONFIRM` dialog has three buttons (OK, `SETOK`; the
/// third button, `SETNOTOK`; Cancel, `SETCANCEL`), so the five answers the
/// terminal channels offer take up to three dialogs, each with Deny:
///
/// | dialog | OK | third button | Cancel, or the window closed |
/// |---|---|---|---|
/// | 1 | "Allow until lock": ``AccessAnswer/untilLock`` | "Other answers…": dialog 2 | "Deny" |
/// | 2 | "Allow once": ``AccessAnswer/once`` | "Allow for longer…": dialog 3 | "Deny" |
/// | 3 | "Allow for 15 minutes": ``AccessAnswer/lease(seconds:)`` | "Always allow for this item": ``AccessAnswer/always`` | "Deny" |
///
/// The lease is ``leaseSeconds`` long, as the terminal's `[m]` answer; an
/// "always" is written into the item's rule.
///
/// One pinentry runs at a time: a second question waits for the first
/// within its own timeout. No pinentry program (`$FOB_PINENTRY`, else
/// `pinentry` on `PATH`), one that cannot show anything (no display), or no
/// answer in time → `nil`, which the agent answers as
/// errSecInteractionNotAllowed. The rate limit per program is the
/// ``AccessGate``'s, as for every channel.
public final class PinentryAsker: AccessAsker, @unchecked Sendable {
    private let environment: [String: String]
    private let turn = Condition()
    private var busy = false
    /// The length of the "Allow for N minutes" lease, in seconds (15 minutes, as ``TerminalAsker``'s).
    public let leaseSeconds: Double

    /// - Parameters:
    ///   - environment: the agent's environment: `FOB_PINENTRY` and `PATH`
    ///     find the program; it runs with these variables (`DISPLAY`,
    ///     `WAYLAND_DISPLAY`, `XAUTHORITY`, `DBUS_SESSION_BUS_ADDRESS` …, no secret).
    ///   - leaseSeconds: the lease the "Allow for N minutes" button gives, in seconds (at least 60).
    public init(environment: [String: String], leaseSeconds: Double = 900) {
        self.environment = environment
        self.leaseSeconds = max(60, leaseSeconds)
    }

    /// - Returns: the answer; ``AccessOutcome/unreachable`` when the
    ///   requester has a terminal of its own, no pinentry is found, or it
    ///   does not start and greet; ``AccessOutcome/unanswered`` when the
    ///   dialog (or the turn after another one) did not end within `timeout`.
    public func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        guard PinentryAsker.needsPinentry(question.context.requester),
            let program = PinentryConversation.program(environment)
        else { return .unreachable }
        let deadline = PinentryConversation.monotonicSeconds() + timeout
        guard takeTurn(until: Date().addingTimeInterval(timeout)) else { return .unanswered }
        defer { endTurn() }
        guard let pinentry = PinentryConversation.start(program: program, environment: environment) else {
            return .unreachable
        }
        defer { pinentry.end() }
        guard pinentry.nextLine(until: deadline)?.hasPrefix("OK") == true else { return .unreachable }
        let seconds = max(1, Int(timeout.rounded(.down)))
        let described = PinentryAsker.description(question, leaseSeconds: leaseSeconds)
        for (index, buttons) in dialogs.enumerated() {
            let answers = PinentryAsker.answers(ofDialog: index, leaseSeconds: leaseSeconds)
            switch confirm(pinentry, described, buttons, seconds: seconds, until: deadline) {
            case .ok?: return .answered(answers.ok)
            case .cancel?: return .answered(.deny)
            case .timedOut?: return .unanswered
            case nil: return PinentryAsker.failure(until: deadline)
            case .notOK?:
                if let third = answers.notOK { return .answered(third) }
            }
        }
        return .answered(.deny)
    }

    /// A dialog that ended with no button: unanswered once `deadline` has
    /// passed, else pinentry could not show it (no display, it ended).
    private static func failure(until deadline: Double) -> AccessOutcome {
        PinentryConversation.monotonicSeconds() >= deadline ? .unanswered : .unreachable
    }

    /// The lease in words, as the buttons and the description name it
    /// (`15 minutes`, `1 minute 30 seconds`: never rounded up).
    var leaseText: String { AccessPrompt.leaseText(seconds: leaseSeconds) }

    /// Each dialog's buttons (OK, the third button, Cancel), in the order
    /// the third buttons lead from one to the next.
    var dialogs: [[String]] {
        [
            ["Allow until lock", "Other answers…", "Deny"],
            ["Allow once", "Allow for longer…", "Deny"],
            ["Allow for \(leaseText)", "Always allow for this item", "Deny"],
        ]
    }

    /// The answers of dialog `index`'s OK and third buttons; a third button
    /// with no answer (`nil`) opens the next dialog.
    static func answers(ofDialog index: Int, leaseSeconds: Double) -> (ok: AccessAnswer, notOK: AccessAnswer?) {
        switch index {
        case 0: return (.untilLock, nil)
        case 1: return (.once, nil)
        default: return (.lease(seconds: leaseSeconds), .always)
        }
    }

    /// One dialog: the description, three buttons and the timeout, then `CONFIRM`.
    private func confirm(
        _ pinentry: PinentryConversation, _ description: String, _ buttons: [String], seconds: Int,
        until deadline: Double
    ) -> PinentryConversation.Button? {
        for command in [
            "SETTITLE Fob: a program asks for a secret", "SETDESC " + PinentryConversation.escaped(description),
            "SETOK \(buttons[0])", "SETNOTOK \(buttons[1])", "SETCANCEL \(buttons[2])", "SETTIMEOUT \(seconds)",
        ] {
            // An older pinentry may refuse SETNOTOK or SETTIMEOUT: it still asks OK or Cancel.
            guard pinentry.send(command), pinentry.nextLine(until: deadline) != nil else { return nil }
        }
        return pinentry.confirm(until: deadline)
    }

    /// Whether this channel is the one for `requester`: it has no terminal
    /// that ``TerminalAsker`` can open (none, or one outside `/dev`).
    public static func needsPinentry(_ requester: Requester) -> Bool {
        !(requester.terminal?.hasPrefix("/dev/") ?? false)
    }

    /// The dialog's text: who (program, pid, executable, parents), which
    /// item, through what, and why.
    /// - Parameter leaseSeconds: the lease of "Allow for N minutes", in seconds.
    public static func description(_ question: AccessQuestion, leaseSeconds: Double = 900) -> String {
        let r = question.context.requester
        var text = displaySafe("\(r.programName) (pid \(r.pid), \(r.executable)) asks for ")
        text += displaySafe("\(question.subject) through \(question.context.via).") + "\n"
        if !r.parents.isEmpty { text += displaySafe("Run by \(r.chain()).") + "\n" }
        if let unit = r.systemdUnit { text += displaySafe("Unit \(unit).") + "\n" }
        if let app = r.flatpakAppID { text += displaySafe("Flatpak app \(app).") + "\n" }
        text += displaySafe("Asked because \(question.reason).") + "\n\n"
        text += "Allow until lock: this program reads this item until the vault locks. "
        let lease = AccessPrompt.leaseText(seconds: leaseSeconds)
        text += "Other answers: allow once, for \(lease), or always for this item. Deny: refuse it."
        return text
    }

    /// Waits for no other pinentry to run, at most until `deadline`.
    private func takeTurn(until deadline: Date) -> Bool {
        turn.lock()
        defer { turn.unlock() }
        while busy {
            if !turn.wait(until: deadline) && busy { return false }
        }
        busy = true
        return true
    }

    private func endTurn() {
        turn.lock()
        busy = false
        turn.signal()
        turn.unlock()
    }

}

import FobClipboard
import FobSessions
import FobStore
@preconcurrency import Glibc

/// `fob logout [--service S] [--yes]`: deletes every token and oauth item
/// (of S), after a confirmation that says how many, then clears the
/// clipboard if it holds one of them or a pending `fob copy`.
enum LogoutCommand: FobCommand {
    static let name = "logout"
    static let summary = "delete every token and oauth item (of --service S), print how many, clear the clipboard"
    static let options: [OptionSpec] = [
        .value("--service", "S", help: "only the items of service S"),
        .flag("--yes", help: "do not ask for confirmation (needed without a terminal)"),
    ]
    static let discussion = """
        Without --yes, asks on the terminal how many items it will delete and
        waits for y. Prints "Logged out: deleted N token/OAuth items". If any
        delete fails, says which and exits 1. The clipboard is cleared if it
        holds a deleted token or a value a pending fob copy would clear (OSC 52:
        cleared whatever it holds).
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let service = invocation.arguments.value("--service")
        // Through the agent when it holds the vault unlocked; the wipe locks it after.
        let (store, vault) = try invocation.keychainStore()
        defer { vault?.lock() }
        let items = try LogoutWipe.sessionItems(in: store, service: service)
        let scope = service.map { " of service \"\($0)\"" } ?? ""
        if !invocation.arguments.flag("--yes") && !items.isEmpty {
            let question =
                "Delete \(items.count) token/OAuth item\(items.count == 1 ? "" : "s")\(scope)? Type y to confirm: "
            let answer: SecretBytes
            do {
                answer = try invocation.context.terminal.readSecret(prompt: question, maxBytes: 16)
            } catch .noTerminal {
                throw KeychainError.interactionNotAllowed("no terminal to confirm the logout; pass --yes")
            } catch .interrupted {
                throw CLIFailure("interrupted; nothing was deleted", status: CLIFailure.interruptedStatus)
            } catch .tooLong {
                throw CLIFailure("not confirmed; nothing was deleted")
            }
            guard ["y", "yes", "Y", "YES"].contains(answer.unsafeString ?? "") else {
                throw CLIFailure("not confirmed; nothing was deleted")
            }
        }
        // Keep the secrets to check the clipboard against once they are gone.
        var secrets: [SecretBytes] = []
        for item in items {
            if let full = try? store.item(ItemKey(item)), let secret = full.secret { secrets.append(secret) }
        }
        let report = try LogoutWipe.run(in: store, service: service)
        invocation.lockAgentIfRunning()
        clearClipboard(invocation, wiped: secrets)
        guard report.succeeded else { throw CLIFailure(report.summary) }
        invocation.standardOutput.write(report.summary + "\n")
        return 0
    }

    /// Wakes a pending `fob copy` clearer, and clears the clipboard if it
    /// holds a wiped secret (or blindly, when it cannot be read back).
    private static func clearClipboard(_ invocation: Invocation, wiped: [SecretBytes]) {
        if let pid = runningClearer(stateFile: clearerStateFile(invocation)) { kill(pid, SIGUSR1) }
        let clipboard = resolvedClipboard(invocation)
        guard clipboard.name != "none" else { return }
        if !clipboard.canReadBack {
            try? clipboard.clear()
            return
        }
        for secret in wiped where clipboard.holds(secret) == true {
            try? clipboard.clear()
            return
        }
    }
}

import FobAccess
import FobClipboard
import FobSessions
import FobStore
@preconcurrency import Glibc

/// `fob logout [--service S] [--include-long-lived] [--dry-run] [--yes]`:
/// deletes the session tokens (OAuth items, tokens whose JWT has an expiry;
/// with `--include-long-lived` also tokens with no expiry), of S, after a
/// confirmation that says how many, then clears the clipboard if it holds
/// one of them or a pending `fob copy`. `--dry-run` prints what it would
/// delete and what it keeps, and changes nothing.
enum LogoutCommand: FobCommand {
    static let name = "logout"
    static let summary =
        "delete the session tokens (of --service S), print how many, clear the clipboard (--dry-run: list them)"
    static let options: [OptionSpec] = [
        .value("--service", "S", help: "only the items of service S"),
        .flag("--include-long-lived", help: "delete the tokens with no expiry too (API keys, registry tokens)"),
        .flag("--dry-run", help: "print what would be deleted and what kept; delete nothing"),
        .flag("--yes", help: "do not ask for confirmation (needed without a terminal)"),
    ]
    static let discussion = """
        Session tokens are OAuth items and token items whose JWT has an expiry;
        tokens with no expiry (a live API key, a registry token) are kept
        unless --include-long-lived is given. Without --yes, asks on the
        terminal how many items it will delete and waits for y. Prints
        "Logged out: deleted N token/OAuth items". If any delete fails, says
        which and exits 1. The clipboard is cleared if it holds a deleted token
        or a value a pending fob copy would clear (OSC 52: cleared whatever it
        holds). --dry-run prints one line per token or OAuth item, "delete" or
        "keep", its group and its name, and changes nothing.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let service = invocation.arguments.value("--service")
        let includeLongLived = invocation.arguments.flag("--include-long-lived")
        // Through the agent when it holds the vault unlocked; the wipe locks it after.
        let (store, vault) = try invocation.keychainStore()
        defer { vault?.lock() }
        let candidates = try LogoutWipe.candidates(in: store, service: service)
        let chosen = candidates.filter { includeLongLived || $0.group == .session }
        if invocation.arguments.flag("--dry-run") {
            return invocation.succeed(printing: dryRunLines(candidates, includeLongLived: includeLongLived))
        }
        let scope = service.map { " of service \"\($0)\"" } ?? ""
        if !invocation.arguments.flag("--yes") && !chosen.isEmpty {
            try confirm(invocation, count: chosen.count, scope: scope)
        }
        // Keep the secrets to check the clipboard against once they are gone.
        var secrets: [SecretBytes] = []
        for candidate in chosen {
            if let full = try? store.item(ItemKey(candidate.item)), let secret = full.secret { secrets.append(secret) }
        }
        let report = try LogoutWipe.run(in: store, keys: Set(chosen.map { ItemKey($0.item) }))
        invocation.lockAgentIfRunning()
        clearClipboard(invocation, wiped: secrets)
        guard report.succeeded else { throw CLIFailure(report.summary) }
        return invocation.succeed(printing: report.summary + "\n")
    }

    /// `--dry-run`'s lines: `delete` or `keep`, the group (`session` or
    /// `no-expiry`), the kind and the item's name, one item a line.
    static func dryRunLines(_ candidates: [LogoutCandidate], includeLongLived: Bool) -> String {
        candidates.map { candidate in
            let deleted = includeLongLived || candidate.group == .session
            let group = candidate.group == .session ? "session  " : "no-expiry"
            return "\(deleted ? "delete" : "keep  ")  \(group)  \(candidate.item.kind.rawValue)\t"
                + displaySafe(candidate.item.displayName) + "\n"
        }.joined()
    }

    /// Asks on the terminal; returns when the answer is yes.
    /// - Throws: ``CLIFailure`` or `.interactionNotAllowed` when not confirmed.
    private static func confirm(_ invocation: Invocation, count: Int, scope: String) throws {
        let question = "Delete \(count) token/OAuth item\(count == 1 ? "" : "s")\(scope)? Type y to confirm: "
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

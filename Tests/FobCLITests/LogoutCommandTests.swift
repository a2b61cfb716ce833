import FobCLI
import FobStore
import FobTestSupport
import Foundation
import Testing

/// `fob logout` in process (no clipboard: `--clipboard none`).
@Suite struct LogoutCommandTests {
    private func harness() throws -> CLIHarness {
        let h = try CLIHarness()
        let vault = try h.openVault()
        try vault.add(Item(service: "api", account: "a", kind: .token, secret: .text("t1")))
        try vault.add(Item(service: "api", account: "b", kind: .token, secret: .text("t2")))
        try vault.add(Item(service: "idp", account: "a", kind: .oauth, secret: .text("{}")))
        try vault.add(Item(service: "mail", account: "a", secret: .text("pw")))
        return h
    }

    private func services(_ h: CLIHarness) throws -> [String] {
        try h.openVault().allItems().map { "\($0.service)/\($0.account)" }
    }

    @Test func yesDeletesEveryTokenAndPrintsTheCount() throws {
        let h = try harness()
        let run = h.run(["--clipboard", "none", "logout", "--include-long-lived", "--yes"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "Logged out: deleted 3 token/OAuth items\n")
        #expect(try services(h) == ["mail/a"])
    }

    /// Issue 20: the default set is the session tokens; `--dry-run` lists
    /// both groups and changes nothing.
    @Test func defaultKeepsTokensWithNoExpiryAndDryRunSaysSo() throws {
        let h = try harness()
        try h.openVault().add(Item(service: "gh", account: "s", kind: .token, secret: .text(jwt(exp: 2_000_000_000))))
        let dry = h.run(["--clipboard", "none", "logout", "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(
            dry.stdoutText
                == "delete  session    token\tservice \"gh\", account \"s\"\n"
                + "delete  session    oauth\tservice \"idp\", account \"a\"\n"
                + "keep    no-expiry  token\tservice \"api\", account \"a\"\n"
                + "keep    no-expiry  token\tservice \"api\", account \"b\"\n")
        #expect(try services(h).count == 5)
        let run = h.run(["--clipboard", "none", "logout", "--yes"])
        #expect(run.stdoutText == "Logged out: deleted 2 token/OAuth items\n")
        #expect(try services(h) == ["api/a", "api/b", "mail/a"])
    }

    @Test func oneService() throws {
        let h = try harness()
        let run = h.run(["--clipboard", "none", "logout", "--service", "api", "--include-long-lived", "--yes"])
        #expect(run.stdoutText == "Logged out: deleted 2 token/OAuth items\n")
        #expect(try services(h) == ["idp/a", "mail/a"])
    }

    @Test func confirmationOnTheTerminalSaysHowMany() throws {
        let h = try harness()
        let terminal = ScriptedTerminal(answers: "y")
        let run = h.run(["--clipboard", "none", "logout", "--service", "idp"], terminal: terminal)
        #expect(run.status == 0)
        #expect(terminal.prompts == [#"Delete 1 token/OAuth item of service "idp"? Type y to confirm: "#])
        #expect(try services(h) == ["api/a", "api/b", "mail/a"])
    }

    @Test func anythingButYesDeletesNothing() throws {
        let h = try harness()
        let run = h.run(["--clipboard", "none", "logout"], terminal: ScriptedTerminal(answers: "n"))
        #expect(run.status == 1)
        #expect(run.stderr == "fob: not confirmed; nothing was deleted\n")
        #expect(try services(h).count == 4)
    }

    @Test func withoutTerminalOrYesItRefuses() throws {
        let h = try harness()
        let run = h.run(["--clipboard", "none", "logout"])
        #expect(run.status == 36)
        #expect(run.stderr.contains("pass --yes"))
        #expect(try services(h).count == 4)
    }

    @Test func nothingToDeleteIsNotAnError() throws {
        let h = try CLIHarness()
        let run = h.run(["--clipboard", "none", "logout"])
        #expect(run.status == 0)
        #expect(run.stdoutText == "Logged out: deleted 0 token/OAuth items\n")
    }

    @Test func wrongPasswordDeletesNothing() throws {
        let h = try harness()
        let wrong = try h.file("wrong", "nope\n")
        let run = h.run(
            ["--vault", h.vaultPath, "--password-file", wrong, "--clipboard", "none", "logout", "--yes"], plain: true)
        #expect(run.status == 51)
        #expect(try services(h).count == 4)
    }

    @Test func copyAndTheClearerAreRegisteredButTheClearerIsNotListed() {
        let help = helpText()
        #expect(help.contains("  copy "))
        #expect(help.contains("  logout "))
        #expect(!help.contains("__clear-clipboard"))
        #expect(FobCLI.command(named: "__clear-clipboard") != nil)
    }

    private func helpText() -> String {
        let out = BufferSink()
        _ = FobCLI.run(CLIContext(arguments: ["--help"], standardOutput: out))
        return out.text
    }
}

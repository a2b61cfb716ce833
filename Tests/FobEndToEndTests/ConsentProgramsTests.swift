import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The consent question for `fob copy`, `fob run` and git (a real `git
/// credential fill` running `git-credential-fob`), each through the agent
/// in a tmux pane: asked on the requester's terminal, "once" reads once and
/// the next read asks again, "deny" refuses with nothing printed.
@Suite(.serialized) final class ConsentProgramsTests {
    let consent: ConsentProcessTests
    let fob = FobProcess.binaryURL.path
    let gitHome = TemporaryDirectory(prefix: "fob-consent-git")

    init() throws {
        consent = try ConsentProcessTests()
        let stored = try consent.fixture.run(
            ["git-credential", "store"],
            input: "protocol=https\nhost=example.com\npath=team/repo.git\nusername=ana\npassword=git-s3cret\n\n",
            password: true)
        #expect(stored.status == 0, "\(stored.stderrText)")
        try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: fob)
    }

    /// `git-credential-fob`, a link to the built `fob`: git runs an absolute
    /// helper path without a shell, so the helper's parent is git itself.
    var helper: String { gitHome.file("git-credential-fob").path }

    /// A `git credential fill` for the stored repository, with no other helper and no prompt of git's own.
    var gitFill: String {
        return "printf 'protocol=https\\nhost=example.com\\npath=team/repo.git\\n\\n' | "
            + "HOME=\(gitHome.url.path) GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 "
            + "git -c credential.helper= -c credential.helper=\(helper) -c credential.useHttpPath=true credential fill"
    }

    @Test func copyIsAskedOnItsTerminalOnceThenDenied() throws {
        let first = try consent.run(
            "\(fob) --clipboard tmux copy svc acct && tmux show-buffer -b fob && echo", answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains("asks for the secret of service \"svc\", account \"acct\" through fob copy"))
        #expect(first.screen.contains("s3cret"))
        let second = try consent.run("\(fob) --clipboard tmux copy svc acct", answer: "d")
        #expect(second.status == 51)
    }

    @Test func runIsAskedOnItsTerminalOnceThenDenied() throws {
        let first = try consent.run("\(fob) run --env X=svc/acct -- sh -c 'echo got-$X'", answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains("through fob run"))
        #expect(first.screen.contains("got-s3cret"))
        let second = try consent.run("\(fob) run --env X=svc/acct -- sh -c 'echo got-$X'", answer: "d")
        #expect(second.status == 51)
        #expect(!second.screen.contains("got-"))
    }

    @Test func gitIsNamedWithItsRepositoryAndADenialAnswersNothing() throws {
        let first = try consent.run(gitFill, answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains("git["), "\(first.screen)")
        #expect(first.screen.contains("through git for https://example.com/team/repo.git"))
        #expect(first.screen.contains("password=git-s3cret"))
        let second = try consent.run(gitFill, answer: "d")
        #expect(second.status != 0)
        #expect(!second.screen.contains("password="), "\(second.screen)")
    }
}

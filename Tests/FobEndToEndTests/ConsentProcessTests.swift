import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Access rules through the agent, with real requesters in a tmux pane
/// (`fob get`, `fob copy`, `fob run`, a real `git credential fill` running
/// `git-credential-fob`, a SecItem program): the question on the
/// requester's own terminal, each answer, a lease and no channel for every
/// client, and a program replaced after "always".
/// One suite, run one test at a time: questions in two panes at once lose
/// typed answers.
@Suite(.serialized) final class ConsentProcessTests {
    /// The line of choices of a question on a terminal.
    static let choices = "Allow? [t] this program until the vault locks"

    let fixture: AgentFixture
    let pane: TmuxSession
    let fob = FobProcess.binaryURL.path
    let gitHome = TemporaryDirectory(prefix: "fob-consent-git")

    init() throws {
        fixture = try AgentFixture()
        // The fixture's vault was made with the default 'any', as a vault made before rules.
        #expect(try fixture.run(["access", "default", "ask"], password: true).status == 0)
        #expect(try fixture.run(["add", "svc", "acct"], input: "s3cret", password: true).status == 0)
        #expect(try fixture.unlock().status == 0)
        let stored = try fixture.run(
            ["git-credential", "store"],
            input: "protocol=https\nhost=example.com\npath=team/repo.git\nusername=ana\npassword=git-s3cret\n\n",
            password: true)
        #expect(stored.status == 0, "\(stored.stderrText)")
        try FileManager.default.createSymbolicLink(
            atPath: gitHome.file("git-credential-fob").path, withDestinationPath: fob)
        pane = try TmuxSession(width: 160, height: 40, environment: fixture.environment)
        _ = try pane.shell("stty sane")
    }

    deinit { fixture.stop() }

    /// Runs `command` in the pane after clearing it; waits for this run's
    /// question when `answer` is given, types it (`C-d`: the terminal's end
    /// of input, no answer), and returns the screen after the command's
    /// status line (status -1 when a master password prompt came instead).
    ///
    /// The question waited for is the one printed after this run's start
    /// marker: the last run's question stays on screen until `clear` runs,
    /// and an answer typed to it reaches the terminal before the agent asks,
    /// which discards what was typed ahead (as sudo does), so that answer
    /// was lost and the run waited out the question's timeout.
    func run(_ command: String, answer: String? = nil) throws -> (screen: String, status: Int) {
        // Markers of this run only, each typed in two halves so that the
        // command line itself never shows the whole marker.
        let id = String(UUID().uuidString.prefix(8))
        let start = "start-" + id
        let tag = "status-" + id + "="
        try pane.type("clear; echo \"start-\"\"\(id)\"; \(command); echo \"status-\"\"\(id)=$?\"")
        try pane.press("Enter")
        if let answer {
            try pane.waitUntil(timeout: 30, "the question of \(command)") { screen in
                let lines = screen.components(separatedBy: "\n")
                guard let first = lines.firstIndex(of: start) else { return false }
                return lines[first...].contains { $0.contains(ConsentProcessTests.choices) }
            }
            if answer == "C-d" {
                try pane.press("C-d")
            } else {
                try pane.type(answer)
                try pane.press("Enter")
            }
        }
        // A master password prompt would wait for ever: it ends the wait too.
        let screen = try pane.waitUntil(timeout: 70, "the status of \(command)") { screen in
            let lines = screen.components(separatedBy: "\n")
            return lines.contains { $0.hasPrefix(tag) }
                || lines.drop { $0 != start }.contains { $0.contains("Master password") }
        }
        let line = screen.components(separatedBy: "\n").first { $0.hasPrefix(tag) } ?? ""
        return (screen, Int(line.dropFirst(tag.count)) ?? -1)
    }

    @Test func onceAllowsOneReadAndTheNextAsksAgain() throws {
        let first = try run("\(fob) get svc acct", answer: "o")
        #expect(first.status == 0)
        #expect(first.screen.contains("asks for the secret of service \"svc\", account \"acct\" through fob get"))
        #expect(first.screen.contains("s3cret"))
        let second = try run("\(fob) get svc acct", answer: "d")
        #expect(second.status == 51)
        #expect(!second.screen.contains("s3cret"))
        #expect(second.screen.contains("access denied"))
    }

    /// The question is put on the requester's terminal (`/dev/tty`), as
    /// sudo's, never on its standard output or error: with both sent to
    /// files, the pane still shows it and the output holds the secret alone.
    @Test func theQuestionIsOnTheTerminalNotOnStandardOutput() throws {
        let dir = TemporaryDirectory(prefix: "fob-consent-tty")
        let (out, err) = (dir.file("out").path, dir.file("err").path)
        let result = try run("\(fob) get svc acct >\(out) 2>\(err)", answer: "o")
        #expect(result.status == 0)
        #expect(result.screen.contains("asks for the secret of service \"svc\", account \"acct\" through fob get"))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == "s3cret\n")
        #expect(try String(contentsOfFile: err, encoding: .utf8) == "")
    }

    @Test func aLeaseAnswersWithoutAsking() throws {
        #expect(try run("\(fob) get svc acct", answer: "m").status == 0)
        let again = try run("\(fob) get svc acct")
        #expect(again.status == 0)
        #expect(again.screen.contains("s3cret"))
        #expect(!again.screen.contains("Allow?"))
        // A lock ends it.
        #expect(try fixture.run(["lock"]).status == 0)
        #expect(try fixture.unlock().status == 0)
        #expect(try run("\(fob) get svc acct", answer: "d").status == 51)
    }

    @Test func noChannelIsInteractionNotAllowedWithNothingOnStandardOutput() throws {
        let dir = TemporaryDirectory(prefix: "fob-consent-out")
        let out = dir.file("out").path
        let err = dir.file("err").path
        // A requester in a session of its own, with no terminal to ask on.
        let result = try run("setsid -w sh -c '\(fob) get svc acct; exit $?' </dev/null >\(out) 2>\(err)")
        #expect(result.status == 36)
        #expect(!result.screen.contains("Allow?"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)).isEmpty)
        let message = try String(contentsOfFile: err, encoding: .utf8)
        #expect(
            message.contains("consent needed for service \"svc\", account \"acct\": the vault's default rule is 'ask'"))
    }

    /// A question on the requester's terminal that no one answers (here
    /// the terminal's end of input, Ctrl-D, as its 60 s timeout does) fails
    /// the read with exit 36, saying no one answered, and the command does
    /// not go on to ask the master password: no one is there to type it.
    @Test func anUnansweredQuestionIsExit36NotAMasterPasswordPrompt() throws {
        let result = try run("\(fob) get svc acct", answer: "C-d")
        if result.status == -1 { try pane.press("C-c") }
        #expect(result.status == 36, "\(result.screen)")
        #expect(!result.screen.contains("Master password"))
        #expect(
            result.screen.contains(
                "consent needed for service \"svc\", account \"acct\": the vault's default rule is 'ask', "
                    + "and no one answered within 60 s"), "\(result.screen)")
        #expect(!result.screen.contains("s3cret"))
        let log = try fixture.run(["log", "--item", "svc", "acct"]).stdoutText
        #expect(log.contains("timed-out"), "\(log)")
    }

    @Test func aProgramReplacedAfterAlwaysIsAskedAgain() throws {
        let dir = TemporaryDirectory(prefix: "fob-consent-programs")
        let shell = dir.file("sh").path
        #expect(try run("cp /bin/bash \(shell)").status == 0)
        let first = try run("\(shell) -c '\(fob) get svc acct; exit $?'", answer: "a")
        #expect(first.status == 0)
        #expect(first.screen.contains("sh["))
        let shown = try fixture.run(["access", "show", "svc", "acct"])
        #expect(shown.stdoutText.contains("  trusted \(shell)\n"))
        let trusted = try run("\(shell) -c '\(fob) get svc acct; exit $?'")
        #expect(trusted.status == 0)
        #expect(!trusted.screen.contains("Allow?"))
        // The same bytes as a new file: another identity.
        // (A shell that runs one command may exec it: a second command keeps the copy the parent.)
        #expect(try run("cp /bin/bash \(shell).new && mv \(shell).new \(shell)").status == 0)
        #expect(try run("\(shell) -c '\(fob) get svc acct; exit $?'", answer: "d").status == 51)
    }

    @Test func grantAndSetChangeTheRuleAfterConsent() throws {
        let granted = try run("\(fob) access grant svc acct --program /bin/sh", answer: "o")
        #expect(granted.status == 0)
        let read = try run("\(fob) get svc acct")
        #expect(read.status == 0)
        #expect(!read.screen.contains("Allow?"))
        // The shell is trusted now: changing the rule needs no question either.
        #expect(try run("\(fob) access set svc acct deny").status == 0)
        #expect(try run("\(fob) access revoke svc acct --program /bin/sh").status == 0)
        let denied = try run("\(fob) get svc acct")
        #expect(denied.status == 51)
        #expect(!denied.screen.contains("Allow?"))
    }

    /// `git-credential-fob`, a link to the built `fob`. git runs an absolute
    /// helper path with its action through `sh -c '/…/git-credential-fob
    /// get'`: dash stays the helper's parent, and Fob names git behind it.
    var helper: String { gitHome.file("git-credential-fob").path }

    /// A `git credential fill` for the stored repository, with no other
    /// helper and no prompt of git's own; `helper` is the value of
    /// `credential.helper` (default: the absolute path of ``helper``).
    func gitFill(helper: String? = nil) -> String {
        return "printf 'protocol=https\\nhost=example.com\\npath=team/repo.git\\n\\n' | "
            + "HOME=\(gitHome.url.path) GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 "
            + "git -c credential.helper= -c 'credential.helper=\(helper ?? self.helper)' -c credential.useHttpPath=true "
            + "credential fill"
    }

    @Test func copyIsAskedOnItsTerminalOnceThenDenied() throws {
        let first = try run(client("copy").command, answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains("asks for the secret of service \"svc\", account \"acct\" through fob copy"))
        #expect(first.screen.contains("s3cret"))
        let second = try run(client("copy").command, answer: "d")
        #expect(second.status == 51, "\(second.screen)")
        #expect(second.screen.contains("access denied"))
        #expect(!second.screen.contains("s3cret"))
    }

    /// A client of the agent run in the pane: its command line and what it
    /// shows of the secret when it read it.
    func client(_ name: String) -> (command: String, shown: String) {
        switch name {
        case "copy": return ("\(fob) --clipboard tmux copy svc acct && tmux show-buffer -b fob && echo", "s3cret")
        case "run": return ("\(fob) run --env X=svc/acct -- sh -c 'echo got-$X'", "got-s3cret")
        case "git": return (gitFill(), "password=git-s3cret")
        default: return ("\(example) svc acct", "secret: s3cret")
        }
    }

    /// A lease ("m", this program for some minutes) answers the next read of
    /// the same program unasked, for every client, not only `fob get`.
    @Test(arguments: ["copy", "run", "git", "secitem"])
    func aLeaseAnswersTheNextReadWithoutAsking(_ name: String) throws {
        let (command, shown) = client(name)
        let first = try run(command, answer: "m")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains(shown))
        let again = try run(command)
        #expect(again.status == 0, "\(again.screen)")
        #expect(again.screen.contains(shown), "\(again.screen)")
        #expect(!again.screen.contains("Allow?"))
        // Each read is in the log once, with its program and channel.
        let shell = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(try pane.panePID())/exe")
        let (channel, program) =
            switch name {
            case "git": ("git", "/usr/bin/git")
            case "secitem": ("secitem", example)
            default: (name, shell)
            }
        let reads = try readsInLog().filter { $0.hasPrefix(channel + " ") }
        #expect(reads == ["\(channel) allowed-lease \(program)", "\(channel) allowed-lease \(program)"])
    }

    /// The reads in `fob log --json`, as "channel decision executable".
    func readsInLog() throws -> [String] {
        let result = try fixture.run(["log", "--json"])
        #expect(result.status == 0, "\(result.stderrText)")
        let entries = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [[String: Any]] ?? []
        return entries.filter { $0["event"] as? String == "read" }.map {
            let requester = $0["requester"] as? [String: Any] ?? [:]
            return "\($0["channel"] as? String ?? "-") \($0["decision"] as? String ?? "-") "
                + (requester["executable"] as? String ?? "-")
        }
    }

    /// With no terminal to ask on (a session of its own) and no terminal UI
    /// or desktop, every client is refused with errSecInteractionNotAllowed
    /// and nothing of the secret reaches its standard output; git's helper
    /// answers nothing, so git has no password to print.
    @Test(arguments: ["copy", "run", "git", "secitem"])
    func noChannelRefusesEveryClient(_ name: String) throws {
        let dir = TemporaryDirectory(prefix: "fob-consent-nochannel")
        let (script, out, err) = (dir.file("read.sh").path, dir.file("out").path, dir.file("err").path)
        try Data((client(name).command + "\n").utf8).write(to: URL(fileURLWithPath: script))
        let result = try run("setsid -w sh \(script) </dev/null >\(out) 2>\(err)")
        #expect(!result.screen.contains("Allow?"))
        let output = try String(contentsOfFile: out, encoding: .utf8)
        let message = try String(contentsOfFile: err, encoding: .utf8)
        #expect(!output.contains("s3cret"), "\(output)")
        switch name {
        case "git":
            #expect(result.status != 0)
            #expect(output.isEmpty, "\(output)")
        case "secitem":
            #expect(result.status == 1)
            #expect(output.hasPrefix("status: -25308 "), "\(output)")
        default:
            #expect(result.status == 36, "\(message)")
            #expect(output.isEmpty, "\(output)")
            #expect(
                message.contains(
                    "consent needed for service \"svc\", account \"acct\": the vault's default rule is 'ask'"),
                "\(message)")
        }
    }

    @Test func runIsAskedOnItsTerminalOnceThenDenied() throws {
        let first = try run("\(fob) run --env X=svc/acct -- sh -c 'echo got-$X'", answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains("through fob run"))
        #expect(first.screen.contains("got-s3cret"))
        let second = try run("\(fob) run --env X=svc/acct -- sh -c 'echo got-$X'", answer: "d")
        #expect(second.status == 51)
        #expect(!second.screen.contains("got-"))
    }

    @Test func gitIsNamedWithItsRepositoryAndADenialAnswersNothing() throws {
        let first = try run(gitFill(), answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        // The requester is git, not the `sh -c` it runs its helper through.
        #expect(first.screen.contains("fob: git["), "\(first.screen)")
        #expect(first.screen.contains("(/usr/bin/git) asks"), "\(first.screen)")
        #expect(first.screen.contains("through git for https://example.com/team/repo.git"))
        #expect(first.screen.contains("password=git-s3cret"))
        let second = try run(gitFill(), answer: "d")
        #expect(second.status != 0)
        #expect(!second.screen.contains("password="), "\(second.screen)")
    }

    /// A helper given as a command line (`!fob git-credential`) runs through
    /// `sh -c` too; the shell that runs a script, though, is the requester.
    @Test func aShellThatOnlyStartsTheHelperIsSkippedAndAScriptIsNot() throws {
        let viaCommand = try run(gitFill(helper: "!\(fob) git-credential"), answer: "o")
        #expect(viaCommand.status == 0, "\(viaCommand.screen)")
        #expect(viaCommand.screen.contains("fob: git["), "\(viaCommand.screen)")
        let dir = TemporaryDirectory(prefix: "fob-consent-script")
        let script = dir.file("read.sh").path
        try Data("\(fob) get svc acct\n".utf8).write(to: URL(fileURLWithPath: script))
        let fromScript = try run("sh \(script)", answer: "o")
        #expect(fromScript.status == 0, "\(fromScript.screen)")
        #expect(fromScript.screen.contains("fob: dash["), "\(fromScript.screen)")
        #expect(fromScript.screen.contains("(/usr/bin/dash) asks"))
        #expect(fromScript.screen.contains("s3cret"))
    }

    /// The example SecItem program, built beside `fob`.
    let example = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("keychain-example").path

    /// A program written for Apple's SecItem API (Examples/keychain-example,
    /// built against FobSecurity) asks the agent itself: it is the
    /// requester, asked on its own terminal; once gives the secret, a
    /// denial is errSecAuthFailed (-25293) and no secret.
    @Test func aSecItemProgramIsAskedOnItsTerminal() throws {
        let first = try run("\(example) svc acct", answer: "o")
        #expect(first.status == 0, "\(first.screen)")
        #expect(first.screen.contains("fob: keychain-example["), "\(first.screen)")
        // The pane wraps the line where it must: at the space, whose cell
        // the capture drops ("through" ends one row), or inside a word.
        let rows = first.screen.split(separator: "\n")
        #expect(
            rows.joined(separator: "").contains("through SecItem")
                || rows.joined(separator: " ").contains("through SecItem"), "\(first.screen)")
        #expect(first.screen.contains("secret: s3cret"))
        let second = try run("\(example) svc acct", answer: "d")
        #expect(second.status == 1, "\(second.screen)")
        #expect(second.screen.contains("status: -25293 "), "\(second.screen)")
        #expect(!second.screen.contains("secret: s3cret"))
    }

    /// Access groups with real SecItem programs, three copies of the example
    /// (three files, three programs): mail saves the group's first item;
    /// calendar, asked about it and answered "always", is of the group from
    /// then on and reads what mail saves later unasked; another program is
    /// asked, and saving into the group does not make it one of the group.
    @Test func theProgramsOfAnAccessGroupShareItsItems() throws {
        let dir = TemporaryDirectory(prefix: "fob-consent-groups")
        let (mail, calendar, other) = (dir.file("mail").path, dir.file("calendar").path, dir.file("other").path)
        #expect(try run("cp \(example) \(mail) && cp \(example) \(calendar) && cp \(example) \(other)").status == 0)
        let group = "--group com.example.shared"
        let saved = try run("printf token-1 | \(mail) --save \(group) app token")
        #expect(saved.status == 0, "\(saved.screen)")
        #expect(!saved.screen.contains("Allow?"))
        let joined = try run("\(calendar) \(group) app token", answer: "a")
        #expect(joined.status == 0, "\(joined.screen)")
        #expect(joined.screen.contains("secret: token-1"))
        #expect(try run("printf token-2 | \(mail) --save \(group) app refresh").status == 0)
        let shared = try run("\(calendar) \(group) app refresh")
        #expect(shared.status == 0, "\(shared.screen)")
        #expect(!shared.screen.contains("Allow?"))
        #expect(shared.screen.contains("secret: token-2"))
        let asked = try run("\(other) \(group) app refresh", answer: "d")
        #expect(asked.status == 1, "\(asked.screen)")
        #expect(asked.screen.contains("status: -25293 "))
        #expect(try run("printf planted | \(other) --save \(group) app planted").status == 0)
        let still = try run("\(other) \(group) app token", answer: "d")
        #expect(still.status == 1, "\(still.screen)")
        #expect(!still.screen.contains("secret: token-1"))
    }
}

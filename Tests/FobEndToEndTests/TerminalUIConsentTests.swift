import FobTestSupport
import Foundation
import Testing

/// The terminal UI as the first channel: a vault whose default is `ask`,
/// the UI open in one pane (80×24), a client (`fob get`, `fob run`, git, a
/// SecItem program) from another with no terminal of its own; the request
/// bar appears, F3 and an answer settle it.
@Suite(.serialized) final class TerminalUIConsentTests {
    let fixture: AgentFixture
    let ui: TmuxSession
    let shell: TmuxSession
    let fob = FobProcess.binaryURL.path
    let dir = TemporaryDirectory(prefix: "fob-ui-consent")

    init() throws {
        fixture = try AgentFixture()
        #expect(try fixture.run(["access", "default", "ask"], password: true).status == 0)
        #expect(try fixture.run(["add", "svc", "acct"], input: "s3cret", password: true).status == 0)
        #expect(try fixture.unlock().status == 0)
        ui = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", fob],
            environment: fixture.environment)
        try ui.waitFor("Items ")
        shell = try TmuxSession(width: 120, height: 20, environment: fixture.environment)
    }

    deinit { fixture.stop() }

    /// Starts `fob get svc acct` in a session of its own (no terminal), its
    /// output in files; returns the marker its exit status is written under.
    func startGet() throws -> String { try start("\(fob) get svc acct") }

    /// Starts the shell command `command` as a script in a session of its
    /// own (no terminal), its output in files; returns the marker its exit
    /// status is written under.
    func start(_ command: String) throws -> String {
        let tag = "st" + UUID().uuidString.prefix(8)
        let out = dir.file("\(tag).out").path
        let script = dir.file("\(tag).sh").path
        try Data((command + "\n").utf8).write(to: URL(fileURLWithPath: script))
        try shell.type("setsid -w sh \(script) </dev/null >\(out) 2>\(out).err; echo \(tag)=$?")
        try shell.press("Enter")
        return tag
    }

    /// The exit status and standard output of the get marked `tag`.
    func finish(_ tag: String) throws -> (status: Int, output: String) {
        let screen = try shell.waitUntil(timeout: 70, "the get's status") { Self.status(tag, on: $0) != nil }
        let output = try String(contentsOfFile: dir.file("\(tag).out").path, encoding: .utf8)
        return (Self.status(tag, on: screen) ?? -1, output)
    }

    /// The number after `tag=` at the end of a line: the status, not the
    /// echoed command (which holds `tag=$?`). The line need not start with
    /// it: on a loaded machine the shell's prompt can be drawn after the
    /// typed command's echo, so the status follows `$ ` on its line.
    static func status(_ tag: String, on screen: String) -> Int? {
        for line in screen.components(separatedBy: "\n") {
            guard let marker = line.range(of: "\(tag)=", options: .backwards) else { continue }
            if let status = Int(line[marker.upperBound...].trimmingCharacters(in: .whitespaces)) { return status }
        }
        return nil
    }

    /// Waits for the bar showing `bar`, opens the dialog and answers `key`.
    func answer(_ key: String, bar: String = "account \"acct\" (fob get)", dialog: String? = nil) throws {
        try ui.waitFor(bar, timeout: 20)
        // Keys in the UI's first instants after an unlock by the agent are
        // ignored (typed-ahead passwords): press again until the dialog shows.
        var shown = false
        for _ in 0..<10 where !shown {
            try ui.press("F3")
            shown = (try? ui.waitFor("t  this program until the vault locks", timeout: 2)) != nil
        }
        #expect(shown)
        if let dialog { try ui.waitFor(dialog) }
        try ui.type(key)
        try ui.waitForAbsence(of: bar)
    }

    @Test func onceAllowsOneReadAndTheNextAsksAgain() throws {
        let first = try startGet()
        try answer("o")
        let read = try finish(first)
        #expect(read.status == 0)
        #expect(read.output == "s3cret\n")
        let second = try startGet()
        try answer("d")
        let denied = try finish(second)
        #expect(denied.status == 51)
        #expect(denied.output.isEmpty)
    }

    /// A `fob get` typed in a shell is told on its terminal, at once, that
    /// the question waits in the terminal UI, instead of sitting silent
    /// for up to a minute; the UI's answer then ends it.
    @Test func aGetOnATerminalIsToldWhereItIsAsked() throws {
        let tag = "tty" + UUID().uuidString.prefix(6)
        try shell.type("clear; \(fob) get svc acct; echo \(tag)=$?")
        try shell.press("Enter")
        let told = try shell.waitFor("fob: asking in Fob's terminal UI (F3 there answers) for up to 60 s")
        #expect(Self.status(tag, on: told) == nil)
        try answer("o")
        let screen = try shell.waitUntil(timeout: 30, "the get's status") { Self.status(tag, on: $0) != nil }
        #expect(Self.status(tag, on: screen) == 0)
        #expect(screen.contains("s3cret"))
    }

    @Test func aLeaseAsksNoSecondQuestion() throws {
        let first = try startGet()
        try answer("m")
        #expect(try finish(first).status == 0)
        let again = try finish(try startGet())
        #expect(again.status == 0)
        #expect(again.output == "s3cret\n")
        #expect(!(try ui.capture()).contains("F3 answer"))
    }

    /// Every client is asked in the terminal UI, not only `fob get`: `fob
    /// run`, git through `git-credential-fob`, and a SecItem program, each
    /// with no terminal of its own. Once gives one read; the next is asked
    /// again and denied, and gets nothing.
    @Test(arguments: ["run", "git", "secitem"])
    func everyClientIsAskedInTheTerminalUI(_ name: String) throws {
        let (command, bar, shown) = try client(name)
        let first = try start(command)
        try answer("o", bar: bar, dialog: name == "secitem" ? "through SecItem" : nil)
        let read = try finish(first)
        #expect(read.status == 0)
        #expect(read.output.contains(shown), "\(read.output)")
        let second = try start(command)
        try answer("d", bar: bar)
        let denied = try finish(second)
        #expect(denied.status == (name == "run" ? 51 : name == "secitem" ? 1 : 128))
        #expect(!denied.output.contains(shown), "\(denied.output)")
    }

    /// A client's command line, what the request bar shows of it, and what
    /// it prints of the secret it read. git's needs a stored credential and
    /// `git-credential-fob`, a link to `fob`, made here.
    func client(_ name: String) throws -> (command: String, bar: String, shown: String) {
        switch name {
        case "run": return ("\(fob) run --env X=svc/acct -- sh -c 'echo got-$X'", "(fob run)", "got-s3cret")
        case "secitem":
            let example = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("keychain-example")
            // At 80 columns the bar shortens the question (the channel is in the dialog).
            return ("\(example.path) svc acct", "? keychain-example[", "secret: s3cret")
        default:
            let stored = try fixture.run(
                ["git-credential", "store"],
                input: "protocol=https\nhost=example.com\npath=team/repo.git\nusername=ana\npassword=git-s3cret\n\n",
                password: true)
            #expect(stored.status == 0, "\(stored.stderrText)")
            let helper = dir.file("git-credential-fob").path
            try FileManager.default.createSymbolicLink(atPath: helper, withDestinationPath: fob)
            let fill =
                "printf 'protocol=https\\nhost=example.com\\npath=team/repo.git\\n\\n' | "
                + "HOME=\(dir.url.path) GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_TERMINAL_PROMPT=0 "
                + "git -c credential.helper= -c 'credential.helper=\(helper)' -c credential.useHttpPath=true "
                + "credential fill"
            return (fill, "? git[", "password=git-s3cret")
        }
    }
}

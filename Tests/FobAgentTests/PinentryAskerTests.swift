import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

@testable import FobAgent

/// The consent question through pinentry: each button's answer, no
/// program, no answer in time, and a requester with a terminal of its own.
@Suite struct PinentryAskerTests {
    let directory = TemporaryDirectory(prefix: "fob-pinentry-asker")

    /// A pinentry that answers `CONFIRM` with `confirm` (after `delay` seconds) and logs each command.
    /// With `then`, the second `CONFIRM` of a conversation is answered with it, and with `third` the third.
    func pinentry(confirm: String, then second: String? = nil, third: String? = nil, delay: Int = 0) throws -> String {
        let path = directory.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            asked=0
            while read -r line; do
              echo "$line" >> '\(directory.file("log").path)'
              case "$line" in
                CONFIRM) sleep \(delay); asked=$((asked + 1))
                  case $asked in
                    2) echo '\(second ?? confirm)';;
                    3) echo '\(third ?? second ?? confirm)';;
                    *) echo '\(confirm)';;
                  esac;;
                BYE) echo OK; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return path
    }

    func question(terminal: String? = nil) -> AccessQuestion {
        let requester = Requester(
            pid: 4321, uid: getuid(), executable: "/usr/bin/secret-tool", identity: nil,
            parents: [ProcessSummary(pid: 4000, executable: "/usr/bin/bash", name: "bash")], terminal: terminal)
        return AccessQuestion(
            context: AccessContext(requester: requester, channel: .secretService),
            item: "service \"mail\", account \"ana\"", reason: "the vault's default rule is 'ask'")
    }

    func asker(_ program: String) -> PinentryAsker {
        PinentryAsker(environment: ["FOB_PINENTRY": program, "PATH": "/usr/bin:/bin"])
    }

    static let notOK = "ERR 83886194 Not confirmed <Pinentry>"
    static let cancel = "ERR 83886179 Operation cancelled <Pinentry>"

    /// The five answers the terminal channels offer, over three dialogs:
    /// until lock; Other answers… → once; → Allow for longer… → 15 minutes
    /// (a lease) or always; Cancel on any dialog denies.
    @Test func eachButtonIsItsAnswer() throws {
        let (notOK, cancel) = (Self.notOK, Self.cancel)
        let cases: [([String], AccessAnswer)] = [
            (["OK"], .untilLock), ([notOK, "OK"], .once), ([notOK, notOK, "OK"], .lease(seconds: 900)),
            ([notOK, notOK, notOK], .always), ([cancel], .deny), ([notOK, cancel], .deny),
            ([notOK, notOK, cancel], .deny),
        ]
        for (buttons, answer) in cases {
            let program = try pinentry(
                confirm: buttons[0], then: buttons.dropFirst().first, third: buttons.dropFirst(2).first)
            #expect(asker(program).ask(question(), timeout: 10) == .answered(answer), "\(buttons)")
        }
        let log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(
            log.contains("SETOK Allow until lock\nSETNOTOK Other answers…\nSETCANCEL Deny\nSETTIMEOUT 10\nCONFIRM\n"))
        #expect(log.contains("SETOK Allow once\nSETNOTOK Allow for longer…\nSETCANCEL Deny\nSETTIMEOUT 10\nCONFIRM\n"))
        #expect(
            log.contains(
                "SETOK Allow for 15 minutes\nSETNOTOK Always allow for this item\nSETCANCEL Deny\nSETTIMEOUT 10\nCONFIRM\n"
            ))
        #expect(
            log.contains(
                "SETDESC secret-tool (pid 4321, /usr/bin/secret-tool) asks for the secret of service \"mail\", "
                    + "account \"ana\" through Secret Service.%0ARun by bash[4000].%0A"))
        #expect(log.contains("Other answers: allow once, for 15 minutes, or always for this item."))
    }

    /// The lease's length is the asker's, named on its button; each dialog
    /// is asked only when the one before led to it.
    @Test func theLeaseButtonNamesItsMinutes() throws {
        let program = try pinentry(confirm: Self.notOK, then: Self.notOK, third: "OK")
        let asker = PinentryAsker(environment: ["FOB_PINENTRY": program, "PATH": "/usr/bin:/bin"], leaseSeconds: 300)
        #expect(asker.ask(question(), timeout: 10) == .answered(.lease(seconds: 300)))
        var log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(log.contains("SETOK Allow for 5 minutes\n"))
        #expect(log.components(separatedBy: "\n").filter { $0 == "CONFIRM" }.count == 3)
        // Asked once in all when the first answer settles it.
        try FileManager.default.removeItem(at: directory.file("log"))
        #expect(self.asker(try pinentry(confirm: "OK")).ask(question(), timeout: 10) == .answered(.untilLock))
        log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(log.components(separatedBy: "\n").filter { $0 == "CONFIRM" }.count == 1)
    }

    /// A lease of 90 s was named "2 minutes" (its minutes rounded): the
    /// button and the text say its real length.
    @Test func aLeaseOfPartMinutesIsNamedExactly() throws {
        let program = try pinentry(confirm: Self.notOK, then: Self.notOK, third: "OK")
        let asker = PinentryAsker(environment: ["FOB_PINENTRY": program, "PATH": "/usr/bin:/bin"], leaseSeconds: 90)
        #expect(asker.ask(question(), timeout: 10) == .answered(.lease(seconds: 90)))
        let log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(log.contains("SETOK Allow for 1 minute 30 seconds\n"))
        #expect(log.contains("Other answers: allow once, for 1 minute 30 seconds, or always for this item."))
        #expect(!log.contains("2 minutes"))
    }

    /// The requester's own terminal cut a 90 s lease to "[m] 1 minutes";
    /// it names the lease as pinentry does, in whole minutes and seconds.
    @Test func theTerminalQuestionNamesTheLeaseExactly() {
        #expect(TerminalAsker.prompt(question(), leaseSeconds: 90).contains("[o] once, [m] 1 minute 30 seconds, "))
        #expect(TerminalAsker.prompt(question(), leaseSeconds: 900).contains("[o] once, [m] 15 minutes, "))
        #expect(
            [60, 61, 90, 900, 45, 0, 59.9].map { AccessPrompt.leaseText(seconds: $0) } == [
                "1 minute", "1 minute 1 second", "1 minute 30 seconds", "15 minutes", "45 seconds", "0 seconds",
                "59 seconds",
            ])
        #expect(AccessPrompt.leaseText(seconds: 90, short: true) == "1 min 30 s")
    }

    /// A lease chosen in pinentry is a lease of the gate: the next read of
    /// the same program and item is not asked, and the access log records
    /// the lease and the read it allowed.
    @Test func aLeaseChosenInPinentryIsKeptAndRecorded() throws {
        let program = try pinentry(confirm: Self.notOK, then: Self.notOK, third: "OK")
        let recorder = Entries()
        let clock = ManualAgentClock()
        let gate = AccessGate(clock: clock, askers: [asker(program)], recorder: recorder)
        let consent = AccessConsent(gate: gate)
        var item = Item(service: "mail", account: "ana", secret: .text("s"))
        item.accessRule.mode = .ask
        let context = question().context
        let refusal = consent.decide(context, items: [item], event: .read, vaultDefault: .ask) { _, _ in }
        #expect(refusal == nil)
        #expect(gate.hasLease(context, item: item.persistentID))
        let kinds = recorder.all.map { "\($0.event.rawValue) \($0.decision?.rawValue ?? "-") \($0.detail)" }
        #expect(kinds.contains("lease allowed-lease 15 min"), "\(kinds)")
        #expect(kinds.contains("read allowed-lease a lease of 15 min"), "\(kinds)")
        try FileManager.default.removeItem(at: directory.file("log"))
        #expect(consent.decide(context, items: [item], event: .read, vaultDefault: .ask) { _, _ in } == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.file("log").path), "asked again")
        clock.advance(901)
        #expect(!gate.hasLease(context, item: item.persistentID))
    }

    /// No program, a pinentry that cannot show a dialog, or a requester
    /// with a terminal of its own: no one could be asked here.
    @Test func noProgramOrNoDialogOrATerminalOfItsOwnIsUnreachable() throws {
        #expect(asker("/nonexistent/pinentry").ask(question(), timeout: 5) == .unreachable)
        // A pinentry that fails (no display): an error other than the buttons'.
        #expect(
            asker(try pinentry(confirm: "ERR 83918950 Inappropriate ioctl for device")).ask(question(), timeout: 5)
                == .unreachable)
        // The requester's own terminal is the terminal channel's.
        #expect(
            asker(try pinentry(confirm: "OK")).ask(question(terminal: "/dev/pts/9"), timeout: 5) == .unreachable)
    }

    /// A dialog left unanswered: past the deadline, or pinentry's own
    /// timeout (`ERR` code 62): no one answered in time.
    @Test func aDialogLeftUnansweredIsUnanswered() throws {
        let slow = asker(try pinentry(confirm: "OK", delay: 5))
        let start = Date()
        #expect(slow.ask(question(), timeout: 1) == .unanswered)
        #expect(Date().timeIntervalSince(start) < 4)
        #expect(
            asker(try pinentry(confirm: "ERR 83886142 Timeout <Pinentry>")).ask(question(), timeout: 5) == .unanswered)
    }

    @Test func oneQuestionAtATime() throws {
        let shared = asker(try pinentry(confirm: "OK", delay: 1))
        let answers = Answers()
        let asked = question()
        let threads = (0..<2).map { _ in Thread { answers.append(shared.ask(asked, timeout: 10).answer) } }
        let start = Date()
        threads.forEach { $0.start() }
        while answers.all.count < 2 { usleep(20_000) }
        #expect(answers.all == [.untilLock, .untilLock])
        // One after the other: two seconds, not one.
        #expect(Date().timeIntervalSince(start) >= 1.9)
    }

    @Test func confirmAnswersMapToButtons() {
        #expect(PinentryConversation.button(answer: "OK") == .ok)
        #expect(PinentryConversation.button(answer: "ERR 83886194 Not confirmed") == .notOK)
        #expect(PinentryConversation.button(answer: "ERR 83886179 Operation cancelled") == .cancel)
        #expect(PinentryConversation.button(answer: "ERR 83886142 Timeout") == .timedOut)
        #expect(PinentryConversation.button(answer: "D garbage") == nil)
        #expect(PinentryConversation.escaped("50%\nnext") == "50%25%0Anext")
    }
}

/// The entries a gate records.
private final class Entries: AccessRecorder, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [AccessLogEntry] = []
    var all: [AccessLogEntry] { lock.withLock { entries } }
    func record(_ entry: AccessLogEntry) { lock.withLock { entries.append(entry) } }
}

/// Answers gathered from several threads.
private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [AccessAnswer?] = []
    var all: [AccessAnswer?] { lock.withLock { answers } }
    func append(_ answer: AccessAnswer?) { lock.withLock { answers.append(answer) } }
}

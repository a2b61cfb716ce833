import FobAgent
import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

/// The consent question through pinentry: each button's answer, no
/// program, no answer in time, and a requester with a terminal of its own.
@Suite struct PinentryAskerTests {
    let directory = TemporaryDirectory(prefix: "fob-pinentry-asker")

    /// A pinentry that answers `CONFIRM` with `confirm` (after `delay` seconds) and logs each command.
    /// With `then`, the second `CONFIRM` of a conversation is answered with it.
    func pinentry(confirm: String, then second: String? = nil, delay: Int = 0) throws -> String {
        let path = directory.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            asked=0
            while read -r line; do
              echo "$line" >> '\(directory.file("log").path)'
              case "$line" in
                CONFIRM) sleep \(delay); asked=$((asked + 1))
                  if [ $asked -eq 2 ]; then echo '\(second ?? confirm)'; else echo '\(confirm)'; fi;;
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

    @Test func eachButtonIsItsAnswer() throws {
        let cases: [(String, AccessAnswer)] = [
            ("OK", .untilLock), ("ERR 83886194 Not confirmed <Pinentry>", .once),
            ("ERR 83886179 Operation cancelled <Pinentry>", .deny),
        ]
        for (confirm, answer) in cases {
            #expect(asker(try pinentry(confirm: confirm)).ask(question(), timeout: 10) == .answered(answer))
        }
        let log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(
            log.contains("SETOK Allow until lock\nSETNOTOK Other answers…\nSETCANCEL Deny\nSETTIMEOUT 10\nCONFIRM\n"))
        #expect(
            log.contains(
                "SETOK Always allow for this item\nSETNOTOK Allow once\nSETCANCEL Deny\nSETTIMEOUT 10\nCONFIRM\n"))
        #expect(
            log.contains(
                "SETDESC secret-tool (pid 4321, /usr/bin/secret-tool) asks for the secret of service \"mail\", "
                    + "account \"ana\" through Secret Service.%0ARun by bash[4000].%0A"))
    }

    /// "Always" is offered too: "Other answers…", then "Always allow for this item".
    @Test func theSecondDialogOffersAlways() throws {
        let notOK = "ERR 83886194 Not confirmed <Pinentry>"
        let cancel = "ERR 83886179 Operation cancelled <Pinentry>"
        #expect(asker(try pinentry(confirm: notOK, then: "OK")).ask(question(), timeout: 10) == .answered(.always))
        #expect(asker(try pinentry(confirm: notOK, then: cancel)).ask(question(), timeout: 10) == .answered(.deny))
        // Asked once in all when the first answer settles it.
        try? FileManager.default.removeItem(at: directory.file("log"))
        #expect(asker(try pinentry(confirm: "OK")).ask(question(), timeout: 10) == .answered(.untilLock))
        let log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(log.components(separatedBy: "\n").filter { $0 == "CONFIRM" }.count == 1)
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

/// Answers gathered from several threads.
private final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [AccessAnswer?] = []
    var all: [AccessAnswer?] { lock.withLock { answers } }
    func append(_ answer: AccessAnswer?) { lock.withLock { answers.append(answer) } }
}

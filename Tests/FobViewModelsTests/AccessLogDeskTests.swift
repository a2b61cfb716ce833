import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobStore

/// The access log view in the terminal UI: F4 reads the log through the
/// store (the agent's access log request), newest first; typing narrows
/// it; Enter shows an entry's program with its parents; Esc clears, then closes.
@Suite struct AccessLogDeskTests {
    static func records() -> [AccessLogRecord] {
        let entries: [(String, String, AccessChannel, AccessDecision, [String])] = [
            ("/usr/bin/git", "mail", .git, .allowedRule, ["bash(100)", "tmux(1)"]),
            ("/usr/bin/python3", "mail", .secretService, .denied, []),
            ("/usr/bin/git", "wifi", .git, .allowedOnce, ["sh(7)"]),
        ]
        return entries.enumerated().map { n, e in
            AccessLogRecord(
                index: UInt64(n + 1),
                entry: AccessLogEntry(
                    time: Date(timeIntervalSince1970: 1_767_000_000 + Double(n)), event: .read,
                    requester: AccessLogRequester(
                        pid: Int32(10 + n), executable: e.0, argv0: "x", parents: e.4, tty: "/dev/pts/3"),
                    item: ItemKey(service: e.1, account: "ana"), channel: e.2, decision: e.3, detail: "rule any"))
        }
    }

    private func opened() throws -> Harness {
        let h = try Harness.unlocked(
            items: [Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "s3cret"))])
        h.store.accessLogRecords = Self.records()
        h.send(.showAccessLog)
        return h
    }

    @Test func f4ReadsTheLogThroughTheStoreNewestFirst() throws {
        let h = try opened()
        #expect(h.app.overlay == .accessLog)
        #expect(h.store.calls["accessLog"] == 1)
        let screen = try #require(h.main.accessLog)
        #expect(screen.view.visible.map(\.index) == [3, 2, 1])
        #expect(screen.view.rows[0].item == "wifi/ana")
        #expect(screen.view.statusLine == "3 entries; the log verifies")
    }

    @Test func typingNarrowsAndEscClearsThenCloses() throws {
        let h = try opened()
        h.send(.insert("python"))
        #expect(h.main.accessLog?.view.visible.map(\.index) == [2])
        #expect(h.main.accessLog?.query.text == "python")
        h.send(.deleteBackward)
        #expect(h.main.accessLog?.query.text == "pytho")
        h.send(.clearField, .insert("GIT"))
        #expect(h.main.accessLog?.view.visible.map(\.index) == [3, 1])
        h.send(.cancel)
        #expect(h.main.accessLog?.query.text == "")
        #expect(h.main.accessLog?.view.visible.count == 3)
        #expect(h.app.overlay == .accessLog)
        h.send(.cancel)
        #expect(h.app.overlay == nil)
        #expect(h.main.accessLog == nil)
    }

    @Test func enterShowsTheProgramWithItsParents() throws {
        let h = try opened()
        h.send(.moveSelection(2))
        #expect(h.main.accessLog?.view.selected?.index == 1)
        #expect(h.main.accessLog?.showsDetails == false)
        h.send(.submit)
        let details = try #require(h.main.accessLog?.details)
        #expect(h.main.accessLog?.showsDetails == true)
        #expect(details.contains("program /usr/bin/git"))
        #expect(details.contains("run by bash(100) < tmux(1)"))
        #expect(details.contains("on /dev/pts/3"))
        #expect(details.contains("detail rule any"))
        #expect(details.first == "entry 1: read, allowed-rule")
        h.send(.submit)
        #expect(h.main.accessLog?.showsDetails == false)
        h.send(.showAccessLog)
        #expect(h.app.overlay == nil)
    }

    @Test func aStoreThatCannotReadTheLogSaysWhyAndOpensNothing() throws {
        let h = try Harness.unlocked()
        h.store.failure = .interactionNotAllowed("the agent holds the vault locked; run 'fob unlock'")
        h.send(.showAccessLog)
        #expect(h.app.overlay == nil)
        #expect(h.main.accessLog == nil)
        #expect(h.message.hasPrefix("Access log: "))
        #expect(h.message.contains("run 'fob unlock'"))
    }

    @Test func theLogsProblemsShow() throws {
        let h = try Harness.unlocked()
        h.store.accessLogRecords = Self.records()
        h.store.accessLogProblems = ["access log vault.db.log: entry 2 was removed"]
        h.send(.showAccessLog)
        #expect(
            h.main.accessLog?.view.statusLine
                == "3 entries; DOES NOT VERIFY: access log vault.db.log: entry 2 was removed")
    }

    @Test func theIdleLockDropsTheLog() throws {
        let h = try opened()
        h.clock.advance(by: 301)
        h.app.tick()
        #expect(h.app.mainModel == nil)
        #expect(h.app.overlay == nil)
    }
}

import FobSystem
import FobTestSupport
import Foundation
import Testing

@testable import FobStore
@testable import FobTerminal
@testable import FobViewModels

/// The access log view (F4) and the editor's Access rows on screen, at
/// 80×24 and 40×12: every fact of an entry stays, no secret ever shows.
@Suite struct AccessRenderTests {
    static func records() -> [AccessLogRecord] {
        let entries: [(String, String, AccessChannel, AccessDecision)] = [
            ("/usr/bin/git", "mail", .git, .allowedRule),
            ("/usr/bin/python3", "mail", .secretService, .denied),
            ("/usr/bin/git", "wifi", .command("get"), .allowedOnce),
        ]
        return entries.enumerated().map { n, e in
            AccessLogRecord(
                index: UInt64(n + 1),
                entry: AccessLogEntry(
                    time: Date(timeIntervalSince1970: 1_767_000_000 + Double(n)), event: .read,
                    requester: AccessLogRequester(
                        pid: Int32(10 + n), executable: e.0, parents: ["bash(100)", "tmux(1)"]),
                    item: ItemKey(service: e.1, account: "ana"), channel: e.2, decision: e.3))
        }
    }

    private func logApp() -> AppModel {
        let made = makeTestApp(items: [("mail", "ana", "s3cret")])
        made.store.accessLogRecords = Self.records()
        made.app.send(.showAccessLog)
        return made.app
    }

    @Test func theLogAt80x24ShowsEveryEntryNewestFirst() throws {
        try #require(unicodeLocale)
        let app = logApp()
        let canvas = draw(app, rows: 24, columns: 80)
        let lines = (0..<24).map(canvas.line)
        #expect(canvas.text.contains("Access log"))
        #expect(canvas.text.contains("3 entries; the log verifies"))
        #expect(canvas.text.contains("time     decision           channel        item               program"))
        let time = { (n: Double) in DateText.local(Date(timeIntervalSince1970: 1_767_000_000 + n), "%H:%M:%S") }
        let newest = try #require(lines.firstIndex { $0.contains("wifi/ana") })
        let oldest = try #require(lines.firstIndex { $0.contains(time(0)) })
        #expect(newest < oldest)
        for part in [time(2), "allowed-once", "get", "wifi/ana", "git (12)"] {
            #expect(lines[newest].contains(part), "\(part)")
        }
        #expect(
            lines.contains { $0.contains("denied") && $0.contains("secret-service") && $0.contains("python3 (11)") })
        let column = try #require(
            lines[newest].range(of: "wifi/ana").map {
                lines[newest].distance(from: lines[newest].startIndex, to: $0.lowerBound)
            })
        #expect(canvas[newest, column].role == .selection)
        #expect(!canvas.text.contains("s3cret"))
        let legend = lines[23]
        for key in ["Enter details", "Esc clear/close", "F4 close"] { #expect(legend.contains(key), "\(key)") }
        // The cursor sits in the query, where typing goes.
        let cursor = try #require(canvas.cursor)
        #expect(canvas.line(cursor.row).contains("Find"))
    }

    @Test func theLogAt40x12TakesTwoLinesAnEntry() throws {
        try #require(unicodeLocale)
        let app = logApp()
        app.send(.insert("mail"))
        let canvas = draw(app, rows: 12, columns: 40)
        let text = canvas.text
        #expect(text.contains("2 of 3 entries; the log verifies"))
        #expect(text.contains("denied mail/ana"))
        #expect(text.contains("python3 (11) · secret-service"))
        #expect(!text.contains("wifi"))
        // The details on a small screen: the program and its parents first.
        app.send(.submit)
        let details = draw(app, rows: 12, columns: 40).text
        #expect(details.contains("denied mail/ana"))
        #expect(details.contains("program /usr/bin/python3"))
        #expect(details.contains("run by bash(100) < tmux(1)"))
    }

    @Test func enterShowsTheParentsBelowTheRows() throws {
        try #require(unicodeLocale)
        let app = logApp()
        app.send(.submit)
        let text = draw(app, rows: 24, columns: 80).text
        #expect(text.contains("run by bash(100) < tmux(1)"))
        #expect(text.contains("program /usr/bin/git"))
        #expect(text.contains("on no terminal"))
    }

    @Test func theEditorShowsTheAccessRowsAt80x24() throws {
        try #require(unicodeLocale)
        let made = makeTestApp()
        var item = Item(service: "mail", account: "ana", secret: SecretBytes(utf8: "s3cret"))
        item.accessRule = AccessRule(
            mode: nil, forwarded: .ask,
            trusted: [
                TrustedProgram(
                    path: "/usr/bin/git",
                    identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 0))
            ])
        made.store.externalPut(item)
        made.store.accessDefaultMode = .ask
        let app = made.app
        app.tick()
        app.send(.editSelected)
        app.send(.focus(.accessMode))
        var canvas = draw(app, rows: 24, columns: 80)
        var cursor = try #require(canvas.cursor)
        #expect(canvas.line(cursor.row).contains("Access"))
        #expect(canvas.line(cursor.row).contains("< default (ask) >"))
        #expect(canvas.line(23).contains("Left/Right change"))
        app.send(.focus(.accessForwarded))
        canvas = draw(app, rows: 24, columns: 80)
        cursor = try #require(canvas.cursor)
        #expect(canvas.line(cursor.row).contains("Forwarded"))
        #expect(canvas.line(cursor.row).contains("< ask >"))
        app.send(.focus(.accessPrograms))
        canvas = draw(app, rows: 24, columns: 80)
        cursor = try #require(canvas.cursor)
        #expect(canvas.line(cursor.row).contains("Programs"))
        #expect(canvas.line(cursor.row).contains("trusted /usr/bin/git"))
        #expect(canvas.line(23).contains("Del remove"))
        #expect(!canvas.text.contains("s3cret"))
    }
}

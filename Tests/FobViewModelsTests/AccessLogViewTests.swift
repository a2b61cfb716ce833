import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobStore

/// The access log view: newest first, filtered as typed and by the picked item or program.
@Suite struct AccessLogViewTests {
    private func report() -> AccessLogReport {
        var report = AccessLogReport()
        let entries = [
            ("/usr/bin/git", "mail", "ana", AccessChannel.git, AccessDecision.allowedRule),
            ("/usr/bin/python3", "mail", "ana", .secretService, .denied),
            ("/usr/bin/git", "wifi", "home", .git, .allowedOnce),
        ]
        report.records = entries.enumerated().map { n, e in
            AccessLogRecord(
                index: UInt64(n + 1),
                entry: AccessLogEntry(
                    time: Date(timeIntervalSince1970: 1_767_000_000 + Double(n)), event: .read,
                    requester: AccessLogRequester(pid: Int32(10 + n), executable: e.0),
                    item: ItemKey(service: e.1, account: e.2), channel: e.3, decision: e.4))
        }
        return report
    }

    @Test func showsTheNewestFirstWithRows() {
        let view = AccessLogView(report: report())
        #expect(view.visible.map(\.index) == [3, 2, 1])
        #expect(view.rows.first?.item == "wifi/home")
        #expect(view.rows.first?.program == "/usr/bin/git (12)")
        #expect(view.rows[1].channel == "secret-service")
        #expect(view.rows[1].decision == "denied")
        #expect(view.statusLine == "3 entries; the log verifies")
    }

    @Test func filtersByTypedTextKeepingTheSelection() {
        var view = AccessLogView(report: report())
        view.move(by: 1)
        #expect(view.selected?.index == 2)
        view.filter.text = "MAIL"
        #expect(view.visible.map(\.index) == [2, 1])
        #expect(view.selected?.index == 2)
        view.filter.text = "denied"
        #expect(view.visible.map(\.index) == [2])
        #expect(view.statusLine == "1 of 3 entries; the log verifies")
        view.filter.text = "nothing like it"
        #expect(view.visible.isEmpty)
        #expect(view.selected == nil)
        view.move(by: 1)
        #expect(view.selection == 0)
    }

    @Test func picksTheSelectedItemOrProgramAndBack() {
        var view = AccessLogView(report: report())
        view.toggleSelectedProgram()
        #expect(view.visible.map(\.index) == [3, 1])
        view.toggleSelectedProgram()
        #expect(view.visible.count == 3)
        view.move(by: 2)
        view.toggleSelectedItem()
        #expect(view.visible.map(\.index) == [2, 1])
        view.move(by: 5)
        #expect(view.selected?.index == 1)
        view.toggleSelectedItem()
        #expect(view.visible.count == 3)
        #expect(view.selected?.index == 1)
    }

    @Test func saysWhenTheLogDoesNotVerify() {
        var broken = report()
        broken.problems = [.removed(file: "vault.db.log", first: 2, last: 2), .tailRemoved(recorded: 9, found: 3)]
        #expect(
            AccessLogView(report: broken).statusLine
                == "3 entries; DOES NOT VERIFY: access log vault.db.log: entry 2 was removed (and 1 more; run fob verify)"
        )
    }

    @Test func loadsAVaultsLog() throws {
        let t = try TestVault()
        #expect(try AccessLogView.load(from: t.vault, headDirectory: nil).records.isEmpty)
        let key = try #require(try t.vault.accessLogKey(create: true))
        try AccessLogWriter(
            location: AccessLogLocation(vaultURL: t.vault.url), keys: AccessLogKeys(logKey: key), headDirectory: nil
        ).append(report().records.map(\.entry))
        let view = try AccessLogView.load(from: t.vault, headDirectory: nil)
        #expect(view.records.map(\.entry) == report().records.reversed().map(\.entry))
        #expect(view.problems.isEmpty)
    }
}

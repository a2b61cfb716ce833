import Testing

@testable import FobCLI

/// The command line's tables: padding in terminal cells, the yielding
/// columns cut to fit a terminal's width, and the cut itself.
@Suite struct TextTableTests {
    static let rows = [
        ["TIME", "DECISION", "ITEM", "PROGRAM"],
        [
            "2026-12-05T10:00:00Z", "allowed-until-lock", "mail.example.com/ana",
            "/usr/lib/git-core/git-remote-https (4242)",
        ],
        ["2026-12-05T10:01:00Z", "denied", "wifi/home", "/usr/bin/curl (7)"],
    ]

    func lines(_ table: TextTable, width: Int?, ellipsis: String = "…") -> [String] {
        String(decoding: table.render(width: width, ellipsis: ellipsis), as: UTF8.self)
            .split(separator: "\n").map(String.init)
    }

    @Test func withoutAWidthEveryCellIsWholeAndPadded() {
        let out = lines(TextTable(rows: Self.rows, maximumCells: nil, yielding: [[2, 3]]), width: nil)
        #expect(
            out[1]
                == "2026-12-05T10:00:00Z  allowed-until-lock  mail.example.com/ana  /usr/lib/git-core/git-remote-https (4242)"
        )
        #expect(out[2] == "2026-12-05T10:01:00Z  denied              wifi/home             /usr/bin/curl (7)")
    }

    @Test func theYieldingColumnsGiveWayAndTheOthersStayWhole() {
        let table = TextTable(rows: Self.rows, yielding: [[2, 3]], cutAtStart: [3])
        let out = lines(table, width: 70)
        for line in out { #expect(line.count <= 70, "\(line)") }
        #expect(out[1].hasPrefix("2026-12-05T10:00:00Z  allowed-until-lock  "))
        #expect(out[1].hasSuffix("  …https (4242)"), "\(out[1])")
        #expect(out[1].contains("  mail.example…  "), "\(out[1])")
        #expect(out[2].hasPrefix("2026-12-05T10:01:00Z  denied              wifi/home "), "\(out[2])")
        // The widest yielding column gives way first: both end the same width.
        #expect(TextTable.fit([20, 18, 20, 41], to: 70, yielding: [[2, 3]]) == [20, 18, 13, 13])
    }

    @Test func laterGroupsGiveWayOnlyAfterTheFirstIsAtItsMinimum() {
        #expect(TextTable.fit([20, 20, 30, 30], to: 60, yielding: [[2, 3], [1]]) == [20, 18, 8, 8])
        // What cannot fit stays at the minimum; the rest is left to the terminal.
        #expect(TextTable.fit([20, 20, 30], to: 10, yielding: [[2]]) == [20, 20, 8])
        #expect(TextTable.fit([4, 4], to: 80, yielding: [[0, 1]]) == [4, 4])
    }

    @Test func theCutKeepsWholeClustersWithinTheLimit() {
        #expect(TextTable.cut("abcdefghij", toCells: 6, ellipsis: "…") == "abcde…")
        #expect(TextTable.cut("abcdefghij", toCells: 6, ellipsis: "...") == "abc...")
        #expect(TextTable.cut("abcdefghij", toCells: 6, ellipsis: "...", atStart: true) == "...hij")
        #expect(TextTable.cut("abcdefghij", toCells: 10, ellipsis: "…") == "abcdefghij")
        #expect(TextTable.cut("密码密码", toCells: 6, ellipsis: "…", atStart: true).count <= 4)
    }
}

@preconcurrency import Glibc
import Testing

@testable import FobTerminal

/// wcwidth follows LC_CTYPE: these tests measure under C.UTF-8.
private let utf8Locale: Bool = setlocale(LC_CTYPE, "C.UTF-8") != nil

@Suite struct DisplayWidthTests {
    @Test func clustersHaveTheirCellWidths() throws {
        try #require(utf8Locale)
        #expect(DisplayWidth.cells(of: "café") == 4)
        #expect(DisplayWidth.cells(of: "cafe\u{301}") == 4)
        #expect(DisplayWidth.cells(of: "密码") == 4)
        #expect(DisplayWidth.cells(of: "🔑") == 2)
        #expect(DisplayWidth.cells(of: "❤\u{FE0F}") == 2)
        #expect(DisplayWidth.cells(of: Character("\u{7}")) == nil)
        #expect(DisplayWidth.cells(of: Character("\u{301}")) == nil)
    }

    @Test func columnsLineUpAfterMixedText() throws {
        try #require(utf8Locale)
        var canvas = Canvas(rows: 4, columns: 12, glyphs: .unicodeSet)
        for (i, name) in ["café", "cafe\u{301}", "密码", "🔑ab"].enumerated() {
            canvas.put(name, row: i, column: 0, width: 6)
            canvas.put("|", row: i, column: 6)
        }
        for row in 0..<4 { #expect(canvas[row, 6].text == "|") }
        #expect(canvas.line(2) == "密码  |     ")
    }

    @Test func truncationEndsWithEllipsisAndNeverOverflows() throws {
        try #require(utf8Locale)
        let g = Glyphs.unicodeSet
        #expect(TextFit.truncate("password", width: 5, glyphs: g) == "pass…")
        #expect(TextFit.truncate("pass", width: 5, glyphs: g) == "pass")
        #expect(TextFit.truncate("密码密码", width: 5, glyphs: g) == "密码…")
        #expect(TextFit.truncate("密码密码", width: 4, glyphs: g) == "密…")
        #expect(TextFit.truncate("🔑🔑", width: 3, glyphs: g) == "🔑…")
        #expect(TextFit.truncate("abc", width: 0, glyphs: g) == "")
        var canvas = Canvas(rows: 1, columns: 10, glyphs: g)
        canvas.put("0123456789ABC", row: 0, column: 3, width: 4)
        #expect(canvas.line(0) == "   012…   ")
        canvas.put("密码密码", row: 0, column: 7)
        #expect(canvas.line(0) == "   012…密…")
    }

    @Test func nonUTF8LocaleShowsReplacements() {
        let g = Glyphs.asciiSet
        #expect(TextFit.truncate("café 密", width: 10, glyphs: g) == "caf? ?")
        #expect(TextFit.truncate("åäö€ long text", width: 8, glyphs: g) == "???? lo~")
    }

    @Test func controlCharactersAreReplaced() throws {
        try #require(utf8Locale)
        #expect(TextFit.truncate("a\u{1B}[31mb", width: 10, glyphs: .unicodeSet) == "a\u{FFFD}[31mb")
    }

    @Test func wideClusterOverwrittenByNarrowLeavesNoHalf() throws {
        try #require(utf8Locale)
        var canvas = Canvas(rows: 1, columns: 4, glyphs: .unicodeSet)
        canvas.put("密", row: 0, column: 0)
        canvas.put("x", row: 0, column: 1)
        #expect(canvas[0, 0].text == " ")
        #expect(canvas.line(0) == " x  ")
        canvas.put("码", row: 0, column: 2)
        canvas.put("y", row: 0, column: 2)
        #expect(canvas.line(0) == " xy ")
    }
}

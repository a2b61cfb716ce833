import Foundation
import Testing

@testable import FobImport

/// The fixtures directory (files made as each tool makes them; see docs/import-export.md).
func fixture(_ name: String) throws -> [UInt8] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/\(name)")
    return Array(try Data(contentsOf: url))
}

@Suite struct CSVReaderTests {
    @Test func quotedFieldsWithCommasQuotesAndLineBreaksAreReadExactly() throws {
        let text = "a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\"l1\r\nl2\nl3\"\r\nplain,,end\n"
        let records = try CSVReader.records(Array(text.utf8))
        #expect(
            records.map(\.fields) == [["a", "b", "c"], ["x,1", "say \"hi\"", "l1\r\nl2\nl3"], ["plain", "", "end"]])
        #expect(records.map(\.line) == [1, 2, 5])
    }

    @Test func aLastRecordWithoutNewlineAndBlankLinesAreHandled() throws {
        #expect(try CSVReader.records(Array("a,b\n\n1,2".utf8)).map(\.fields) == [["a", "b"], ["1", "2"]])
        #expect(try CSVReader.records(Array("a\r\r\nb".utf8)).map(\.fields) == [["a"], ["b"]])
        #expect(try CSVReader.records(Array("x,\"\"".utf8)).map(\.fields) == [["x", ""]])
    }

    @Test func badQuotingIsAnErrorNamingTheLine() {
        #expect(
            throws: ImportError.malformed(
                "line 2: a quote inside an unquoted field (quote the whole field and write the quote twice)")
        ) {
            try CSVReader.records(Array("a,b\nx\"y,z\n".utf8))
        }
        #expect(
            throws: ImportError.malformed(
                "line 3: text after a closing quote (write a quote inside a quoted field twice)")
        ) {
            try CSVReader.records(Array("a,b\n\"ok\",1\n\"x\"y,2\n".utf8))
        }
        #expect(
            throws: ImportError.malformed(
                "line 2: a quoted field is not closed by the end of the file (is it truncated?)")
        ) {
            try CSVReader.records(Array("a,b\n1,\"unfinished\nmore".utf8))
        }
    }

    @Test func recordsMustHaveTheHeadersFieldCount() {
        #expect(throws: ImportError.malformed("line 2: 3 fields, but the header has 2 (an unquoted comma?)")) {
            try CSVReader.table(Array("a,b\n1,2,3\n".utf8))
        }
        #expect(throws: ImportError.malformed("line 3: 1 fields, but the header has 2 (is the file truncated?)")) {
            try CSVReader.table(Array("a,b\n1,2\n3".utf8))
        }
        #expect(throws: ImportError.malformed("the file is empty: no header line")) { try CSVReader.table([]) }
    }

    @Test func extraAndReorderedColumnsAreAcceptedMissingOnesNamed() throws {
        let table = try CSVReader.table(Array("extra,Password,title,USERNAME\nz,p,t,u\n".utf8))
        let columns = try table.columns(required: ["Title", "Username", "Password"])
        #expect(columns == ["Title": 2, "Username": 3, "Password": 1])
        #expect(throws: ImportError.missingColumns(["URL"])) { try table.columns(required: ["Title", "URL"]) }
    }

    @Test func utf8WithBOMIsFineOtherEncodingsNameTheLine() throws {
        #expect(try TextDecoding.utf8([0xEF, 0xBB, 0xBF] + Array("a,é".utf8)) == Array("a,é".utf8))
        let latin1: [UInt8] = Array("name,pw\nok,1\ncaf".utf8) + [0xE9] + Array(",2\n".utf8)
        #expect(
            throws: ImportError.encoding(
                line: 3, "the text is not valid UTF-8; name its encoding with --encoding (such as windows-1252)")
        ) {
            try TextDecoding.utf8(latin1)
        }
        #expect(try TextDecoding.utf8(latin1, encoding: "latin1") == Array("name,pw\nok,1\ncafé,2\n".utf8))
        #expect(try TextDecoding.utf8(latin1, encoding: "Windows-1252") == Array("name,pw\nok,1\ncafé,2\n".utf8))
        #expect(
            throws: ImportError.encoding(line: 1, "the text is UTF-16, not UTF-8; import it with --encoding utf-16")
        ) {
            try TextDecoding.utf8([0xFF, 0xFE, 0x61, 0x00])
        }
        #expect(try TextDecoding.utf8([0xFF, 0xFE, 0x61, 0x00, 0x2C, 0x00], encoding: "utf-16") == Array("a,".utf8))
    }
}

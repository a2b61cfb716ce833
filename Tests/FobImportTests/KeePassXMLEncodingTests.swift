import FobImport
import FobXML
import Foundation
import Testing

/// An XML export names its own encoding (XML 1.0 §4.3.3): KeePassXC writes
/// UTF-8, and a file saved again by an editor in another encoding must read
/// the same, with no `--encoding` (which is for the CSV formats).
@Suite struct KeePassXMLEncodingTests {
    private func document(declaration: String) -> String {
        declaration + """

            <KeePassFile><Root><Group><Name>Root</Name><Entry>
            <String><Key>Title</Key><Value>Café</Value></String>
            <String><Key>UserName</Key><Value>zoë</Value></String>
            <String><Key>Password</Key><Value>pässwörd</Value></String>
            </Entry></Group></Root></KeePassFile>
            """
    }

    private func entry(_ bytes: [UInt8]) throws -> (String, String, String?) {
        let read = try KeePassXML.read(bytes, parser: LibXMLEvents.parser)
        let item = try #require(read.entries.first?.item)
        return (item.service, item.account, item.secret?.unsafeString)
    }

    @Test(arguments: [
        ("ISO-8859-1", String.Encoding.isoLatin1), ("windows-1252", .windowsCP1252), ("latin1", .isoLatin1),
    ])
    func aDeclaredLegacyEncodingIsRead(name: String, encoding: String.Encoding) throws {
        let text = document(declaration: #"<?xml version="1.0" encoding="\#(name)"?>"#)
        let bytes = try #require(text.data(using: encoding))
        #expect(String(data: bytes, encoding: .utf8) == nil, "the file really is not UTF-8")
        #expect(try entry(Array(bytes)) == ("Café", "zoë", "pässwörd"))
    }

    @Test func utf16WithAByteOrderMarkIsRead() throws {
        let text = document(declaration: #"<?xml version="1.0" encoding="UTF-16"?>"#)
        let bytes = try #require(text.data(using: .utf16)) // with a byte-order mark
        #expect(try entry(Array(bytes)) == ("Café", "zoë", "pässwörd"))
    }

    @Test func utf8IsReadWithOrWithoutItsDeclaration() throws {
        for declaration in [
            #"<?xml version="1.0" encoding="UTF-8"?>"#, #"<?xml version='1.0' encoding = 'utf-8' ?>"#, "",
        ] {
            #expect(try entry(Array(document(declaration: declaration).utf8)) == ("Café", "zoë", "pässwörd"))
        }
    }

    @Test func anUnknownDeclaredEncodingIsNamed() {
        let bytes = Array(document(declaration: #"<?xml version="1.0" encoding="EBCDIC-XY"?>"#).utf8)
        do {
            _ = try KeePassXML.read(bytes, parser: LibXMLEvents.parser)
            Issue.record("an unknown encoding must be refused")
        } catch {
            guard case .encoding(1, let text) = error else {
                Issue.record("not .encoding: \(error)")
                return
            }
            #expect(text.hasPrefix("the XML declares the encoding \"EBCDIC-XY\", which Fob cannot read"))
        }
    }

    @Test func bytesThatAreNotUTF8WithoutADeclarationNeverSuggestEncodingOption() throws {
        let bytes = try #require(document(declaration: "").data(using: .isoLatin1))
        do {
            _ = try KeePassXML.read(Array(bytes), parser: LibXMLEvents.parser)
            Issue.record("invalid UTF-8 must be refused")
        } catch {
            #expect(!error.description.contains("--encoding"))
            #expect(error.description.contains("not valid UTF-8"))
        }
    }

    @Test func aFileInOneEncodingDeclaringAnotherIsRefusedNotGarbled() throws {
        // UTF-8 bytes that claim UTF-16: never imported as mojibake.
        let bytes = Array(document(declaration: #"<?xml version="1.0" encoding="utf-16"?>"#).utf8)
        #expect(throws: ImportError.malformed("line 1: not an XML document; is it a KeePassXC XML export?")) {
            try KeePassXML.read(bytes, parser: LibXMLEvents.parser)
        }
    }

    /// A broken declaration is refused, never dropped with what follows it,
    /// in a transcoded document as in a UTF-8 one.
    @Test func aBrokenDeclarationIsRefusedInEveryEncoding() throws {
        let text = document(declaration: #"<?xml version="1.0" encoding="UTF-16"?x><?xml?>"#)
        let utf16 = try #require(text.data(using: .utf16))
        #expect(throws: ImportError.malformed("line 1: a broken XML declaration")) {
            try KeePassXML.read(Array(utf16), parser: LibXMLEvents.parser)
        }
        #expect(throws: ImportError.malformed("line 1: a broken XML declaration")) {
            try KeePassXML.read(Array(text.utf8), parser: LibXMLEvents.parser)
        }
    }
}

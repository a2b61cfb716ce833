import FobImport
import FobTestSupport
import FobXML
import Foundation
import Testing

/// Every seed and saved crasher of the import fuzz targets, replayed through
/// the readers: each gives entries or a typed error, never a crash.
@Suite struct ImportFuzzCorpusTests {
    @Test func everyCorpusFileReadsOrFailsCleanly() {
        for (_, bytes) in FuzzCorpus.inputs("import-csv") {
            _ = try? CSVReader.records(bytes)
            _ = try? CSVFormats.keepassxc(bytes)
            _ = try? CSVFormats.bitwarden(bytes)
            _ = try? CSVFormats.fob(bytes)
        }
        for (_, bytes) in FuzzCorpus.inputs("import-keepassxc-xml") {
            _ = try? KeePassXML.read(bytes, parser: LibXMLEvents.parser)
        }
        for (_, bytes) in FuzzCorpus.inputs("import-json") {
            _ = try? BitwardenJSON.read(bytes)
            _ = try? FobJSON.read(bytes)
        }
        for (_, bytes) in FuzzCorpus.inputs("import-pass") { _ = try? PassStore.parse(bytes, name: "x") }
        #expect(!FuzzCorpus.inputs("import-keepassxc-xml").isEmpty)
    }

    /// A declaration with no version, or whose `?>` is taken from a later
    /// `<?xml?>`, is refused before libxml2 sees it (found by the fuzz
    /// target); other processing instructions are read past: a document of
    /// no entries, not an error.
    @Test(arguments: [
        ("<?xml?><KeePassFile></KeePassFile>", "line 1: an XML declaration without a version"),
        ("<?xml version=\"1.0\"?><?x?><KeePassFile></KeePassFile>", nil),
        ("<KeePassFile><?x?></KeePassFile>", nil),
        ("<?xml version=\"1.0\"?Int><KeePass<?xml?><KeePassFile></KeePassFile>", "line 1: a broken XML declaration"),
        (
            "<?xml version=\"1.0\" encoding=\"latin1\"?x><?xml?><KeePassFile></KeePassFile>",
            "line 1: a broken XML declaration"
        ),
    ])
    func processingInstructionsAndBrokenDeclarations(text: String, refusal: String?) throws {
        if let refusal {
            #expect(throws: ImportError.malformed(refusal)) {
                try KeePassXML.read(Array(text.utf8), parser: LibXMLEvents.parser)
            }
        } else {
            #expect(try KeePassXML.read(Array(text.utf8), parser: LibXMLEvents.parser).entries.isEmpty)
        }
    }

    @Test func aProcessingInstructionInsideCDATAOrACommentIsText() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- <?not one?> -->
            <KeePassFile><Root><Group><Name>Root</Name><Entry><String><Key>Title</Key><Value>t</Value></String>
            <String><Key>Password</Key><Value><![CDATA[p<?x?>w]]></Value></String></Entry></Group></Root></KeePassFile>
            """
        let read = try KeePassXML.read(Array(text.utf8), parser: LibXMLEvents.parser)
        #expect(read.entries.count == 1)
        #expect(read.entries.first?.item.secret?.unsafeString == "p<?x?>w")
    }
}

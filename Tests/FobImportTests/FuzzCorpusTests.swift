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

    /// FoundationXML crashed on a processing instruction without data; such
    /// a file is now refused before it is parsed.
    @Test(arguments: [
        "<?xml?><KeePassFile></KeePassFile>", "<?xml version=\"1.0\"?><?x?><KeePassFile></KeePassFile>",
        "<KeePassFile><?x?></KeePassFile>",
        // The declaration's `?>` taken from a later `<?xml?>`: libxml2 then crashed on that one.
        "<?xml version=\"1.0\"?Int><KeePass<?xml?><KeePassFile></KeePassFile>",
        "<?xml version=\"1.0\" encoding=\"latin1\"?x><?xml?><KeePassFile></KeePassFile>",
    ])
    func processingInstructionsAreRefused(text: String) {
        #expect(throws: ImportError.self) { try KeePassXML.read(Array(text.utf8), parser: LibXMLEvents.parser) }
        do {
            _ = try KeePassXML.read(Array(text.utf8), parser: LibXMLEvents.parser)
        } catch {
            guard case .malformed = error else {
                Issue.record("not .malformed: \(error)")
                return
            }
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

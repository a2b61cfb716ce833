import FobImport
import FobTestSupport
import FobXML
import Foundation
import Testing

/// The XML events that KeePass XML import reads, and how the `fob-xml`
/// helper hands them back.
@Suite struct XMLEventTests {
    let document = Array(
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <KeePassFile><Meta a="1" b="&amp;"/><Root>t&lt;x<![CDATA[<raw>]]>é</Root></KeePassFile>
        """.utf8)

    @Test func libxml2ParserReportsEveryEventInOrder() {
        let list = LibXMLEvents.parse(document)
        #expect(list.errorLine == nil)
        #expect(list.events.first == .start("KeePassFile", attributes: [:]))
        #expect(list.events.contains(.start("Meta", attributes: ["a": "1", "b": "&"])))
        let rootText = list.events.compactMap { if case .text(let t) = $0 { return t } else { return nil } }.joined()
        #expect(rootText == "t<x<raw>é")
        #expect(list.events.last == .end("KeePassFile"))
    }

    @Test func aBrokenDocumentNamesTheLineOfItsError() {
        let list = LibXMLEvents.parse(Array("<KeePassFile>\n<Root>\n</Wrong>\n".utf8))
        #expect(list.errorLine == 3)
        #expect(list.events.first == .start("KeePassFile", attributes: [:]))
    }

    @Test func theWireCarriesEventsUnchanged() throws {
        let list = LibXMLEvents.parse(document)
        #expect(try XMLEventWire.decode(XMLEventWire.encode(list)) == list)
        let broken = XMLEventList(events: [.start("a", attributes: ["k": "v"]), .text("p\u{0}w")], errorLine: 9)
        #expect(try XMLEventWire.decode(XMLEventWire.encode(broken)) == broken)
    }

    @Test(arguments: [
        [UInt8](), Array("FXE2".utf8), Array("FXE1".utf8) + [9], Array("FXE1".utf8) + [2, 0, 0, 0, 9, 65],
        Array("FXE1".utf8) + [1, 0, 0, 0, 1, 65, 0xFF, 0xFF, 0xFF, 0xFF],
        Array("FXE1".utf8) + [2, 0, 0, 0, 1, 0xC3], Array("FXE1".utf8) + [4, 0, 0, 0, 1, 3, 0, 0, 0, 1, 65],
    ])
    func aDamagedAnswerIsAnIOError(bytes: [UInt8]) {
        #expect(throws: ImportError.io("the XML helper's answer is damaged")) { try XMLEventWire.decode(bytes) }
    }

    @Test func theHelperProcessParsesAsTheInProcessParser() throws {
        let built = FobProcess.binaryURL.deletingLastPathComponent().appendingPathComponent("fob-xml").path
        let helper = HelperXMLParser(environment: ["FOB_XML_HELPER": built, "PATH": "/usr/bin:/bin"])
        #expect(try helper.parse(document) == LibXMLEvents.parse(document))
        let fixture = try [UInt8](
            Data(
                contentsOf: FobProcess.packageRoot.appendingPathComponent("Tests/FobImportTests/Fixtures/keepassxc.xml")
            ))
        let viaHelper = try KeePassXML.read(fixture, parser: helper.parse)
        let inProcess = try KeePassXML.read(fixture, parser: LibXMLEvents.parser)
        #expect(viaHelper.entries.map(\.item.service) == inProcess.entries.map(\.item.service))
        #expect(
            viaHelper.entries.map { $0.item.secret?.unsafeString }
                == inProcess.entries.map { $0.item.secret?.unsafeString })
        #expect(!viaHelper.entries.isEmpty)
    }

    @Test func aMissingOrFailingHelperIsAClearError() throws {
        let missing = HelperXMLParser(environment: ["FOB_XML_HELPER": "/nonexistent/fob-xml", "PATH": "/nonexistent"])
        #expect(throws: ImportError.io("fob-xml: no executable file at /nonexistent/fob-xml (FOB_XML_HELPER)")) {
            try missing.parse(document)
        }
        let failing = HelperXMLParser(environment: ["FOB_XML_HELPER": "/bin/false", "PATH": "/usr/bin:/bin"])
        do {
            _ = try failing.parse(document)
            Issue.record("a helper that fails must not look like an empty document")
        } catch {
            #expect(error.description.contains("fob-xml could not read the document"))
        }
        let talking = HelperXMLParser(environment: ["FOB_XML_HELPER": "/bin/cat", "PATH": "/usr/bin:/bin"])
        #expect(throws: ImportError.io("the XML helper's answer is damaged")) { try talking.parse(document) }
    }
}

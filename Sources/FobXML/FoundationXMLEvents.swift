import FobImport
import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// Parses XML with Foundation's `XMLParser` (libxml2) into ``XMLEvent``s.
/// Runs in the `fob-xml` helper, and in-process in tests and fuzz targets;
/// `fob` itself never links this module.
public enum FoundationXMLEvents {
    /// The events of `document`, up to its end or to its first error.
    /// External entities are never resolved.
    ///
    /// - Important: `XMLParser` crashes on a processing instruction without
    ///   data (`<?x?>`); ``KeePassXML/read(_:parser:)`` refuses every
    ///   processing instruction before it calls a parser.
    /// - Parameter document: UTF-8 bytes.
    /// - Returns: the events; ``XMLEventList/errorLine`` set when the
    ///   document is not well-formed.
    public static func parse(_ document: [UInt8]) -> XMLEventList {
        let parser = XMLParser(data: Data(document))
        parser.shouldResolveExternalEntities = false
        let recorder = Recorder()
        parser.delegate = recorder
        if !parser.parse() || recorder.errorLine != nil {
            recorder.list.errorLine = recorder.errorLine ?? max(1, parser.lineNumber)
        }
        if recorder.list.events.count >= XMLEventWire.maxEvents, recorder.list.errorLine == nil {
            recorder.list.errorLine = max(1, parser.lineNumber)
        }
        return recorder.list
    }

    /// The same, typed as an ``XMLEventParser``.
    public static let parser: XMLEventParser = { (document: [UInt8]) throws(ImportError) -> XMLEventList in
        parse(document)
    }

    private final class Recorder: NSObject, XMLParserDelegate {
        var list = XMLEventList()
        var errorLine: Int?

        private func add(_ event: XMLEvent, _ parser: XMLParser) {
            guard list.events.count < XMLEventWire.maxEvents else {
                parser.abortParsing()
                return
            }
            list.events.append(event)
        }

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            add(.start(name, attributes: attributes), parser)
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { add(.text(string), parser) }

        func parser(_ parser: XMLParser, foundCDATA block: Data) {
            add(.text(String(decoding: block, as: UTF8.self)), parser)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            add(.end(name), parser)
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
            if errorLine == nil { errorLine = max(1, parser.lineNumber) }
        }
    }
}

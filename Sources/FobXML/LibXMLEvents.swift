import CXML2
import FobImport
import FoundationEssentials

/// KeePass XML's events read with libxml2's SAX2 parser, for the
/// `fob-xml` helper: elements by their qualified names (`prefix:name`),
/// attributes with character references and the predefined entities
/// replaced, text and
/// CDATA sections as text (in as many pieces as libxml2 hands over).
///
/// Neither a DTD nor any external entity is loaded and nothing is fetched
/// over the network (`XML_PARSE_NONET`); entities the document declares
/// itself are not expanded. Past ``XMLEventWire/maxEvents`` events the
/// parse stops and the list ends with the line reached as its error.
public enum LibXMLEvents {
    /// Reads `document`.
    /// - Returns: the events in document order; `errorLine` is the line
    ///   (from 1) of the first error when the document is not well-formed.
    public static func parse(_ document: [UInt8]) -> XMLEventList {
        let recorder = Recorder()
        var handler = xmlSAXHandler()
        handler.initialized = UInt32(XML_SAX2_MAGIC)
        handler.startElementNs = {
            context, localName, prefix, _, namespaceCount, namespaces, attributeCount, _, attributes in
            let recorder = Recorder.from(context)
            var map: [String: String] = [:]
            if let namespaces {
                for i in 0..<Int(namespaceCount) {
                    let name = namespaces[2 * i].map { "xmlns:" + String(cString: $0) } ?? "xmlns"
                    map[name] = namespaces[2 * i + 1].map { String(cString: $0) } ?? ""
                }
            }
            if let attributes {
                for i in 0..<Int(attributeCount) {
                    let base = 5 * i
                    guard let local = attributes[base], let start = attributes[base + 3], let end = attributes[base + 4]
                    else { continue }
                    let value = String(
                        decoding: UnsafeBufferPointer(start: start, count: max(0, start.distance(to: end))),
                        as: UTF8.self)
                    // Without entity substitution (which would also load external
                    // entities), SAX2 hands a literal `&` on as `&#38;`.
                    map[Recorder.qualified(local, attributes[base + 1])] = value.replacing("&#38;", with: "&")
                }
            }
            recorder.add(.start(Recorder.qualified(localName, prefix), attributes: map))
        }
        handler.endElementNs = { context, localName, prefix, _ in
            Recorder.from(context).add(.end(Recorder.qualified(localName, prefix)))
        }
        handler.characters = { context, text, count in
            guard let text, count > 0 else { return }
            Recorder.from(context).add(
                .text(String(decoding: UnsafeBufferPointer(start: text, count: Int(count)), as: UTF8.self)))
        }
        handler.cdataBlock = handler.characters
        handler.serror = { context, error in
            guard let context, let error, error.pointee.level.rawValue >= XML_ERR_ERROR.rawValue else { return }
            let recorder = Unmanaged<Recorder>.fromOpaque(context).takeUnretainedValue()
            if recorder.errorLine == nil { recorder.errorLine = max(1, Int(error.pointee.line)) }
        }
        let user = Unmanaged.passUnretained(recorder).toOpaque()
        guard let context = xmlCreatePushParserCtxt(&handler, user, nil, 0, nil) else {
            return XMLEventList(events: [], errorLine: 1)
        }
        defer { xmlFreeParserCtxt(context) }
        xmlCtxtUseOptions(context, Int32(XML_PARSE_NONET.rawValue))
        recorder.context = context
        let result: Int32 = document.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                // libxml2 takes at most Int32.max bytes a call.
                var offset = 0
                var status: Int32 = 0
                repeat {
                    let count = min(chars.count - offset, 1 << 30)
                    let last = offset + count == chars.count
                    status = xmlParseChunk(context, chars.baseAddress.map { $0 + offset }, Int32(count), last ? 1 : 0)
                    offset += count
                } while status == 0 && offset < chars.count && !recorder.stopped
                return status
            }
        }
        var list = recorder.list
        if recorder.stopped {
            list.errorLine = list.errorLine ?? max(1, Int(fob_xml_line(context)))
        } else if result != 0 || fob_xml_well_formed(context) == 0 || recorder.errorLine != nil {
            list.errorLine = recorder.errorLine ?? max(1, Int(fob_xml_line(context)))
        }
        return list
    }

    /// ``parse(_:)`` as an ``XMLEventParser``.
    public static let parser: XMLEventParser = { (document: [UInt8]) throws(ImportError) -> XMLEventList in
        parse(document)
    }

    /// The events so far, for the SAX callbacks (their `ctx` is this object).
    private final class Recorder {
        var list = XMLEventList()
        var errorLine: Int?
        var stopped = false
        var context: xmlParserCtxtPtr?

        static func from(_ context: UnsafeMutableRawPointer?) -> Recorder {
            Unmanaged<Recorder>.fromOpaque(context!).takeUnretainedValue()
        }

        static func qualified(_ local: UnsafePointer<xmlChar>?, _ prefix: UnsafePointer<xmlChar>?) -> String {
            let name = local.map { String(cString: $0) } ?? ""
            guard let prefix else { return name }
            return String(cString: prefix) + ":" + name
        }

        func add(_ event: XMLEvent) {
            guard !stopped else { return }
            guard list.events.count < XMLEventWire.maxEvents else {
                stopped = true
                errorLine = errorLine ?? max(1, Int(fob_xml_line(context)))
                if let context { xmlStopParser(context) }
                return
            }
            list.events.append(event)
        }
    }
}

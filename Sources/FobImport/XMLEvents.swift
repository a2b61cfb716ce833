import FobStore
import FobSystem
import FoundationEssentials

/// One event of an XML document, in document order, as a streaming (SAX)
/// parser reports it. Entity references are already replaced; CDATA comes
/// as text.
public enum XMLEvent: Equatable, Sendable {
    /// An element opens: its name and attributes (name → value).
    case start(String, attributes: [String: String])
    /// Character data inside the current element (one element's text may
    /// come in several pieces).
    case text(String)
    /// An element closes.
    case end(String)
}

/// What a parser made of a document: its events up to the end, or up to
/// the first error and the line of that error.
public struct XMLEventList: Equatable, Sendable {
    /// Events in document order.
    public var events: [XMLEvent]
    /// The 1-based line of the first well-formedness error, or `nil` when
    /// the whole document parsed.
    public var errorLine: Int?

    /// - Parameters: as the properties (no events and no error by default).
    public init(events: [XMLEvent] = [], errorLine: Int? = nil) {
        self.events = events
        self.errorLine = errorLine
    }
}

/// Turns a document's bytes (UTF-8) into its events. Fob has two: the one
/// in-process (`FobXML`, on Foundation's `XMLParser`, which links libxml2)
/// and ``HelperXMLParser``, which runs that one in the `fob-xml` helper so
/// that `fob` itself loads no XML library.
/// - Throws: `.io` when the parser could not run at all.
public typealias XMLEventParser = @Sendable ([UInt8]) throws(ImportError) -> XMLEventList

/// How `fob-xml` hands its events back on its standard output: `FXE1`, then
/// records of a one-byte tag and big-endian 32-bit lengths: 1 start (name,
/// attribute count, name and value of each), 2 text, 3 end (name), 4 error
/// (line). The text may hold secrets: callers wipe their buffers.
public enum XMLEventWire {
    static let magic = Array("FXE1".utf8)
    /// The most events a document may produce: 16 million (a 64 MiB file of
    /// empty elements has fewer).
    public static let maxEvents = 1 << 24

    /// The message for `list`.
    public static func encode(_ list: XMLEventList) -> [UInt8] {
        var out = magic
        func u32(_ v: Int) {
            let n = UInt32(clamping: v)
            out += [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        }
        func text(_ s: String) {
            u32(s.utf8.count)
            out += s.utf8
        }
        for event in list.events {
            switch event {
            case .start(let name, let attributes):
                out.append(1)
                text(name)
                u32(attributes.count)
                for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
                    text(key)
                    text(value)
                }
            case .text(let s):
                out.append(2)
                text(s)
            case .end(let name):
                out.append(3)
                text(name)
            }
        }
        if let line = list.errorLine {
            out.append(4)
            u32(line)
        }
        return out
    }

    /// The events of a message from ``encode(_:)``; a pure function of
    /// untrusted bytes (the helper's output).
    /// - Throws: `.io` for anything that is not such a message.
    public static func decode(_ bytes: [UInt8]) throws(ImportError) -> XMLEventList {
        let broken = ImportError.io("the XML helper's answer is damaged")
        guard bytes.count >= magic.count, bytes[0..<magic.count].elementsEqual(magic) else { throw broken }
        var i = magic.count
        func u32() throws(ImportError) -> Int {
            guard bytes.count - i >= 4 else { throw broken }
            let v = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            i += 4
            return v
        }
        func text() throws(ImportError) -> String {
            let n = try u32()
            guard bytes.count - i >= n else { throw broken }
            defer { i += n }
            guard let s = String(validating: bytes[i..<(i + n)], as: UTF8.self) else { throw broken }
            return s
        }
        var list = XMLEventList()
        while i < bytes.count {
            guard list.errorLine == nil, list.events.count < maxEvents else { throw broken }
            let tag = bytes[i]
            i += 1
            switch tag {
            case 1:
                let name = try text()
                let count = try u32()
                guard count <= (bytes.count - i) / 8 else { throw broken }
                var attributes: [String: String] = [:]
                for _ in 0..<count {
                    let key = try text()
                    attributes[key] = try text()
                }
                list.events.append(.start(name, attributes: attributes))
            case 2: list.events.append(.text(try text()))
            case 3: list.events.append(.end(try text()))
            case 4: list.errorLine = try u32()
            default: throw broken
            }
        }
        return list
    }
}

/// Parses XML in `fob-xml`, a helper installed next to `fob`: the document
/// goes to its standard input and the events come back on its standard
/// output (``XMLEventWire``), so `fob` loads no XML library (libxml2 and
/// ICU cost every command a few milliseconds of start-up). A crash of the
/// parser ends only the helper.
public struct HelperXMLParser: Sendable {
    /// The helper's program name.
    public static let helperName = "fob-xml"
    /// The longest the helper may take, in seconds.
    public static let timeout: Double = 120

    private let environment: [String: String]

    /// - Parameter environment: where `FOB_XML_HELPER` may name the
    ///   helper's path, and the `PATH` to search; the helper itself gets
    ///   only `PATH`.
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// Where the helper is: `FOB_XML_HELPER`, else next to the running
    /// program (`/proc/self/exe`), else on `PATH`.
    public static func locate(environment: [String: String]) -> String? {
        ExecutableLookup.helper(helperName, override: "FOB_XML_HELPER", environment: environment)
    }

    /// Parses `document` in the helper and waits for it.
    /// - Throws: `.io` when the helper is missing, fails, takes longer than
    ///   ``timeout`` or answers something that is not an event list.
    public func parse(_ document: [UInt8]) throws(ImportError) -> XMLEventList {
        guard let path = HelperXMLParser.locate(environment: environment) else {
            if let named = environment["FOB_XML_HELPER"], !named.isEmpty {
                throw .io("\(HelperXMLParser.helperName): no executable file at \(named) (FOB_XML_HELPER)")
            }
            throw .io("\(HelperXMLParser.helperName) is not installed next to fob; it reads XML exports")
        }
        var result: ChildProcessResult
        do {
            result = try ChildProcessRunner.run(
                path, environment: ["PATH": environment["PATH"] ?? "/usr/bin:/bin"], input: document,
                maxOutput: 16 * document.count + (1 << 20), timeout: HelperXMLParser.timeout)
        } catch .timedOut {
            throw .io("\(HelperXMLParser.helperName) took longer than \(Int(HelperXMLParser.timeout)) s")
        } catch .notStarted(let why) {
            throw .io("cannot start \(HelperXMLParser.helperName): \(why)")
        } catch {
            throw .io("\(HelperXMLParser.helperName) could not read the document")
        }
        defer { result.wipe() }
        guard result.succeeded else { throw .io("\(HelperXMLParser.helperName) could not read the document") }
        return try XMLEventWire.decode(result.output)
    }
}

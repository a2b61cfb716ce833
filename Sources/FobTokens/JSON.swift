/// A JSON value (RFC 8259) that keeps what generic decoders lose: the order
/// of object members and the exact text of numbers, so that a claim such as
/// `1459872074.5` is shown and converted as the token wrote it.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, as its JSON literal (for example `-1.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The JSON type name, for messages ("a string", "an object", …).
    public var typeDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The string, if this is a JSON string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The object, if this is a JSON object.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// Parses one JSON text (RFC 8259) from UTF-8 bytes.
    ///
    /// Object member names must be unique (RFC 7519 §4 allows a parser to
    /// reject duplicates, and Fob does so everywhere). Nesting deeper than
    /// ``JSONParser/maxDepth`` is refused rather than risking the stack.
    /// - Parameter bytes: the JSON text, UTF-8 without a byte-order mark.
    /// - Throws: ``JSONError`` naming the byte offset and the problem.
    public static func parse<C: Collection>(_ bytes: C) throws(JSONError) -> JSONValue where C.Element == UInt8 {
        var parser = JSONParser(Array(bytes))
        return try parser.parseDocument()
    }

    /// The compact JSON text of this value (no insignificant whitespace);
    /// numbers are written as their literal, strings escaped per RFC 8259 §7.
    public var serialized: String {
        var out = ""
        write(to: &out, indent: nil, level: 0)
        return out
    }

    /// The JSON text indented by two spaces per level, one member per line.
    public var prettySerialized: String {
        var out = ""
        write(to: &out, indent: "  ", level: 0)
        return out
    }

    private func write(to out: inout String, indent: String?, level: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                JSONValue.newline(&out, indent: indent, level: level + 1)
                item.write(to: &out, indent: indent, level: level + 1)
            }
            JSONValue.newline(&out, indent: indent, level: level)
            out += "]"
        case .object(let object):
            if object.members.isEmpty { out += "{}"; return }
            out += "{"
            for (i, member) in object.members.enumerated() {
                if i > 0 { out += "," }
                JSONValue.newline(&out, indent: indent, level: level + 1)
                JSONValue.writeString(member.name, to: &out)
                out += indent == nil ? ":" : ": "
                member.value.write(to: &out, indent: indent, level: level + 1)
            }
            JSONValue.newline(&out, indent: indent, level: level)
            out += "}"
        }
    }

    private static func newline(_ out: inout String, indent: String?, level: Int) {
        guard let indent else { return }
        out += "\n" + String(repeating: indent, count: level)
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || (0x2028...0x2029).contains(scalar.value) {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

/// A JSON object whose members keep their order.
public struct JSONObject: Sendable, Equatable {
    /// One `"name": value` pair.
    public struct Member: Sendable, Equatable {
        /// The member name.
        public var name: String
        /// The member value.
        public var value: JSONValue
        /// A member.
        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// The members in document order; names are unique.
    public var members: [Member]

    /// An object with these members (names should be unique).
    public init(_ members: [Member] = []) { self.members = members }

    /// The value of member `name`, or `nil` when absent.
    public subscript(name: String) -> JSONValue? {
        members.first { $0.name == name }?.value
    }

    /// Appends a member, or replaces the value of an existing one.
    public mutating func set(_ name: String, _ value: JSONValue) {
        if let i = members.firstIndex(where: { $0.name == name }) {
            members[i].value = value
        } else {
            members.append(Member(name: name, value: value))
        }
    }
}

/// Why a JSON text could not be parsed.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset where the problem was found.
    public let offset: Int
    /// What is wrong, for example `expected ':'`.
    public let reason: String

    /// `reason at byte N`.
    public var description: String { "\(reason) at byte \(offset)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maxDepth = 200

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw fail("unexpected data after the JSON value") }
        return value
    }

    private func fail(_ reason: String) -> JSONError { JSONError(offset: index, reason: reason) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let b = current, b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { index += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONError) {
        guard current == byte else { throw fail("expected \(what)") }
        index += 1
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard let b = current else { throw fail("unexpected end of JSON") }
        switch b {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: String) throws(JSONError) {
        let w = Array(word.utf8)
        guard bytes.count - index >= w.count, Array(bytes[index..<index + w.count]) == w else {
            throw fail("unexpected character")
        }
        index += w.count
    }

    private mutating func enter() throws(JSONError) {
        depth += 1
        guard depth <= JSONParser.maxDepth else { throw fail("nesting deeper than \(JSONParser.maxDepth) levels") }
    }

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var object = JSONObject()
        var seen = Set<String>()
        skipWhitespace()
        if current == UInt8(ascii: "}") { index += 1; return .object(object) }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let nameOffset = index
            let name = try parseString()
            guard seen.insert(name).inserted else {
                throw JSONError(offset: nameOffset, reason: "duplicate member \"\(name)\"")
            }
            skipWhitespace()
            try expect(UInt8(ascii: ":"), "':'")
            skipWhitespace()
            object.members.append(.init(name: name, value: try parseValue()))
            skipWhitespace()
            if current == UInt8(ascii: ",") { index += 1; continue }
            try expect(UInt8(ascii: "}"), "',' or '}'")
            return .object(object)
        }
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            if current == UInt8(ascii: ",") { index += 1; continue }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            return .array(items)
        }
    }

    private mutating func parseNumber() throws(JSONError) -> String {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw fail("expected a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, isDigit(next) { throw fail("leading zero in a number") }
        } else {
            while let d = current, isDigit(d) { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let d = current, isDigit(d) else { throw fail("expected a digit after '.'") }
            while let d = current, isDigit(d) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let d = current, isDigit(d) else { throw fail("expected a digit in the exponent") }
            while let d = current, isDigit(d) { index += 1 }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    private mutating func parseString() throws(JSONError) -> String {
        let start = index
        index += 1
        var out: [UInt8] = []
        while true {
            guard let b = current else { throw fail("unterminated string") }
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                guard let s = String(validating: out, as: UTF8.self) else {
                    throw JSONError(offset: start, reason: "string is not valid UTF-8")
                }
                return s
            case UInt8(ascii: "\\"):
                index += 1
                guard let e = current else { throw fail("unterminated string") }
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    out.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw fail("invalid escape")
                }
            case 0..<0x20:
                throw fail("control character in a string")
            default:
                out.append(b)
                index += 1
            }
        }
    }

    /// After `\u`: four hex digits, and a low surrogate escape after a high one.
    private mutating func parseUnicodeEscape() throws(JSONError) -> Unicode.Scalar {
        let high = try hex4()
        if (0xD800...0xDBFF).contains(high) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                throw fail("unpaired surrogate in \\u escape")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate in \\u escape") }
            let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            return Unicode.Scalar(value)!
        }
        guard let scalar = Unicode.Scalar(high) else { throw fail("unpaired surrogate in \\u escape") }
        return scalar
    }

    private mutating func hex4() throws(JSONError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw fail("expected four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw fail("expected four hex digits")
            }
            value = value * 16 + digit
            index += 1
        }
        return value
    }
}

import FoundationEssentials

/// One JSON value (RFC 8259 §3), as ``JSONText/parse(_:)`` reads it.
///
/// Numbers keep what the text says: an integer that fits `Int64` or
/// `UInt64` exactly, else a `Double` (`1.0` and `1e3` are doubles).
public enum JSONValue: Sendable, Equatable, Encodable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer within `Int64`.
    case integer(Int64)
    /// An integer above `Int64.max` within `UInt64`.
    case unsigned(UInt64)
    /// Any other number, always finite.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; member order is not kept.
    case object([String: JSONValue])

    /// The member `key` of an object; `nil` for a missing member or another value.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or `nil` for another value.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The members of an object, or `nil` for another value.
    public var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The elements of an array, or `nil` for another value.
    public var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The number as a `Double` (a large integer rounded), or `nil` for
    /// another value; a boolean is not a number.
    public var number: Double? {
        switch self {
        case .integer(let n): return Double(n)
        case .unsigned(let n): return Double(n)
        case .double(let n): return n
        default: return nil
        }
    }

    /// The boolean, or `nil` for another value.
    public var bool: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The value for a line of text: a string as it is, an array's
    /// elements so written and joined by `, `, anything else as compact JSON.
    public var displayText: String {
        switch self {
        case .string(let text): return text
        case .array(let elements): return elements.map(\.displayText).joined(separator: ", ")
        default: return JSONText.text(self)
        }
    }

    /// Whether the value is `null`.
    public var isNull: Bool { self == .null }

    /// Writes the value (for `JSONEncoder`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .integer(let n): try container.encode(n)
        case .unsigned(let n): try container.encode(n)
        case .double(let n): try container.encode(n)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByNilLiteral
{
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// `null`.
    public init(nilLiteral: ()) { self = .null }
}

/// Reading and writing JSON (RFC 8259) as ``JSONValue``s.
///
/// What the reader does:
/// - A member name that appears twice keeps its lexically last value, one of
///   the two behaviours RFC 7519 §4 allows for JWT claims and headers.
/// - A number out of `Double` range makes the whole text invalid.
/// - Nesting deeper than 512 levels is an error, not a crash.
/// - One trailing comma in an array or object (`[1,]`) is accepted, a
///   non-JSON form RFC 8259 §9 allows a parser to take; other extensions
///   (comments, `NaN`, single quotes, leading zeros) and lone surrogate
///   escapes are errors.
public enum JSONText {
    /// Parses one JSON text; any value is accepted at the top level.
    /// - Parameter bytes: the JSON text in UTF-8 (RFC 8259 §8.1).
    /// - Returns: the value.
    /// - Throws: ``JSONError`` saying what is wrong and where (a byte
    ///   offset from 0); also for a NUL byte, which no UTF-8 JSON text has
    ///   outside an escape.
    public static func parse<C: Collection>(_ bytes: C) throws(JSONError) -> JSONValue where C.Element == UInt8 {
        let text = Array(bytes)
        guard !text.contains(0) else { throw JSONError(reason: "a NUL byte; JSON text must be UTF-8") }
        guard String(validating: text, as: UTF8.self) != nil else {
            throw JSONError(reason: "Unable to convert data to a string using the detected encoding.")
        }
        var reader = JSONReader(bytes: text)
        reader.skipSpace()
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.offset == text.count else {
            throw JSONError(reason: "Garbage at end around character \(reader.offset).")
        }
        return value
    }

    /// The JSON type of `value` for messages: `a string`, `a number`,
    /// `a boolean`, `null`, `an array`, `an object`.
    public static func typeDescription(_ value: JSONValue) -> String {
        switch value {
        case .string: return "a string"
        case .bool: return "a boolean"
        case .integer, .unsigned, .double: return "a number"
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The compact JSON text of `value`, object members in sorted key order,
    /// `/` not escaped; control characters are escaped (RFC 8259 §7).
    /// Integral doubles are written without a fraction (`2`, not `2.0`).
    public static func text(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The compact JSON text of an object of strings, keys sorted.
    public static func text(_ members: [String: JSONValue]) -> String { text(.object(members)) }
}

/// Why a text is not JSON.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, for example `Invalid value around character 1.`
    public let reason: String

    /// An error with this reason.
    public init(reason: String) { self.reason = reason }

    /// The reason.
    public var description: String { reason }
}

/// A recursive-descent reader of RFC 8259's grammar over UTF-8 bytes.
private struct JSONReader {
    let bytes: [UInt8]
    var offset = 0

    static let maxDepth = 512

    init(bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { offset >= bytes.count }

    mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    func invalid() -> JSONError {
        atEnd
            ? JSONError(reason: "Unexpected end of file during JSON parse.")
            : JSONError(reason: "Invalid value around character \(offset).")
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        guard !atEnd else { throw invalid() }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw invalid()
        }
    }

    mutating func literal(_ word: StaticString, _ value: JSONValue) throws(JSONError) -> JSONValue {
        let count = word.utf8CodeUnitCount
        let matches = word.withUTF8Buffer { expected in
            offset + count <= bytes.count && bytes[offset..<offset + count].elementsEqual(expected)
        }
        guard matches else {
            if offset + count > bytes.count { offset = bytes.count }
            throw invalid()
        }
        offset += count
        return value
    }

    /// Steps over the opening bracket of an object or array (at `offset`)
    /// and the space after it.
    /// - Returns: whether it is empty: `close` comes next (consumed).
    /// - Throws: a ``JSONError`` when it nests deeper than ``JSONReader/maxDepth``.
    mutating func entersEmpty(depth: Int, closedBy close: UInt8) throws(JSONError) -> Bool {
        guard depth <= JSONReader.maxDepth else {
            throw JSONError(reason: "Too many nested arrays or dictionaries around character \(offset).")
        }
        offset += 1
        skipSpace()
        guard !atEnd && bytes[offset] == close else { return false }
        offset += 1
        return true
    }

    /// After a member or an element: reads the `,` that comes next, or
    /// `close` (consumed), with the space around them.
    /// - Returns: whether the object or array ends here: at `close`, or at a
    ///   `close` right after a `,` (a trailing comma is let through).
    /// - Throws: a ``JSONError`` for anything else, or for the end of the text.
    mutating func closes(_ close: UInt8) throws(JSONError) -> Bool {
        skipSpace()
        guard !atEnd else { throw invalid() }
        if bytes[offset] == close {
            offset += 1
            return true
        }
        guard bytes[offset] == UInt8(ascii: ",") else { throw invalid() }
        offset += 1
        skipSpace()
        guard !atEnd && bytes[offset] == close else { return false }
        offset += 1
        return true
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONValue {
        var members: [String: JSONValue] = [:]
        if try entersEmpty(depth: depth, closedBy: UInt8(ascii: "}")) { return .object(members) }
        while true {
            skipSpace()
            guard !atEnd, bytes[offset] == UInt8(ascii: "\"") else { throw invalid() }
            let key = try string()
            skipSpace()
            guard !atEnd, bytes[offset] == UInt8(ascii: ":") else { throw invalid() }
            offset += 1
            skipSpace()
            members[key] = try value(depth: depth)
            if try closes(UInt8(ascii: "}")) { return .object(members) }
        }
    }

    mutating func array(depth: Int) throws(JSONError) -> JSONValue {
        var elements: [JSONValue] = []
        if try entersEmpty(depth: depth, closedBy: UInt8(ascii: "]")) { return .array(elements) }
        while true {
            skipSpace()
            elements.append(try value(depth: depth))
            if try closes(UInt8(ascii: "]")) { return .array(elements) }
        }
    }

    mutating func string() throws(JSONError) -> String {
        let start = offset
        offset += 1
        var out: [UInt8] = []
        while true {
            guard !atEnd else { throw invalid() }
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                offset += 1
                guard !atEnd else { throw invalid() }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                            bytes[offset + 1] == UInt8(ascii: "u")
                        else {
                            throw JSONError(
                                reason:
                                    "Unable to convert hex escape sequence (no low character) to UTF8-encoded character at position \(offset)."
                            )
                        }
                        offset += 2
                        let low = try hex4()
                        guard (0xDC00...0xDFFF).contains(low) else {
                            throw JSONError(
                                reason:
                                    "Unable to convert hex escape sequence (invalid low character) to UTF8-encoded character at position \(offset)."
                            )
                        }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let character = Unicode.Scalar(scalar) else {
                        throw JSONError(
                            reason:
                                "Unable to convert hex escape sequence (lone low surrogate) to UTF8-encoded character at position \(offset)."
                        )
                    }
                    out.append(contentsOf: String(character).utf8)
                default:
                    offset -= 1
                    throw JSONError(reason: "Invalid escape sequence around character \(offset).")
                }
            case 0x00..<0x20:
                throw JSONError(
                    reason: "Invalid string: control character around character \(start + (offset - start)).")
            default:
                out.append(byte)
                offset += 1
            }
        }
    }

    mutating func hex4() throws(JSONError) -> UInt32 {
        guard offset + 4 <= bytes.count else {
            offset = bytes.count
            throw invalid()
        }
        var value: UInt32 = 0
        for byte in bytes[offset..<offset + 4] {
            guard let digit = HexDigit.value(byte) else {
                throw JSONError(reason: "Invalid unicode escape sequence around character \(offset).")
            }
            value = value << 4 | UInt32(digit)
        }
        offset += 4
        return value
    }

    mutating func number() throws(JSONError) -> JSONValue {
        let start = offset
        let isDigit: (UInt8) -> Bool = { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard !atEnd, isDigit(bytes[offset]) else { throw invalid() }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
            if !atEnd && isDigit(bytes[offset]) { throw invalid() }
        } else {
            while !atEnd && isDigit(bytes[offset]) { offset += 1 }
        }
        var integral = true
        if !atEnd && bytes[offset] == UInt8(ascii: ".") {
            integral = false
            offset += 1
            guard !atEnd, isDigit(bytes[offset]) else { throw invalid() }
            while !atEnd && isDigit(bytes[offset]) { offset += 1 }
        }
        if !atEnd && (bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E")) {
            integral = false
            offset += 1
            if !atEnd && (bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-")) { offset += 1 }
            guard !atEnd, isDigit(bytes[offset]) else { throw invalid() }
            while !atEnd && isDigit(bytes[offset]) { offset += 1 }
        }
        let text = String(decoding: bytes[start..<offset], as: UTF8.self)
        if integral {
            if let n = Int64(text) { return .integer(n) }
            if let n = UInt64(text) { return .unsigned(n) }
        }
        guard let n = Double(text), n.isFinite else {
            throw JSONError(reason: "Number \(text) is not representable in Swift.")
        }
        return .double(n)
    }
}

/// Values of ASCII hex digits.
private enum HexDigit {
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

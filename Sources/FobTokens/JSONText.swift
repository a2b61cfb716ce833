import Foundation

/// Reading and writing JSON (RFC 8259) with Foundation's `JSONSerialization`,
/// and telling apart the values it returns: `[String: Any]`, `[Any]`,
/// `String`, `NSNumber` and `NSNull`.
///
/// What `JSONSerialization` does, and so what Fob does:
/// - Objects become dictionaries: member order is not kept. Output lists
///   members with sorted keys, so it is stable.
/// - A member name that appears twice keeps its lexically last value, one of
///   the two behaviours RFC 7519 §4 allows for JWT claims and headers.
/// - Numbers become `NSNumber` (integers exactly, others as `Double`); a
///   number out of `Double` range makes the whole text invalid.
/// - `true` and `false` also become `NSNumber`, and on Linux
///   `NSNumber(value: 1) is Bool` is `true`: use ``isBoolean(_:)`` and
///   ``number(_:)``, never `as? Bool` or `as? NSNumber` alone.
/// - Nesting deeper than 512 levels is an error, not a crash.
/// - One trailing comma in an array or object (`[1,]`) is accepted, a
///   non-JSON form RFC 8259 §9 allows a parser to take; other extensions
///   (comments, `NaN`, single quotes, leading zeros) and lone surrogate
///   escapes are errors.
public enum JSONText {
    /// Parses one JSON text; any value is accepted at the top level.
    /// - Parameter bytes: the JSON text in UTF-8 (RFC 8259 §8.1).
    /// - Returns: the value as `JSONSerialization` builds it.
    /// - Throws: ``JSONError`` with Foundation's reason; also for a NUL
    ///   byte, which no UTF-8 JSON text has outside an escape and which would
    ///   let Foundation read the text as UTF-16 or UTF-32.
    public static func parse<C: Collection>(_ bytes: C) throws(JSONError) -> Any where C.Element == UInt8 {
        let data = Data(bytes)
        guard !data.contains(0) else { throw JSONError(reason: "a NUL byte; JSON text must be UTF-8") }
        do {
            return try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            let reason = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
            throw JSONError(reason: reason ?? "not valid JSON")
        }
    }

    /// The class `JSONSerialization` uses for `true` and `false`.
    private static let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

    /// Whether `value` is a JSON `true` or `false` (not the number 1 or 0).
    /// - Parameter value: a value from ``parse(_:)`` or `JSONSerialization`.
    public static func isBoolean(_ value: Any) -> Bool {
        if let number = value as? NSNumber { return ObjectIdentifier(type(of: number)) == booleanClass }
        return value is Bool
    }

    /// The number, when `value` is a JSON number; `nil` for booleans and
    /// everything else.
    /// - Parameter value: a value from ``parse(_:)`` or `JSONSerialization`.
    public static func number(_ value: Any) -> NSNumber? {
        guard !(value is String), let number = value as? NSNumber, !isBoolean(number) else { return nil }
        return number
    }

    /// The JSON type of `value` for messages: `a string`, `a number`,
    /// `a boolean`, `null`, `an array`, `an object`.
    public static func typeDescription(_ value: Any) -> String {
        switch value {
        case is String: return "a string"
        case _ where isBoolean(value): return "a boolean"
        case is NSNumber: return "a number"
        case is NSNull: return "null"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        default: return "not a JSON value"
        }
    }

    /// The compact JSON text of `value`, object members in sorted key order,
    /// `/` not escaped; control characters are escaped (RFC 8259 §7).
    /// - Parameter value: a value from ``parse(_:)``, or built of
    ///   dictionaries with `String` keys, arrays, strings, finite numbers,
    ///   `Bool` and `NSNull`.
    /// - Returns: the text, or `null` for a value JSON cannot represent.
    public static func text(_ value: Any) -> String {
        let options: JSONSerialization.WritingOptions = [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? JSONSerialization.data(withJSONObject: value, options: options) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Why a text is not JSON, as `JSONSerialization` reports it.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, for example `Invalid value around character 1.`
    public let reason: String

    /// An error with this reason.
    public init(reason: String) { self.reason = reason }

    /// The reason.
    public var description: String { reason }
}

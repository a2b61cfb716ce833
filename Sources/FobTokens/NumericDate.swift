import FobSystem
import FoundationEssentials

/// A JWT NumericDate (RFC 7519 §2): seconds since 1970-01-01T00:00:00Z UTC,
/// ignoring leap seconds, possibly with a fraction.
public struct NumericDate: Sendable, Equatable, Comparable {
    /// Seconds since the epoch.
    public let secondsSince1970: Double
    /// Whether the claim carried a fraction of a second.
    public let hasFraction: Bool

    /// The latest accepted instant: 9999-12-31T23:59:59Z. Later values are
    /// refused as not a date anyone means.
    public static let maximumSeconds: Double = 253_402_300_799

    /// A date from seconds since the epoch.
    /// - Parameter secondsSince1970: finite, with magnitude at most ``maximumSeconds``.
    /// - Returns: `nil` for a value out of range.
    public init?(secondsSince1970: Double) {
        guard secondsSince1970.isFinite, abs(secondsSince1970) <= NumericDate.maximumSeconds else { return nil }
        self.secondsSince1970 = secondsSince1970
        hasFraction = secondsSince1970.rounded(.towardZero) != secondsSince1970
    }

    /// Reads a claim value: a JSON integer, a fractional number (RFC 7519 §2),
    /// or a string holding a plain decimal number such as `"1459872074"`, as
    /// some servers send.
    /// - Parameter value: the claim's value as ``JSONText`` reads it.
    /// - Returns: `nil` for anything else (booleans, other strings,
    ///   objects, arrays, null); the caller reports it rather than guessing.
    public init?(json value: JSONValue) {
        if let number = value.number {
            self.init(secondsSince1970: number)
        } else if let text = value.string, NumericDate.isDecimal(text), let seconds = Double(text) {
            self.init(secondsSince1970: seconds)
        } else {
            return nil
        }
    }

    /// `-?[0-9]+(\.[0-9]+)?`: the only string form accepted.
    static func isDecimal(_ text: String) -> Bool {
        var chars = Substring(text).utf8[...]
        if chars.first == UInt8(ascii: "-") { chars = chars.dropFirst() }
        let isDigit: (UInt8) -> Bool = { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        let integer = chars.prefix(while: isDigit)
        guard !integer.isEmpty else { return false }
        var rest = chars.dropFirst(integer.count)
        if rest.isEmpty { return true }
        guard rest.first == UInt8(ascii: ".") else { return false }
        rest = rest.dropFirst()
        return !rest.isEmpty && rest.allSatisfy(isDigit)
    }

    /// The instant as a `Date`.
    public var date: Date { Date(timeIntervalSince1970: secondsSince1970) }

    /// ISO 8601 in UTC: `2016-04-05T16:01:14Z`, or with the fraction when the
    /// claim had one (up to microseconds, trailing zeros dropped):
    /// `2016-04-05T16:01:14.5Z`.
    public var iso8601: String {
        var whole = secondsSince1970.rounded(.down)
        var micros = ((secondsSince1970 - whole) * 1_000_000).rounded()
        if micros >= 1_000_000 {
            whole += 1
            micros -= 1_000_000
        }
        var text = DateText.utc(Date(timeIntervalSince1970: whole), "%Y-%m-%dT%H:%M:%S")
        if hasFraction && micros > 0 {
            var digits = String(Int(micros))
            digits = String(repeating: "0", count: 6 - digits.count) + digits
            while digits.hasSuffix("0") { digits.removeLast() }
            text += "." + digits
        }
        return text + "Z"
    }

    /// Earlier dates compare less.
    public static func < (lhs: NumericDate, rhs: NumericDate) -> Bool {
        lhs.secondsSince1970 < rhs.secondsSince1970
    }
}

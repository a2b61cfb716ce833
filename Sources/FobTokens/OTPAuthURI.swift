import FobSystem

/// Reading Google's Key URI format:
/// `otpauth://TYPE/LABEL?secret=…&issuer=…&algorithm=…&digits=…&period=…&counter=…`.
extension OneTimePassword {
    /// Reads an `otpauth://totp/…` or `otpauth://hotp/…` URI, or a bare
    /// base32 secret (a TOTP seed with SHA1, 6 digits and 30 seconds).
    ///
    /// A pure function of the text, for tests and fuzzing: anything it
    /// cannot read exactly is an error, never a generator of wrong codes.
    /// - `TYPE` is `totp` or `hotp` (any case). `LABEL` is
    ///   `ACCOUNT` or `ISSUER:ACCOUNT`; the colon may be written `%3A`, and
    ///   spaces after it are dropped. A non-empty `issuer=` wins over the label's prefix.
    /// - Names and values are percent-decoded (RFC 3986 §2.1, UTF-8); `+`
    ///   stays a plus sign. Parameter names are read in any case; other
    ///   parameters (`image=`, …) are ignored, a known one given twice is an error.
    /// - `secret` (required): base32 as ``Base32/decode(_:)`` reads it:
    ///   lower case, padding and spaces allowed.
    /// - `algorithm`: `SHA1` (default), `SHA256`, `SHA512`, any case.
    /// - `digits`: 6 (default), 7 or 8. `period` (TOTP): whole seconds, 1
    ///   or more, default 30. `counter` (HOTP, required): 0 to 2^64 - 1.
    /// - Leading and trailing whitespace of the whole text is ignored.
    /// - Parameter text: the URI or the bare secret.
    /// - Throws: ``OTPError``: `.empty`, `.wrongScheme`, `.malformedURI`,
    ///   `.unknownType`, `.badPercentEncoding`, `.duplicateParameter`,
    ///   `.missingSecret`, `.badSecret`, `.unknownAlgorithm`, `.badDigits`,
    ///   `.badPeriod`, `.missingCounter`, `.badCounter`. None of them
    ///   quotes the secret.
    public init(parsing text: String) throws(OTPError) {
        try self.init(parsing: text.utf8)
    }

    /// ``init(parsing:)-(String)`` for UTF-8 bytes, such as a stored item's
    /// secret, which then never becomes a `String`. Copies made while
    /// parsing are zeroed.
    /// - Parameter bytes: the URI or the bare secret, UTF-8.
    /// - Throws: ``OTPError``, as for text.
    public init(parsing bytes: some Collection<UInt8>) throws(OTPError) {
        var input = Array(bytes)
        // Once parse returns, no slice of input is left, so this zeroes its own storage.
        defer { input.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        self = try Self.parse(input)
    }

    /// The parser behind ``init(parsing:)-(String)``.
    private static func parse(_ input: [UInt8]) throws(OTPError) -> OneTimePassword {
        let trimmed = trimmingWhitespace(input)
        guard !trimmed.isEmpty else { throw .empty }
        guard let colon = trimmed.firstIndex(of: UInt8(ascii: ":")) else {
            // No scheme: a bare base32 secret.
            let secret: [UInt8]
            do { secret = try Base32.decode(bytes: trimmed) } catch { throw .badSecret(error) }
            return try OneTimePassword(secret: secret)
        }
        let scheme = String(decoding: trimmed[..<colon], as: UTF8.self).lowercased()
        guard scheme == "otpauth" else { throw .wrongScheme }
        var rest = trimmed[(colon + 1)...]
        guard rest.starts(with: "//".utf8) else { throw .malformedURI }
        rest = rest.dropFirst(2)
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = rest[..<hash] }

        let query: ArraySlice<UInt8>
        if let question = rest.firstIndex(of: UInt8(ascii: "?")) {
            query = rest[(question + 1)...]
            rest = rest[..<question]
        } else {
            query = []
        }
        let typeEnd = rest.firstIndex(of: UInt8(ascii: "/")) ?? rest.endIndex
        let type = String(decoding: rest[..<typeEnd], as: UTF8.self).lowercased()
        guard type == "totp" || type == "hotp" else { throw .unknownType }
        let rawLabel = typeEnd < rest.endIndex ? rest[(typeEnd + 1)...] : []

        var parameters = try self.parameters(query)
        var secretText = parameters.removeValue(forKey: "secret")
        let secret = try decodeSecret(&secretText)

        let algorithm: OTPAlgorithm
        if let name = try Self.text(parameters["algorithm"]) {
            guard let known = OTPAlgorithm(rawValue: name.uppercased()) else { throw .unknownAlgorithm }
            algorithm = known
        } else {
            algorithm = .sha1
        }
        var digits = OneTimePassword.defaultDigits
        if let given = try Self.text(parameters["digits"]) {
            guard let number = Self.decimal(given, maxDigits: 2), Self.digitRange.contains(Int(number)) else {
                throw .badDigits
            }
            digits = Int(number)
        }

        let kind: Kind
        switch type {
        case "totp":
            var period = OneTimePassword.defaultPeriod
            if let given = try Self.text(parameters["period"]) {
                guard let number = Self.decimal(given, maxDigits: 18), number >= 1 else { throw .badPeriod }
                period = Int(number)
            }
            kind = .totp(period: period)
        case "hotp":
            guard let given = try Self.text(parameters["counter"]) else { throw .missingCounter }
            guard let counter = Self.decimal(given, maxDigits: 20) else { throw .badCounter }
            kind = .hotp(counter: counter)
        default:
            preconditionFailure("the type was checked above")
        }

        guard let label = try Self.text(Self.percentDecoded(rawLabel)) else { throw .badPercentEncoding }
        var issuer: String?
        var account = label
        if let separator = label.firstIndex(of: ":") {
            issuer = String(label[..<separator])
            account = String(label[label.index(after: separator)...].drop(while: { $0 == " " }))
        }
        if let given = try Self.text(parameters["issuer"]), !given.isEmpty { issuer = given }
        if issuer?.isEmpty == true { issuer = nil }
        return try OneTimePassword(
            secret: secret, kind: kind, algorithm: algorithm, digits: digits,
            issuer: issuer, account: account)
    }

    /// The decoded `secret=` value; zeroes the percent-decoded text.
    /// - Throws: `.missingSecret` when absent or blank, `.badSecret` when not base32.
    private static func decodeSecret(_ text: inout [UInt8]?) throws(OTPError) -> [UInt8] {
        // No other reference to the text is kept, so this zeroes its own storage.
        defer { text?.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        guard text != nil, !text!.allSatisfy({ $0 == UInt8(ascii: " ") }) else { throw .missingSecret }
        do { return try Base32.decode(bytes: text!) } catch { throw .badSecret(error) }
    }

    /// The known parameters, percent-decoded, by lower-case name.
    private static func parameters(_ query: ArraySlice<UInt8>) throws(OTPError) -> [String: [UInt8]] {
        let known: Set<String> = ["secret", "issuer", "algorithm", "digits", "period", "counter"]
        var result: [String: [UInt8]] = [:]
        for pair in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? pair.endIndex
            guard let name = try text(percentDecoded(pair[..<equals]))?.lowercased(), known.contains(name) else {
                continue
            }
            var value = equals < pair.endIndex ? try percentDecoded(pair[(equals + 1)...]) : []
            guard result[name] == nil else {
                value.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
                throw .duplicateParameter(name)
            }
            result[name] = value
        }
        return result
    }

    /// RFC 3986 §2.1 percent-decoding.
    private static func percentDecoded(_ bytes: ArraySlice<UInt8>) throws(OTPError) -> [UInt8] {
        guard let decoded = PercentDecoding.decode(bytes) else { throw .badPercentEncoding }
        return decoded
    }

    /// Decoded bytes as text (`nil` stays `nil`).
    /// - Throws: `.badPercentEncoding` when they are not UTF-8.
    private static func text(_ bytes: [UInt8]?) throws(OTPError) -> String? {
        guard let bytes else { return nil }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .badPercentEncoding }
        return text
    }

    /// A decimal number of ASCII digits only (no sign, no spaces), at most
    /// `maxDigits` long and within `UInt64`.
    private static func decimal(_ text: String, maxDigits: Int) -> UInt64? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= maxDigits,
            bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return UInt64(text)
    }

    private static func trimmingWhitespace(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { [0x20, 0x09, 0x0A, 0x0D, 0x0B, 0x0C].contains($0) }
        guard let first = bytes.firstIndex(where: { !isSpace($0) }),
            let last = bytes.lastIndex(where: { !isSpace($0) })
        else { return [] }
        return bytes[first...last]
    }
}

/// Why a one-time password could not be read or built. Each case names
/// the problem; none quotes the secret or the text it came from.
public enum OTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing but whitespace was given.
    case empty
    /// A URI whose scheme is not `otpauth`.
    case wrongScheme
    /// `otpauth:` not followed by `//`.
    case malformedURI
    /// The type (the URI's host) is not `totp` or `hotp`.
    case unknownType
    /// A `%` not followed by two hexadecimal digits, or bytes that are not UTF-8.
    case badPercentEncoding
    /// A parameter (named here) given twice.
    case duplicateParameter(String)
    /// No `secret=` parameter, or an empty secret.
    case missingSecret
    /// The secret is not base32.
    case badSecret(Base32Error)
    /// `algorithm` is not SHA1, SHA256 or SHA512.
    case unknownAlgorithm
    /// `digits` is not 6, 7 or 8.
    case badDigits
    /// `period` is not a whole number of seconds, 1 or more.
    case badPeriod
    /// An HOTP URI without `counter`.
    case missingCounter
    /// `counter` is not a whole number from 0 to 2^64 - 1.
    case badCounter

    /// One line naming the problem, never the secret.
    public var description: String {
        switch self {
        case .empty: return "no one-time password URI or secret given"
        case .wrongScheme: return "not an otpauth:// URI or a base32 secret"
        case .malformedURI: return "an otpauth URI starts with otpauth://"
        case .unknownType: return "the one-time password type must be totp or hotp"
        case .badPercentEncoding:
            return "bad percent-encoding in the otpauth URI (a % needs two hex digits, and text must be UTF-8)"
        case .duplicateParameter(let name): return "the parameter '\(name)' is given twice"
        case .missingSecret: return "the otpauth URI has no secret"
        case .badSecret(let error): return "the secret is not valid base32: \(error.description)"
        case .unknownAlgorithm: return "the algorithm must be SHA1, SHA256 or SHA512"
        case .badDigits: return "digits must be 6, 7 or 8"
        case .badPeriod: return "period must be a whole number of seconds, 1 or more"
        case .missingCounter: return "an hotp URI needs a counter"
        case .badCounter: return "counter must be a whole number from 0 to 18446744073709551615"
        }
    }
}

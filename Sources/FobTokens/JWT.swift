import FobSystem
import FoundationEssentials

/// A decoded JSON Web Token (RFC 7519) in JWS compact serialization
/// (RFC 7515 §7.1): `BASE64URL(header) . BASE64URL(claims) . BASE64URL(signature)`.
///
/// - Important: Decoding does **not** verify the signature. The header and
///   claims say what the token claims, not that anyone vouches for it.
///
/// Header and claims are read with ``JSONText`` into ``JSONValue``s: they
/// are dictionaries, so the members' order in the token
/// is not kept (list them with sorted keys), and a member name given twice
/// keeps its lexically last value (RFC 7519 §4 allows this instead of
/// rejecting the token).
public struct JWT: Sendable, Equatable {
    /// The JOSE header's JSON text (UTF-8), as decoded from the first segment.
    public let headerJSON: [UInt8]
    /// The claims set's JSON text (UTF-8), as decoded from the second segment.
    public let claimsJSON: [UInt8]
    /// The signature bytes (empty for an unsecured JWT, `alg` `none`); not verified.
    public let signature: [UInt8]

    /// `iat` (RFC 7519 §4.1.6).
    public let issuedAt: TimeClaim
    /// `exp` (RFC 7519 §4.1.4).
    public let expiresAt: TimeClaim
    /// `nbf` (RFC 7519 §4.1.5).
    public let notBefore: TimeClaim

    /// A NumericDate claim as found in the token.
    public enum TimeClaim: Sendable, Equatable {
        /// The token has no such claim.
        case absent
        /// A valid NumericDate.
        case date(NumericDate)
        /// The claim is present but is not a NumericDate; the value's JSON
        /// text (for example `"tomorrow"` with its quotes, or `true`).
        case invalid(String)

        /// The date, when valid.
        public var date: NumericDate? {
            if case .date(let d) = self { return d }
            return nil
        }
    }

    /// The longest token accepted: 1 MiB, the size of the largest item secret.
    public static let maxLength = 1 << 20

    /// Decodes a compact JWS token without verifying its signature.
    ///
    /// Leading and trailing whitespace is ignored. Each segment is base64url
    /// with or without `=` padding (RFC 7515 §2); header and claims must be
    /// UTF-8 JSON objects (RFC 7519 §7.2).
    /// - Parameter token: the token text.
    /// - Throws: ``JWTError``: `.empty`, `.tooLong`, `.segmentCount` (five
    ///   segments is an encrypted JWE), `.base64`, `.notUTF8`, `.json`,
    ///   `.notAnObject`. A time claim that is not a NumericDate does not
    ///   throw here; it is reported through ``TimeClaim/invalid(_:)`` and
    ///   ``checkTimeClaims()``.
    public init(decoding token: String) throws(JWTError) {
        let text = token.trimmingSpacesAndNewlines()
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= JWT.maxLength else { throw .tooLong(text.utf8.count) }
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3 else { throw .segmentCount(segments.count) }
        let header = try JWT.object(segments[0], part: .header)
        let claims = try JWT.object(segments[1], part: .claims)
        guard let signature = Base64URL.decode(segments[2]) else { throw .base64(.signature) }
        headerJSON = header.text
        claimsJSON = claims.text
        self.signature = signature
        issuedAt = JWT.timeClaim(claims.object["iat"])
        expiresAt = JWT.timeClaim(claims.object["exp"])
        notBefore = JWT.timeClaim(claims.object["nbf"])
    }

    /// The JOSE header (RFC 7515 §4) as ``JSONText`` reads it: no member order.
    public var header: [String: JSONValue] { JWT.dictionary(headerJSON) }

    /// The claims set (RFC 7519 §4) as ``JSONText`` reads it: no member order.
    public var claims: [String: JSONValue] { JWT.dictionary(claimsJSON) }

    /// Whether `text` has the shape of a compact JWS (three base64url
    /// segments whose first two decode to JSON objects).
    public static func looksLikeJWT(_ text: String) -> Bool {
        (try? JWT(decoding: text)) != nil
    }

    /// The header's `alg` (RFC 7515 §4.1.1), when it is a string.
    public var algorithm: String? { header["alg"]?.string }

    /// Whether the token has expired at `now`: `exp` is present and not after
    /// `now` (RFC 7519 §4.1.4). A token without a valid `exp` is not
    /// reported as expired here; callers that must never treat it as valid
    /// forever apply their own limit.
    public func isExpired(at now: Date) -> Bool {
        guard let exp = expiresAt.date else { return false }
        return exp.date <= now
    }

    /// Throws for the first of `iat`, `exp`, `nbf` that is present but not a NumericDate.
    /// - Throws: ``JWTError/invalidNumericDate(claim:value:)``.
    public func checkTimeClaims() throws(JWTError) {
        for (name, claim) in [("iat", issuedAt), ("exp", expiresAt), ("nbf", notBefore)] {
            if case .invalid(let value) = claim { throw .invalidNumericDate(claim: name, value: value) }
        }
    }

    private static func timeClaim(_ value: JSONValue?) -> TimeClaim {
        guard let value else { return .absent }
        if let date = NumericDate(json: value) { return .date(date) }
        return .invalid(JSONText.text(value))
    }

    /// A segment's JSON text and the object it holds.
    private static func object(_ segment: Substring, part: JWTError.Part) throws(JWTError) -> (
        text: [UInt8], object: [String: JSONValue]
    ) {
        guard let bytes = Base64URL.decode(segment) else { throw .base64(part) }
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .notUTF8(part) }
        let value: JSONValue
        do {
            value = try JSONText.parse(bytes)
        } catch {
            throw .json(part, error)
        }
        guard let object = value.object else {
            throw .notAnObject(part, found: JSONText.typeDescription(value))
        }
        return (bytes, object)
    }

    /// The object in a JSON text that ``init(decoding:)`` already parsed as one.
    private static func dictionary(_ text: [UInt8]) -> [String: JSONValue] {
        (try? JSONText.parse(text))?.object ?? [:]
    }
}

/// Why a token could not be decoded as a JWT.
public enum JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The part of a token an error is about.
    public enum Part: String, Sendable {
        case header, claims, signature
    }

    /// No token was given.
    case empty
    /// The token is longer than ``JWT/maxLength`` bytes.
    case tooLong(Int)
    /// The token does not have three dot-separated segments.
    case segmentCount(Int)
    /// A segment is not base64url.
    case base64(Part)
    /// A decoded segment is not UTF-8.
    case notUTF8(Part)
    /// A decoded segment is not JSON.
    case json(Part, JSONError)
    /// A decoded segment is JSON but not an object; `found` names its type.
    case notAnObject(Part, found: String)
    /// `iat`, `exp` or `nbf` is neither a number nor a numeric string.
    /// `value` is the claim's JSON text.
    case invalidNumericDate(claim: String, value: String)

    /// One line naming the problem; never the token itself.
    public var description: String {
        switch self {
        case .empty:
            return "not a JWT: no token given"
        case .tooLong(let n):
            return "not a JWT: \(n) bytes is longer than the \(JWT.maxLength)-byte limit"
        case .segmentCount(let n):
            if n == 5 { return "not a JWS: 5 segments is an encrypted JWT (JWE), which cannot be read without its key" }
            return "not a JWT: expected 3 dot-separated segments (header.claims.signature), found \(n)"
        case .base64(let part):
            return "not a JWT: the \(part.rawValue) segment is not base64url"
        case .notUTF8(let part):
            return "not a JWT: the \(part.rawValue) is not UTF-8"
        case .json(let part, let error):
            return "not a JWT: the \(part.rawValue) is not JSON (\(error))"
        case .notAnObject(let part, let found):
            return "not a JWT: the \(part.rawValue) is \(found), not a JSON object"
        case .invalidNumericDate(let claim, let value):
            let clipped = value.count > 40 ? String(value.prefix(40)) + "…" : value
            return "claim \"\(claim)\" is not a NumericDate (seconds since 1970): \(clipped)"
        }
    }
}

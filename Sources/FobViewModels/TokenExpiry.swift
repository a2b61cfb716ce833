import Foundation
import FobStore
import FobTokens

/// Reads when a stored token expires, for the item list.
///
/// - `token` items: the secret is a JWT (RFC 7519); its `exp` claim (§4.1.4,
///   seconds since the epoch as a number, fractional number or numeric
///   string) is read from the payload without verifying the signature.
/// - `oauth` items: the secret is a JSON object; `expires_at` (seconds since
///   the epoch, or ISO 8601 text) is used, else the `exp` of an
///   `access_token` that is a JWT.
enum TokenExpiry {
    /// The expiry of `secret` for an item of `kind`, or `nil` when none can be read.
    static func expiry(of secret: SecretBytes, kind: ItemKind) -> Date? {
        var bytes = secret.unsafeArray
        defer { bytes.wipe() }
        switch kind {
        case .token:
            return jwtExpiry(bytes)
        case .oauth:
            guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
            if let date = date(from: object["expires_at"] ?? object["expiresAt"]) { return date }
            if let access = object["access_token"] as? String { return jwtExpiry(Array(access.utf8)) }
            return nil
        case .password, .note:
            return nil
        }
    }

    /// The `exp` claim of a compact JWS (`header.payload.signature`).
    static func jwtExpiry(_ token: [UInt8]) -> Date? {
        let trimmed = token.filter { $0 != 0x0A && $0 != 0x0D && $0 != 0x20 }
        let parts = trimmed.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, var payload = base64URLDecode(parts[1]) else { return nil }
        defer { payload.wipe() }
        guard let claims = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any] else { return nil }
        return date(from: claims["exp"])
    }

    /// A number or numeric string of seconds, or ISO 8601 text; JSON `true`
    /// (an `NSNumber` too, from `JSONSerialization`) is not the number 1.
    static func date(from value: Any?) -> Date? {
        if let value, let number = JSONText.number(value) {
            return Date(timeIntervalSince1970: number.doubleValue)
        }
        switch value {
        case let text as String:
            if let seconds = Double(text.trimmingCharacters(in: .whitespaces)) { return Date(timeIntervalSince1970: seconds) }
            return ISO8601DateFormatter().date(from: text)
        default:
            return nil
        }
    }

    /// base64url (RFC 4648 §5), with or without padding.
    static func base64URLDecode(_ input: ArraySlice<UInt8>) -> [UInt8]? {
        var text = String(decoding: input, as: UTF8.self)
            .replacingOccurrences(of: "-", with: "+")
            .replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text.append("=") }
        guard let data = Data(base64Encoded: text) else { return nil }
        return Array(data)
    }

    /// "expires in 4m", "expired 2h ago": whole seconds under a minute,
    /// minutes under an hour, hours under two days, then days.
    static func describe(_ expiry: Date, now: Date) -> String {
        let delta = expiry.timeIntervalSince(now)
        let amount = span(abs(delta))
        return delta > 0 ? "expires in \(amount)" : "expired \(amount) ago"
    }

    private static func span(_ seconds: TimeInterval) -> String {
        let s = Int(seconds.rounded(.down))
        if s < 60 { return "\(s)s" }
        if s < 3600 { return "\(s / 60)m" }
        if s < 48 * 3600 { return "\(s / 3600)h" }
        return "\(s / 86_400)d"
    }
}

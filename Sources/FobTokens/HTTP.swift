import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// One HTTP request to an OAuth endpoint.
///
/// - Important: `headers` and `body` may hold credentials (a client secret
///   in `Authorization`, a code or refresh token in the body); never log them.
public struct HTTPRequest: Sendable, Equatable {
    /// The HTTP method, `GET` or `POST`.
    public var method: String
    /// The endpoint.
    public var url: URL
    /// Header fields; names as written (compare case-insensitively).
    public var headers: [String: String]
    /// The request body (a form for token requests).
    public var body: [UInt8]
    /// How long to wait for the whole response: seconds.
    public var timeout: TimeInterval

    /// A request; `timeout` in seconds.
    public init(method: String, url: URL, headers: [String: String] = [:], body: [UInt8] = [], timeout: TimeInterval) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }

    /// The value of header `name`, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// An HTTP response.
public struct HTTPResponse: Sendable, Equatable {
    /// The status code, for example 200.
    public var status: Int
    /// Header fields with lower-case names.
    public var headers: [String: String]
    /// The response body.
    public var body: [UInt8]

    /// A response; header names are lower-cased.
    public init(status: Int, headers: [String: String] = [:], body: [UInt8]) {
        self.status = status
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }
}

/// Sends HTTP requests for the OAuth client. The live implementation is
/// ``HelperHTTPTransport`` (the `fob-http` helper, so that `fob` itself
/// loads no network library); tests pass a fake provider.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and waits for the response, at most `request.timeout` seconds.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``OAuthError/timeout(_:seconds:)`` when no response came in
    ///   time, ``OAuthError/network(_:)`` when the request could not be sent.
    func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse
}

extension URL {
    /// `scheme://host[:port]`: names an endpoint in messages without its path or query.
    public var hostDescription: String {
        var text = "\(scheme ?? "?")://\(host ?? "?")"
        if let port { text += ":\(port)" }
        return text
    }

    /// Whether the host is a loopback IP literal: an IPv4 address in
    /// `127.0.0.0/8` or the IPv6 address `::1`, parsed with `inet_pton`.
    /// Names are not loopback, `localhost` included: a name is resolved
    /// elsewhere and `127.attacker.example` is a name (RFC 8252 §8.3).
    var isLoopback: Bool {
        guard let host else { return false }
        return LoopbackAddress.isLoopback(host)
    }
}

/// Loopback IP literals (RFC 8252 §8.3: use the literal, not `localhost`).
public enum LoopbackAddress {
    /// Whether `host` is an IP literal for the loopback interface: dotted
    /// IPv4 in `127.0.0.0/8` (exactly four decimal parts, as `inet_pton`
    /// reads them) or IPv6 `::1` (also `[::1]`, and `::ffff:127.x.y.z`).
    /// - Parameter host: the host part of a URL.
    public static func isLoopback(_ host: String) -> Bool {
        var text = Substring(host)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        guard !text.isEmpty, !text.utf8.contains(0) else { return false }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, String(text), &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
        // An IPv4-mapped IPv6 address (RFC 4291 §2.5.5.2) of 127.0.0.0/8.
        return bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
    }
}

/// `application/x-www-form-urlencoded` (WHATWG URL §5) and RFC 3986
/// percent-encoding, for token requests and authorization URLs.
public enum FormEncoding {
    /// Percent-encodes every byte except the unreserved characters
    /// `A–Z a–z 0–9 - . _ ~` (RFC 3986 §2.3), so the text is safe in a query
    /// component and in a form body alike.
    public static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if PKCE.unreserved.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + HexText.byte(byte, uppercase: true)
            }
        }
        return out
    }

    /// `name=value&…` with both sides percent-encoded, in the given order.
    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    /// Parses `name=value&…` (a query or a form body): `+` is a space, `%XX`
    /// a byte; a pair whose bytes are not UTF-8 is dropped.
    public static func decode(_ text: Substring) -> [(String, String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = unescape(parts[0]) else { return nil }
            guard let value = parts.count > 1 ? unescape(parts[1]) : "" else { return nil }
            return (name, value)
        }
    }

    private static func unescape(_ text: Substring) -> String? {
        PercentDecoding.decode(text.utf8, plusIsSpace: true, malformed: .literal).flatMap {
            String(validating: $0, as: UTF8.self)
        }
    }
}

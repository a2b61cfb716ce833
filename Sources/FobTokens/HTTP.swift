import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
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
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
        self.body = body
    }
}

/// Sends HTTP requests for the OAuth client. The live implementation is
/// ``URLSessionTransport``; tests pass a fake provider.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and waits for the response, at most `request.timeout` seconds.
    /// - Returns: the response, whatever its status.
    /// - Throws: ``OAuthError/timeout(_:seconds:)`` when no response came in
    ///   time, ``OAuthError/network(_:)`` when the request could not be sent.
    func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse
}

/// HTTP over `URLSession` (ephemeral: no cookies, no cache), blocking the
/// calling thread. Redirects are not followed: an OAuth endpoint that
/// redirects a request carrying credentials is reported, not obeyed.
public struct URLSessionTransport: HTTPTransport {
    /// The live transport.
    public init() {}

    /// Sends `request` on an ephemeral `URLSession` and blocks until the answer or the timeout.
    /// - Throws: ``OAuthError/timeout(_:seconds:)``, ``OAuthError/network(_:)``.
    public func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData,
                                    timeoutInterval: request.timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }

        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.timeoutIntervalForRequest = request.timeout
        configuration.timeoutIntervalForResource = request.timeout
        let session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }

        let box = ResultBox()
        let task = session.dataTask(with: urlRequest) { data, response, error in
            box.set(data: data, response: response, error: error)
        }
        task.resume()
        guard box.wait(seconds: request.timeout + 5) else {
            task.cancel()
            throw .timeout(request.url.hostDescription, seconds: request.timeout)
        }
        let (data, response, error) = box.value
        if let error {
            if let urlError = error as? URLError, urlError.code == .timedOut {
                throw .timeout(request.url.hostDescription, seconds: request.timeout)
            }
            throw .network("\(request.url.hostDescription): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw .network("\(request.url.hostDescription): not an HTTP response")
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let k = key as? String, let v = value as? String { headers[k] = v }
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: data.map { Array($0) } ?? [])
    }
}

/// Refuses every redirect, so credentials are never re-sent elsewhere.
private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}

/// Hands a completion handler's result to the waiting thread.
private final class ResultBox: @unchecked Sendable {
    private let condition = NSCondition()
    private var done = false
    private var stored: (Data?, URLResponse?, Error?) = (nil, nil, nil)

    func set(data: Data?, response: URLResponse?, error: Error?) {
        condition.lock()
        stored = (data, response, error)
        done = true
        condition.signal()
        condition.unlock()
    }

    /// Waits until a result is set; `false` after `seconds` without one.
    func wait(seconds: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !done {
            if !condition.wait(until: deadline) { return done }
        }
        return true
    }

    var value: (Data?, URLResponse?, Error?) {
        condition.lock()
        defer { condition.unlock() }
        return stored
    }
}

extension URL {
    /// `scheme://host[:port]`: names an endpoint in messages without its path or query.
    var hostDescription: String {
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
                out += "%" + String(format: "%02X", byte)
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
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let b = utf8.popFirst() {
            if b == UInt8(ascii: "+") {
                bytes.append(0x20)
            } else if b == UInt8(ascii: "%"), utf8.count >= 2,
                      let high = hexValue(utf8[utf8.startIndex]), let low = hexValue(utf8[utf8.startIndex + 1]) {
                bytes.append(high << 4 | low)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

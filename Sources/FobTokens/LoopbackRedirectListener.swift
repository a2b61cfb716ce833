import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The redirect target of a native app's login (RFC 8252 §7.3): an HTTP
/// listener on `127.0.0.1` and an ephemeral port chosen by the kernel,
/// serving one path, `/callback`.
///
/// It owns its socket: opened in `init`, closed in `deinit`. Use it from
/// one thread.
public final class LoopbackRedirectListener {
    /// The port the kernel assigned.
    public let port: UInt16
    private let fd: Int32

    /// The largest request accepted from the browser: 16 KiB.
    static let maxRequestBytes = 16 * 1024
    /// How long one browser connection may take to send its request: seconds.
    static let requestTimeout: TimeInterval = 10

    /// Opens the listening socket on `127.0.0.1:0`.
    /// - Throws: ``OAuthError/listener(_:)`` when the socket cannot be made.
    public init() throws(OAuthError) {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw .listener("socket: \(LoopbackRedirectListener.errnoText())") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(s, 16) == 0 else {
            let why = LoopbackRedirectListener.errnoText()
            close(s)
            throw .listener("cannot listen on 127.0.0.1: \(why)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        guard named == 0 else {
            let why = LoopbackRedirectListener.errnoText()
            close(s)
            throw .listener("getsockname: \(why)")
        }
        fd = s
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(fd) }

    /// `http://127.0.0.1:<port>/callback`, the `redirect_uri` to send (RFC 8252 §7.3).
    public var redirectURI: String { "http://127.0.0.1:\(port)/callback" }

    /// Waits for the browser's redirect and answers it with a short page.
    ///
    /// Requests for other paths get 404 and the wait goes on. A redirect
    /// whose `state` differs from `expectedState` (or has none) is answered
    /// 400 and ignored: any local program or web page can send one, so it
    /// must not end the login (RFC 6749 §10.12); if the time runs out after
    /// such a request, the error is ``OAuthError/stateMismatch``. An error
    /// redirect with the right `state` ends the wait (RFC 6749 §4.1.2.1).
    ///
    /// At most ``maxClients`` connections are read at once; when a new one
    /// arrives with all of them taken, the one idle longest is closed, so
    /// idle or slow connections can never lock the browser out.
    /// - Parameters:
    ///   - expectedState: the `state` of the authorization request.
    ///   - timeout: seconds to wait in all.
    /// - Returns: the authorization code.
    /// - Throws: ``OAuthError/timeout(_:seconds:)``, ``OAuthError/stateMismatch``,
    ///   ``OAuthError/authorization(error:description:)``, ``OAuthError/listener(_:)``.
    public func waitForCode(expectedState: String, timeout: TimeInterval) throws(OAuthError) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        // Browsers open spare connections that may never carry a request, so
        // every connection is read as its data comes, none waited on alone.
        var clients: [Int32: PendingRequest] = [:]
        defer { for client in clients.keys { close(client) } }
        var sawForgedState = false
        while true {
            let now = Date()
            guard now < deadline else {
                if sawForgedState { throw .stateMismatch }
                throw .timeout("the browser to return to \(redirectURI)", seconds: timeout)
            }
            for (client, pending) in clients where pending.deadline <= now {
                close(client)
                clients[client] = nil
            }
            var entries = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            entries += clients.keys.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let wake = clients.values.map(\.deadline).reduce(deadline) { min($0, $1) }
            let ms = Int32(min(max(wake.timeIntervalSince(now) * 1000, 1), 60_000))
            let ready = poll(&entries, nfds_t(entries.count), ms)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .listener("poll: \(LoopbackRedirectListener.errnoText())")
            }
            if ready == 0 { continue }
            if entries[0].revents != 0 { try acceptClient(into: &clients) }
            for entry in entries.dropFirst() where entry.revents != 0 {
                guard let head = receive(entry.fd, into: &clients) else { continue }
                clients[entry.fd] = nil
                defer { close(entry.fd) }
                switch try handle(entry.fd, head: head, expectedState: expectedState) {
                case .code(let code): return code
                case .forgedState: sawForgedState = true
                case .ignored: break
                }
            }
        }
    }

    /// A connection whose request head is still arriving.
    private struct PendingRequest {
        var bytes: [UInt8] = []
        let deadline: Date
        /// When the connection was accepted or last sent data.
        var lastActivity: Date
    }

    /// What one request came to.
    private enum Outcome {
        /// The redirect, with its code.
        case code(String)
        /// A redirect whose `state` is not this login's: answered and ignored.
        case forgedState
        /// Anything else (another path, a bad request): answered and ignored.
        case ignored
    }

    /// The most connections read at once; a new one beyond it replaces the
    /// one idle longest.
    static let maxClients = 32

    private func acceptClient(into clients: inout [Int32: PendingRequest]) throws(OAuthError) {
        let client = CloseOnExec.accept(fd)
        if client < 0 {
            if errno == EINTR || errno == EAGAIN || errno == ECONNABORTED { return }
            throw .listener("accept4: \(LoopbackRedirectListener.errnoText())")
        }
        if clients.count >= Self.maxClients,
            let idlest = clients.min(by: { $0.value.lastActivity < $1.value.lastActivity })?.key
        {
            // Room for the newest connection, which may be the browser's:
            // the one idle longest is the least likely to carry the redirect.
            close(idlest)
            clients[idlest] = nil
        }
        let now = Date()
        clients[client] = PendingRequest(deadline: now.addingTimeInterval(Self.requestTimeout), lastActivity: now)
    }

    /// Reads what `client` sent; returns the request head once complete. A
    /// closed, failed or oversized connection is closed and dropped.
    private func receive(_ client: Int32, into clients: inout [Int32: PendingRequest]) -> String? {
        guard var pending = clients[client] else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
        if n < 0 && errno == EINTR { return nil }
        guard n > 0 else {
            close(client)
            clients[client] = nil
            return nil
        }
        pending.bytes.append(contentsOf: buffer[0..<n])
        pending.lastActivity = Date()
        if let end = pending.bytes.firstRange(of: [13, 10, 13, 10] as [UInt8]) {
            return String(decoding: pending.bytes[..<end.lowerBound], as: UTF8.self)
        }
        guard pending.bytes.count < Self.maxRequestBytes else {
            respond(
                client, status: "431 Request Header Fields Too Large", title: "Request too large",
                message: "Fob refused this request.")
            close(client)
            clients[client] = nil
            return nil
        }
        clients[client] = pending
        return nil
    }

    /// Answers one request; returns the code when this was the redirect.
    private func handle(_ client: Int32, head: String, expectedState: String) throws(OAuthError) -> Outcome {
        let request = Self.parse(head: head, expectedState: expectedState)
        let page = Self.page(for: request)
        respond(client, status: page.status, title: page.title, message: page.message)
        switch request {
        case .badRequest, .wrongMethod, .notFound, .notARedirect: return .ignored
        case .forgedState: return .forgedState
        case .error(let error, let description): throw .authorization(error: error, description: description)
        case .emptyCode: throw .listener("the redirect carried an empty code")
        case .code(let code): return .code(code)
        }
    }

    /// The page the browser is shown for `request`: the HTTP status line,
    /// the page's title and its one sentence.
    private static func page(for request: Request) -> (status: String, title: String, message: String) {
        switch request {
        case .badRequest: ("400 Bad Request", "Bad request", "Fob did not understand this request.")
        case .wrongMethod: ("405 Method Not Allowed", "Method not allowed", "Only GET is served here.")
        case .notFound: ("404 Not Found", "Not found", "Nothing here.")
        case .notARedirect:
            (
                "400 Bad Request", "Not a login redirect",
                "This address expects the provider's redirect with a code or an error."
            )
        case .forgedState:
            (
                "400 Bad Request", "Login refused",
                "The state parameter does not match this login, so Fob ignored this request. Fob is still waiting for the provider's redirect."
            )
        case .error(let error, let description):
            (
                "200 OK", "Login failed",
                "The provider said: \(error)\(description.map { " (\($0))" } ?? ""). You can close this tab."
            )
        case .emptyCode: ("400 Bad Request", "Login failed", "The redirect carried an empty code.")
        case .code:
            (
                "200 OK", "Authorization received",
                "Fob received the authorization and finishes the login in the terminal. You can close this tab."
            )
        }
    }

    /// What a request head asks for, as ``parse(head:expectedState:)`` reads it.
    public enum Request: Sendable, Equatable {
        /// Not `METHOD TARGET HTTP/1.x`.
        case badRequest
        /// Not a GET.
        case wrongMethod
        /// A path other than `/callback`.
        case notFound
        /// `/callback` with neither `code` nor `error`.
        case notARedirect
        /// A redirect whose `state` is missing or not this login's.
        case forgedState
        /// An error redirect with the right `state` (RFC 6749 §4.1.2.1).
        case error(String, description: String?)
        /// A redirect with the right `state` and an empty `code`.
        case emptyCode
        /// The redirect: its authorization code.
        case code(String)
    }

    /// Reads one HTTP request head (the bytes before the blank line, as
    /// UTF-8 text; RFC 9112 §3) sent to the redirect listener. A pure
    /// function of its input, so any bytes are safe to give it.
    /// - Parameters:
    ///   - head: the request line and header fields.
    ///   - expectedState: the `state` of the authorization request.
    /// - Returns: what the request asks for.
    public static func parse(head: String, expectedState: String) -> Request {
        guard let line = head.split(separator: "\r\n", maxSplits: 1, omittingEmptySubsequences: false).first else {
            return .badRequest
        }
        let parts = line.split(separator: " ")
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .badRequest }
        guard parts[0] == "GET" else { return .wrongMethod }
        let target = parts[1]
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard path == "/callback" else { return .notFound }
        let query = target.contains("?") ? target[target.index(after: target.firstIndex(of: "?")!)...] : ""
        var fields: [String: String] = [:]
        for (name, value) in FormEncoding.decode(query) where fields[name] == nil { fields[name] = value }
        guard fields["code"] != nil || fields["error"] != nil else { return .notARedirect }
        guard let state = fields["state"], state == expectedState else { return .forgedState }
        if let error = fields["error"] { return .error(error, description: fields["error_description"]) }
        guard let code = fields["code"], !code.isEmpty else { return .emptyCode }
        return .code(code)
    }

    private func respond(_ client: Int32, status: String, title: String, message: String) {
        let html = """
            <!doctype html>
            <html><head><meta charset="utf-8"><title>Fob: \(Self.escape(title))</title></head>
            <body style="font-family: sans-serif; max-width: 36em; margin: 4em auto">
            <h1>\(Self.escape(title))</h1><p>\(Self.escape(message))</p></body></html>

            """
        let body = Array(html.utf8)
        let head =
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.count)\r\n"
            + "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
        var data = Array(head.utf8) + body
        var sent = 0
        while sent < data.count {
            let n = data.withUnsafeMutableBytes {
                send(client, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            sent += n
        }
        data.removeAll()
        shutdown(client, Int32(SHUT_WR))
    }

    private static func escape(_ text: String) -> String {
        var out = ""
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

@available(*, unavailable)
extension LoopbackRedirectListener: Sendable {}

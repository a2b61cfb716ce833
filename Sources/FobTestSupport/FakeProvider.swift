import FobTokens
import Foundation

/// An OAuth provider in memory, behind the ``HTTPTransport`` protocol.
///
/// Its token endpoint honours single use of refresh tokens when rotating
/// (a refresh token used twice is `invalid_grant`), counts every request,
/// and can be told to fail.
public final class FakeProvider: HTTPTransport, @unchecked Sendable {
    /// How the token endpoint fails when told to.
    public enum Failure: Sendable {
        /// An HTTP error status with this body.
        case status(Int, body: String)
        /// No answer within the request's timeout.
        case timeout
        /// No connection.
        case network
    }

    /// A provider that rotates refresh tokens and answers every request.
    public init() {}

    /// The token endpoint it answers.
    public let tokenURL = URL(string: "https://idp.example.com/oauth2/token")!
    /// The authorization endpoint its discovery document names.
    public let authorizationURL = URL(string: "https://idp.example.com/oauth2/authorize")!
    /// Its issuer (RFC 8414).
    public let issuer = "https://idp.example.com"

    private let lock = NSLock()
    private var validRefreshTokens: Set<String> = []
    private var counter = 0
    private(set) var requests: [HTTPRequest] = []

    /// Issue a new refresh token on each refresh and revoke the used one.
    public var rotate = true
    /// The `expires_in` member to send, as JSON text; `nil` leaves it out.
    public var expiresInJSON: String? = "3600"
    /// Seconds each token request takes (to widen races).
    public var delay: TimeInterval = 0
    /// The next token requests fail this way.
    public var failure: Failure?
    /// The client secret required with Basic authentication, if any.
    public var requiredSecret: String?
    /// Access tokens to hand out instead of opaque ones, in order.
    public var accessTokenOverride: String?

    private let gate = NSCondition()
    private var holding = false
    private var held = 0

    /// Makes every token request wait, before it is counted or answered,
    /// until ``release()``: a provider that does not answer (yet).
    public func hold() {
        gate.lock()
        holding = true
        gate.unlock()
    }

    /// Lets the waiting requests (and every later one) through.
    public func release() {
        gate.lock()
        holding = false
        gate.broadcast()
        gate.unlock()
    }

    /// How many requests wait in ``hold()``.
    public var heldRequests: Int {
        gate.lock()
        defer { gate.unlock() }
        return held
    }

    /// How many refresh-token grants reached it.
    public var refreshCount: Int {
        lock.withLock { requests.filter { form($0)["grant_type"] == "refresh_token" }.count }
    }
    /// Every request so far, in order.
    public var allRequests: [HTTPRequest] { lock.withLock { requests } }

    /// Issues a refresh token as if after a login.
    public func issueRefreshToken() -> String {
        lock.withLock {
            counter += 1
            let token = "rt-\(counter)"
            validRefreshTokens.insert(token)
            return token
        }
    }

    /// A request's form body (`application/x-www-form-urlencoded`) as a dictionary.
    public func form(_ request: HTTPRequest) -> [String: String] {
        var out: [String: String] = [:]
        for (k, v) in FormEncoding.decode(Substring(String(decoding: request.body, as: UTF8.self))) { out[k] = v }
        return out
    }

    /// Answers as a provider would, or fails as told (``Failure``); waits while held.
    /// - Throws: the ``OAuthError`` of the failure it was told.
    public func send(_ request: HTTPRequest) throws(OAuthError) -> HTTPResponse {
        gate.lock()
        if holding {
            held += 1
            while holding { gate.wait() }
            held -= 1
        }
        gate.unlock()
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        lock.lock()
        defer { lock.unlock() }
        do {
            requests.append(request)
            switch failure {
            case .status(let status, let body)?: return HTTPResponse(status: status, body: Array(body.utf8))
            case .timeout?: throw OAuthError.timeout("the token endpoint", seconds: request.timeout)
            case .network?: throw OAuthError.network("connection refused")
            case nil: break
            }
            if request.url.path == "/.well-known/openid-configuration" {
                let doc =
                    #"{"issuer":"\#(issuer)","authorization_endpoint":"\#(authorizationURL.absoluteString)","token_endpoint":"\#(tokenURL.absoluteString)"}"#
                return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Array(doc.utf8))
            }
            guard request.url == tokenURL, request.method == "POST" else {
                return HTTPResponse(status: 404, body: Array("no".utf8))
            }
            if let requiredSecret {
                let expected =
                    "Basic " + Data("client-1:\(FormEncoding.percentEncode(requiredSecret))".utf8).base64EncodedString()
                guard request.header("Authorization") == expected else {
                    return error(401, "invalid_client", "client authentication failed")
                }
            }
            let fields = form(request)
            switch fields["grant_type"] {
            case "authorization_code":
                guard fields["code"] == "good-code", fields["code_verifier"] != nil else {
                    return error(400, "invalid_grant", "unknown code")
                }
                counter += 1
                let rt = "rt-\(counter)"
                validRefreshTokens.insert(rt)
                return tokens(access: "at-\(counter)", refresh: rt)
            case "refresh_token":
                guard let rt = fields["refresh_token"], validRefreshTokens.contains(rt) else {
                    return error(400, "invalid_grant", "refresh token is invalid or was already used")
                }
                counter += 1
                if rotate {
                    validRefreshTokens.remove(rt)
                    let next = "rt-\(counter)"
                    validRefreshTokens.insert(next)
                    return tokens(access: "at-\(counter)", refresh: next)
                }
                return tokens(access: "at-\(counter)", refresh: nil)
            default:
                return error(400, "unsupported_grant_type", nil)
            }
        }
    }

    private func tokens(access: String, refresh: String?) -> HTTPResponse {
        var members = [#""access_token":"\#(accessTokenOverride ?? access)""#, #""token_type":"Bearer""#]
        if let expiresInJSON { members.append(#""expires_in":\#(expiresInJSON)"#) }
        if let refresh { members.append(#""refresh_token":"\#(refresh)""#) }
        return HTTPResponse(
            status: 200, headers: ["Content-Type": "application/json"],
            body: Array(("{" + members.joined(separator: ",") + "}").utf8))
    }

    private func error(_ status: Int, _ code: String, _ description: String?) -> HTTPResponse {
        var body = #"{"error":"\#(code)""#
        if let description { body += #","error_description":"\#(description)""# }
        body += "}"
        return HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }
}

import FobSystem
import FoundationEssentials

/// The two endpoints of the authorization-code grant (RFC 6749 §3).
public struct OAuthEndpoints: Sendable, Equatable {
    /// Where the browser is sent (RFC 6749 §3.1).
    public var authorization: URL
    /// Where codes and refresh tokens are exchanged (RFC 6749 §3.2).
    public var token: URL
    /// The issuer they were discovered from, if any.
    public var issuer: String?

    /// Endpoints given directly.
    /// - Throws: ``OAuthError/configuration(_:)`` for an endpoint that is not
    ///   `https`, or plain `http` off a loopback address (RFC 6749 §3.1, §3.2 require TLS).
    public init(authorization: URL, token: URL, issuer: String? = nil) throws(OAuthError) {
        try OAuthEndpoints.checkTransport(authorization, name: "authorization endpoint")
        try OAuthEndpoints.checkTransport(token, name: "token endpoint")
        self.authorization = authorization
        self.token = token
        self.issuer = issuer
    }

    /// Refuses URLs that would send credentials in clear text to another host.
    /// - Throws: ``OAuthError/configuration(_:)``.
    public static func checkTransport(_ url: URL, name: String) throws(OAuthError) {
        guard let scheme = url.scheme?.lowercased(), url.host != nil else {
            throw .configuration("the \(name) is not an absolute URL: \(url.absoluteString)")
        }
        guard scheme == "https" || (scheme == "http" && url.isLoopback) else {
            throw .configuration(
                "the \(name) must use https (plain http is allowed on loopback only): \(url.hostDescription)")
        }
        guard url.fragment == nil else { throw .configuration("the \(name) must not have a fragment") }
    }

    /// OpenID Connect Discovery 1.0 §4: reads
    /// `<issuer>/.well-known/openid-configuration` and checks that its
    /// `issuer` is the one asked for (§4.3).
    /// - Parameters:
    ///   - issuer: the issuer URL, for example `https://accounts.example.com`.
    ///   - transport: how to send the request.
    ///   - timeout: seconds to wait for the document.
    /// - Throws: ``OAuthError/discovery(_:)``, ``OAuthError/configuration(_:)``,
    ///   ``OAuthError/timeout(_:seconds:)``, ``OAuthError/network(_:)``.
    public static func discover(issuer: String, transport: any HTTPTransport, timeout: TimeInterval = 30)
        throws(OAuthError) -> OAuthEndpoints
    {
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        guard let url = URL(string: trimmed + "/.well-known/openid-configuration") else {
            throw .configuration("the issuer is not a URL: \(issuer)")
        }
        try checkTransport(url, name: "issuer")
        let response = try transport.send(
            HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"], timeout: timeout))
        guard response.status == 200 else { throw .discovery("HTTP \(response.status) from \(url.absoluteString)") }
        let value: JSONValue
        do {
            value = try JSONText.parse(response.body)
        } catch {
            throw .discovery("\(url.absoluteString) is not JSON (\(error))")
        }
        guard let document = value.object else {
            throw .discovery("\(url.absoluteString) is \(JSONText.typeDescription(value)), not a JSON object")
        }
        guard let found = document["issuer"]?.string else { throw .discovery("the document has no issuer") }
        let foundTrimmed = found.hasSuffix("/") ? String(found.dropLast()) : found
        guard foundTrimmed == trimmed else {
            throw .discovery("the document names issuer \(found), not \(issuer)")
        }
        guard let auth = document["authorization_endpoint"]?.string, let authURL = URL(string: auth) else {
            throw .discovery("the document has no authorization_endpoint")
        }
        guard let token = document["token_endpoint"]?.string, let tokenURL = URL(string: token) else {
            throw .discovery("the document has no token_endpoint")
        }
        return try OAuthEndpoints(authorization: authURL, token: tokenURL, issuer: found)
    }
}

/// How the client authenticates at the token endpoint (RFC 6749 §2.3).
public enum ClientAuthentication: Sendable, Equatable {
    /// A public client (RFC 6749 §2.1): `client_id` in the request body, no secret.
    case none
    /// `client_secret_basic` (RFC 6749 §2.3.1): HTTP Basic with the
    /// form-encoded client id and secret.
    /// - Important: the secret is kept in memory only as long as the value.
    case secretBasic(secret: String)

    /// Reads a client secret: the first line of the file, without its line end.
    /// - Parameter path: the file.
    /// - Throws: ``OAuthError/configuration(_:)`` when it cannot be read or is empty.
    public static func readSecret(path: String) throws(OAuthError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .configuration("cannot read the client secret file \(path)")
        }
        var bytes = Array(data)
        defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        guard !line.isEmpty else { throw .configuration("the client secret file \(path) is empty") }
        guard let secret = String(validating: line, as: UTF8.self) else {
            throw .configuration("the client secret in \(path) is not UTF-8")
        }
        return secret
    }
}

/// A successful token response (RFC 6749 §5.1).
public struct TokenResponse: Sendable, Equatable {
    /// `access_token` (RFC 6749 §5.1).
    public var accessToken: String
    /// `token_type`; `Bearer` when the provider omits it.
    public var tokenType: String
    /// `expires_in` in seconds, when given as a number or a numeric string.
    public var expiresIn: Double?
    /// `refresh_token`, when the provider issued (or rotated) one.
    public var refreshToken: String?
    /// The OpenID Connect ID token, when the provider sends one.
    public var idToken: String?
    /// The granted scope, when the provider says (RFC 6749 §5.1: omitted means as requested).
    public var scope: String?

    /// A response with these members.
    public init(
        accessToken: String, tokenType: String = "Bearer", expiresIn: Double? = nil,
        refreshToken: String? = nil, idToken: String? = nil, scope: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    /// Parses a token endpoint response: 200 with a JSON object holding
    /// `access_token`, or an error response (RFC 6749 §5.2).
    /// - Throws: ``OAuthError/provider(error:description:status:)`` for an
    ///   error body, ``OAuthError/http(status:endpoint:)`` for another HTTP
    ///   error, ``OAuthError/invalidResponse(_:)`` for a malformed success.
    public static func parse(_ response: HTTPResponse, endpoint: URL) throws(OAuthError) -> TokenResponse {
        let object = (try? JSONText.parse(response.body))?.object
        if let error = object?["error"]?.string {
            throw .provider(error: error, description: object?["error_description"]?.string, status: response.status)
        }
        guard (200..<300).contains(response.status) else {
            throw .http(status: response.status, endpoint: endpoint.hostDescription + endpoint.path)
        }
        guard let object else { throw .invalidResponse("the token response is not a JSON object") }
        guard let access = object["access_token"]?.string, !access.isEmpty else {
            throw .invalidResponse("the token response has no access_token")
        }
        let type = object["token_type"]?.string ?? "Bearer"
        guard type.lowercased() == "bearer" else {
            throw .invalidResponse("token_type \(type) is not supported (only Bearer, RFC 6750)")
        }
        return TokenResponse(
            accessToken: access, tokenType: "Bearer",
            expiresIn: object["expires_in"].flatMap(TokenResponse.seconds),
            refreshToken: object["refresh_token"]?.string.flatMap { $0.isEmpty ? nil : $0 },
            idToken: object["id_token"]?.string.flatMap { $0.isEmpty ? nil : $0 },
            scope: object["scope"]?.string)
    }

    /// `expires_in` as a non-negative number or numeric string; anything
    /// else (a boolean among them) is ignored.
    /// - Parameter value: the member's value as ``JSONText`` reads it.
    static func seconds(_ value: JSONValue) -> Double? {
        let number: Double?
        if let n = value.number {
            number = n
        } else if let text = value.string {
            let t = text.trimmingSpaces()
            number = NumericDate.isDecimal(t) ? Double(t) : nil
        } else {
            number = nil
        }
        guard let number, number.isFinite, number >= 0, number <= 10 * 365 * 86_400 else { return nil }
        return number
    }
}

/// An OAuth 2.0 client for the authorization-code grant with PKCE
/// (RFC 6749 §4.1, RFC 7636) and refresh (RFC 6749 §6), as a native app
/// (RFC 8252).
public struct OAuthClient: Sendable {
    /// The authorization and token endpoints.
    public var endpoints: OAuthEndpoints
    /// `client_id` (RFC 6749 §2.2).
    public var clientID: String
    /// How the client authenticates at the token endpoint.
    public var authentication: ClientAuthentication
    /// How requests are sent.
    public var transport: any HTTPTransport
    /// How long to wait for the token endpoint: seconds.
    public var timeout: TimeInterval

    /// A client; `timeout` in seconds for each token request.
    public init(
        endpoints: OAuthEndpoints, clientID: String, authentication: ClientAuthentication = .none,
        transport: any HTTPTransport = HelperHTTPTransport(), timeout: TimeInterval = 30
    ) {
        self.endpoints = endpoints
        self.clientID = clientID
        self.authentication = authentication
        self.transport = transport
        self.timeout = timeout
    }

    /// A fresh `state` value: 32 random bytes from libsodium, base64url (43 characters).
    public static func makeState() -> String { Base64URL.encode(Sodium.randomBytes(32)) }

    /// The authorization request URL (RFC 6749 §4.1.1 with RFC 7636 §4.3):
    /// the endpoint's own query parameters are kept, then `response_type=code`,
    /// `client_id`, `redirect_uri`, `scope` (when given), `state`,
    /// `code_challenge` and `code_challenge_method=S256`.
    public func authorizationURL(redirectURI: String, scope: String?, state: String, pkce: PKCE) -> URL {
        var fields: [(String, String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI),
        ]
        if let scope, !scope.isEmpty { fields.append(("scope", scope)) }
        fields += [("state", state), ("code_challenge", pkce.challenge), ("code_challenge_method", pkce.method)]
        var text = endpoints.authorization.absoluteString
        let query = FormEncoding.encode(fields)
        text += (endpoints.authorization.query.map { $0.isEmpty ? "" : "&" } ?? "?") + query
        if text.hasSuffix("?&") { text = String(text.dropLast(2)) + "?" }
        return URL(string: text) ?? endpoints.authorization
    }

    /// Exchanges an authorization code for tokens (RFC 6749 §4.1.3, RFC 7636 §4.5).
    /// - Parameters:
    ///   - code: the code from the redirect.
    ///   - verifier: the PKCE verifier the challenge was made from.
    ///   - redirectURI: exactly the `redirect_uri` of the authorization request.
    /// - Throws: see ``TokenResponse/parse(_:endpoint:)``, plus transport errors.
    public func exchange(code: String, verifier: String, redirectURI: String) throws(OAuthError) -> TokenResponse {
        try tokenRequest([
            ("grant_type", "authorization_code"), ("code", code),
            ("redirect_uri", redirectURI), ("code_verifier", verifier),
        ])
    }

    /// Refreshes an access token (RFC 6749 §6).
    /// - Parameters:
    ///   - refreshToken: the current refresh token.
    ///   - scope: the scope to ask for; `nil` keeps the granted one.
    /// - Throws: see ``TokenResponse/parse(_:endpoint:)``, plus transport errors.
    public func refresh(refreshToken: String, scope: String? = nil) throws(OAuthError) -> TokenResponse {
        var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let scope, !scope.isEmpty { fields.append(("scope", scope)) }
        return try tokenRequest(fields)
    }

    private func tokenRequest(_ fields: [(String, String)]) throws(OAuthError) -> TokenResponse {
        var fields = fields
        var headers = ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"]
        switch authentication {
        case .none:
            fields.append(("client_id", clientID))
        case .secretBasic(let secret):
            let pair = FormEncoding.percentEncode(clientID) + ":" + FormEncoding.percentEncode(secret)
            headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
        }
        let request = HTTPRequest(
            method: "POST", url: endpoints.token, headers: headers,
            body: Array(FormEncoding.encode(fields).utf8), timeout: timeout)
        let response: HTTPResponse
        do {
            response = try transport.send(request)
        } catch .timeout(_, let seconds) {
            throw .timeout("the token endpoint \(endpoints.token.hostDescription)", seconds: seconds)
        }
        return try TokenResponse.parse(response, endpoint: endpoints.token)
    }
}

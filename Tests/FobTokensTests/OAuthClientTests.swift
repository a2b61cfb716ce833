import FobTestSupport
import Foundation
import Testing

@testable import FobTokens

@Suite struct OAuthClientTests {
    func client(_ provider: FakeProvider, auth: ClientAuthentication = .none) throws -> OAuthClient {
        OAuthClient(
            endpoints: try OAuthEndpoints(authorization: provider.authorizationURL, token: provider.tokenURL),
            clientID: "client-1", authentication: auth, transport: provider, timeout: 5)
    }

    @Test func authorizationURLCarriesStatePKCEAndEncodedParameters() throws {
        let provider = FakeProvider()
        let endpoints = try OAuthEndpoints(
            authorization: URL(string: "https://idp.example.com/auth?prompt=login")!, token: provider.tokenURL)
        let c = OAuthClient(endpoints: endpoints, clientID: "my app+1", transport: provider)
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        let url = c.authorizationURL(
            redirectURI: "http://127.0.0.1:5000/callback", scope: "openid email", state: "st-1", pkce: pkce)
        #expect(
            url.absoluteString == "https://idp.example.com/auth?prompt=login&response_type=code&client_id=my%20app%2B1"
                + "&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&scope=openid%20email&state=st-1"
                + "&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256")
        let plain = c.authorizationURL(redirectURI: "http://127.0.0.1:1/callback", scope: nil, state: "s", pkce: pkce)
        #expect(!plain.absoluteString.contains("scope="))
    }

    @Test func statesAreRandomAndURLSafe() {
        let a = OAuthClient.makeState()
        #expect(a.count == 43)
        #expect(a != OAuthClient.makeState())
        #expect(Base64URL.decode(a)?.count == 32)
    }

    @Test func plainHTTPIsRefusedOffLoopback() throws {
        #expect(
            throws: OAuthError.configuration(
                "the authorization endpoint must use https (plain http is allowed on loopback only): http://idp.example.com"
            )
        ) {
            try OAuthEndpoints(
                authorization: URL(string: "http://idp.example.com/a")!,
                token: URL(string: "https://idp.example.com/t")!)
        }
        #expect(
            throws: OAuthError.configuration(
                "the token endpoint must use https (plain http is allowed on loopback only): ftp://idp.example.com")
        ) {
            try OAuthEndpoints(
                authorization: URL(string: "https://idp.example.com/a")!, token: URL(string: "ftp://idp.example.com/t")!
            )
        }
        #expect(throws: Never.self) {
            try OAuthEndpoints(
                authorization: URL(string: "http://127.0.0.1:9400/a")!, token: URL(string: "http://[::1]:9400/t")!)
        }
    }

    /// Plain http only to a loopback IP literal: 127.0.0.0/8 or ::1, parsed,
    /// never a name that merely starts with "127." (RFC 8252 §8.3).
    @Test(arguments: [
        "http://127.attacker.example/t", "http://127.0.0.1.attacker.example/t", "http://127.1/t",
        "http://127.0.0.01/t", "http://localhost/t", "http://128.0.0.1/t", "http://[::2]/t",
        "http://0x7f.0.0.1/t", "http://[::ffff:10.0.0.1]/t",
    ])
    func plainHTTPToANameOrOtherAddressIsRefused(_ url: String) throws {
        let parsed = try #require(URL(string: url))
        #expect(!LoopbackAddress.isLoopback(try #require(parsed.host)))
        let error = #expect(throws: OAuthError.self) {
            try OAuthEndpoints.checkTransport(parsed, name: "token endpoint")
        }
        guard case .configuration(let why)? = error else {
            Issue.record("not a configuration error: \(String(describing: error))")
            return
        }
        #expect(why.hasPrefix("the token endpoint must use https (plain http is allowed on loopback only): "))
    }

    @Test(arguments: ["127.0.0.1", "127.255.3.4", "::1", "[::1]", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"])
    func loopbackLiteralsAreLoopback(_ host: String) {
        #expect(LoopbackAddress.isLoopback(host))
    }

    @Test func discoveryReadsTheWellKnownDocument() throws {
        let provider = FakeProvider()
        let endpoints = try OAuthEndpoints.discover(issuer: provider.issuer + "/", transport: provider)
        #expect(endpoints.authorization == provider.authorizationURL)
        #expect(endpoints.token == provider.tokenURL)
        #expect(endpoints.issuer == provider.issuer)
        #expect(
            provider.allRequests.first?.url.absoluteString == "https://idp.example.com/.well-known/openid-configuration"
        )
    }

    @Test func discoveryRefusesAnotherIssuerAndHTTPErrors() throws {
        let provider = FakeProvider()
        #expect(
            throws: OAuthError.discovery(
                "the document names issuer https://idp.example.com, not https://other.example.com")
        ) {
            try OAuthEndpoints.discover(issuer: "https://other.example.com", transport: provider)
        }
        provider.failure = .status(404, body: "not here")
        #expect(throws: OAuthError.discovery("HTTP 404 from https://idp.example.com/.well-known/openid-configuration"))
        {
            try OAuthEndpoints.discover(issuer: provider.issuer, transport: provider)
        }
        provider.failure = .status(200, body: "<html>")
        #expect(
            throws: OAuthError.discovery(
                "https://idp.example.com/.well-known/openid-configuration is not JSON (Invalid value around character 0.)"
            )
        ) { try OAuthEndpoints.discover(issuer: provider.issuer, transport: provider) }
        provider.failure = .status(200, body: #""x""#)
        #expect(
            throws: OAuthError.discovery(
                "https://idp.example.com/.well-known/openid-configuration is a string, not a JSON object")
        ) {
            try OAuthEndpoints.discover(issuer: provider.issuer, transport: provider)
        }
    }

    @Test func codeExchangeForAPublicClientSendsClientIDAndVerifier() throws {
        let provider = FakeProvider()
        let response = try client(provider).exchange(
            code: "good-code", verifier: "v" + String(repeating: "x", count: 42),
            redirectURI: "http://127.0.0.1:5000/callback")
        #expect(response.accessToken.hasPrefix("at-"))
        #expect(response.refreshToken?.hasPrefix("rt-") == true)
        #expect(response.expiresIn == 3600)
        let request = try #require(provider.allRequests.last)
        let form = provider.form(request)
        #expect(form["grant_type"] == "authorization_code")
        #expect(form["client_id"] == "client-1")
        #expect(form["redirect_uri"] == "http://127.0.0.1:5000/callback")
        #expect(form["code_verifier"]?.count == 43)
        #expect(request.header("Authorization") == nil)
        #expect(request.header("content-type") == "application/x-www-form-urlencoded")
    }

    @Test func clientSecretBasicSendsTheSecretInTheHeaderOnly() throws {
        let provider = FakeProvider()
        provider.requiredSecret = "s3cr:et"
        let rt = provider.issueRefreshToken()
        let response = try client(provider, auth: .secretBasic(secret: "s3cr:et")).refresh(refreshToken: rt)
        #expect(response.accessToken.hasPrefix("at-"))
        let request = try #require(provider.allRequests.last)
        #expect(provider.form(request)["client_id"] == nil)
        #expect(!String(decoding: request.body, as: UTF8.self).contains("s3cr"))
        #expect(
            throws: OAuthError.provider(
                error: "invalid_client", description: "client authentication failed", status: 401)
        ) {
            try client(provider, auth: .secretBasic(secret: "wrong")).refresh(refreshToken: rt)
        }
    }

    @Test func clientSecretIsTheFirstLineOfItsFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("fob-secret-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("secret")
        try Data("top secret\nignored\n".utf8).write(to: file)
        #expect(try ClientAuthentication.readSecret(path: file.path) == "top secret")
        try Data("\n".utf8).write(to: file)
        #expect(throws: OAuthError.configuration("the client secret file \(file.path) is empty")) {
            try ClientAuthentication.readSecret(path: file.path)
        }
        #expect(
            throws: OAuthError.configuration(
                "cannot read the client secret file \(dir.appendingPathComponent("none").path)")
        ) {
            try ClientAuthentication.readSecret(path: dir.appendingPathComponent("none").path)
        }
    }

    @Test func providerErrorsAreTypedAndOneLine() throws {
        let provider = FakeProvider()
        #expect(
            throws: OAuthError.provider(
                error: "invalid_grant", description: "refresh token is invalid or was already used", status: 400)
        ) {
            try client(provider).refresh(refreshToken: "unknown")
        }
        let text = OAuthError.provider(error: "invalid_grant", description: "expired", status: 400).description
        #expect(
            text
                == "the provider refused the request: invalid_grant (expired) [HTTP 400]; log in again with `fob oauth login`"
        )
        #expect(!text.contains("\n"))
        let hostile = OAuthError.provider(
            error: "invalid_grant", description: "line one\nline\ttwo\r\n" + String(repeating: "x", count: 400),
            status: 400)
        #expect(!hostile.description.contains("\n"))
        #expect(hostile.description.contains("(line one line two xxx"))
        #expect(hostile.description.count < 400)

        provider.failure = .status(502, body: "<html>Bad Gateway</html>")
        #expect(throws: OAuthError.http(status: 502, endpoint: "https://idp.example.com/oauth2/token")) {
            try client(provider).refresh(refreshToken: "x")
        }
        provider.failure = .timeout
        #expect(throws: OAuthError.timeout("the token endpoint https://idp.example.com", seconds: 5)) {
            try client(provider).refresh(refreshToken: "x")
        }
        #expect(
            OAuthError.timeout("the token endpoint https://idp.example.com", seconds: 5).description
                == "timed out after 5s waiting for the token endpoint https://idp.example.com")
        provider.failure = .status(200, body: "not json")
        #expect(throws: OAuthError.invalidResponse("the token response is not a JSON object")) {
            try client(provider).refresh(refreshToken: "x")
        }
        provider.failure = .status(200, body: #"{"token_type":"Bearer"}"#)
        #expect(throws: OAuthError.invalidResponse("the token response has no access_token")) {
            try client(provider).refresh(refreshToken: "x")
        }
        provider.failure = .status(200, body: #"{"access_token":"a","token_type":"mac"}"#)
        #expect(throws: OAuthError.invalidResponse("token_type mac is not supported (only Bearer, RFC 6750)")) {
            try client(provider).refresh(refreshToken: "x")
        }
    }

    @Test(arguments: [
        ("3600", 3600.0), (#""120""#, 120.0), ("90.5", 90.5), (#""soon""#, nil), ("-5", nil), ("true", nil),
        ("false", nil), ("1", 1.0), ("null", nil), (#"{"s":1}"#, nil),
    ])
    func expiresInAsNumberOrNumericString(json: String, expected: Double?) throws {
        let body = #"{"access_token":"a","expires_in":\#(json)}"#
        let response = try TokenResponse.parse(
            HTTPResponse(status: 200, body: Array(body.utf8)), endpoint: URL(string: "https://x/t")!)
        #expect(response.expiresIn == expected)
    }

    @Test func expiryFallsBackToTheJWTExpThenToADefault() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(
            OAuthTokenSet.expiry(of: TokenResponse(accessToken: "a", expiresIn: 60), now: now)
                == now.addingTimeInterval(60))
        let jwt = makeToken(claims: #"{"exp":1700000500}"#)
        #expect(
            OAuthTokenSet.expiry(of: TokenResponse(accessToken: jwt), now: now)
                == Date(timeIntervalSince1970: 1_700_000_500))
        // expires_in wins over exp.
        #expect(
            OAuthTokenSet.expiry(of: TokenResponse(accessToken: jwt, expiresIn: 10), now: now)
                == now.addingTimeInterval(10))
        // An opaque token, or a JWT whose exp is not a NumericDate: the conservative default, never forever.
        #expect(
            OAuthTokenSet.expiry(of: TokenResponse(accessToken: "opaque"), now: now)
                == now.addingTimeInterval(OAuthTokenSet.defaultLifetime))
        let badExp = makeToken(claims: #"{"exp":"never"}"#)
        #expect(OAuthTokenSet.expiry(of: TokenResponse(accessToken: badExp), now: now) == now.addingTimeInterval(300))
    }

    @Test func storedFormRoundTripsAndHoldsNoClientSecret() throws {
        let set = OAuthTokenSet(
            accessToken: "at", refreshToken: "rt", idToken: "id",
            expiresAt: Date(timeIntervalSince1970: 1_700_000_000.25),
            scope: "openid", tokenEndpoint: URL(string: "https://idp.example.com/t")!, clientID: "c",
            clientSecret: "client-s3cret", issuer: "https://idp.example.com")
        let bytes = set.encoded()
        var withoutSecret = set
        withoutSecret.clientSecret = nil
        #expect(try OAuthTokenSet.decode(bytes) == withoutSecret)
        #expect(!String(decoding: bytes, as: UTF8.self).contains("client-s3cret"))
        let json = try #require(try JSONText.parse(bytes).object)
        #expect(
            json.keys.sorted() == [
                "access_token", "client_id", "expires_at", "id_token",
                "issuer", "refresh_token", "scope", "token_endpoint", "token_type", "version",
            ])
        #expect(json["version"] == .integer(1))
        #expect(throws: OAuthError.storedItem("its secret is not an OAuth token set (log in with `fob oauth login`)")) {
            try OAuthTokenSet.decode(Array("password".utf8))
        }
        var newer = set
        newer.version = 99
        #expect(throws: OAuthError.storedItem("token set version 99 is newer than this fob understands (1)")) {
            try OAuthTokenSet.decode(newer.encoded())
        }
    }

    /// A token set that names a file to read at refresh (as older versions
    /// wrote, or as an imported item could, naming any file) is refused.
    @Test func aStoredSetNamingAClientSecretFileIsRefused() throws {
        let json =
            #"{"version":1,"access_token":"at","token_type":"Bearer","expires_at":1700000000,"#
            + #""token_endpoint":"https://idp.example.com/t","client_id":"c","client_secret_file":"/root/.git-credentials"}"#
        #expect {
            try OAuthTokenSet.decode(Array(json.utf8))
        } throws: { error in
            guard case OAuthError.storedItem(let why) = error else { return false }
            return why.contains("client_secret_file") && why.contains("fob oauth login")
        }
    }

    @Test func refreshedKeepsOldValuesTheProviderDidNotResend() {
        let set = OAuthTokenSet(
            accessToken: "at1", refreshToken: "rt1", idToken: "id1", expiresAt: Date(timeIntervalSince1970: 0),
            scope: "openid", tokenEndpoint: URL(string: "https://x/t")!, clientID: "c")
        let now = Date(timeIntervalSince1970: 1000)
        let kept = set.refreshed(with: TokenResponse(accessToken: "at2", expiresIn: 60), now: now)
        #expect(kept.accessToken == "at2")
        #expect(kept.refreshToken == "rt1")
        #expect(kept.idToken == "id1")
        #expect(kept.scope == "openid")
        #expect(kept.expiresAt == Date(timeIntervalSince1970: 1060))
        let rotated = set.refreshed(
            with: TokenResponse(accessToken: "at3", refreshToken: "rt2", idToken: "id2", scope: "email"), now: now)
        #expect(rotated.refreshToken == "rt2")
        #expect(rotated.idToken == "id2")
        #expect(rotated.scope == "email")
        #expect(rotated.expiresAt == Date(timeIntervalSince1970: 1300))
    }

    @Test func formEncodingRoundTrips() {
        let fields = [("a b", "c&d=e"), ("ü", "+/%")]
        let text = FormEncoding.encode(fields)
        #expect(text == "a%20b=c%26d%3De&%C3%BC=%2B%2F%25")
        let back = FormEncoding.decode(Substring(text))
        #expect(back.map(\.0) == ["a b", "ü"])
        #expect(back.map(\.1) == ["c&d=e", "+/%"])
        #expect(FormEncoding.decode("x=1+2&y=%zz&z").map(\.1) == ["1 2", "%zz", ""])
    }
}

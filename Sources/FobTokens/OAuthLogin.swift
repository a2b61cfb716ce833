import FoundationEssentials

/// The whole authorization-code login of a native app (RFC 8252): a
/// loopback listener, a fresh PKCE pair and `state`, the browser, the code
/// exchange.
public enum OAuthLogin {
    /// Runs the login.
    /// - Parameters:
    ///   - client: endpoints, client id, authentication and transport.
    ///   - scope: the scope to ask for, space-separated; `nil` for the provider's default.
    ///   - timeout: seconds to wait for the browser.
    ///   - now: the clock.
    ///   - present: shows the authorization URL to the user (print it, open a browser).
    /// - Returns: the token set to store; it keeps the client's secret
    ///   (``ClientAuthentication/secretBasic(secret:)``) for later refreshes.
    /// - Throws: ``OAuthError`` from the listener, the redirect, or the token endpoint.
    public static func run(
        client: OAuthClient, scope: String?, timeout: TimeInterval,
        now: @Sendable () -> Date = Date.init, present: (URL) -> Void
    ) throws(OAuthError) -> OAuthTokenSet {
        let listener = try LoopbackRedirectListener()
        let pkce: PKCE
        do { pkce = try PKCE.generate() } catch { throw .configuration("\(error)") }
        let state = OAuthClient.makeState()
        let url = client.authorizationURL(redirectURI: listener.redirectURI, scope: scope, state: state, pkce: pkce)
        present(url)
        let code = try listener.waitForCode(expectedState: state, timeout: timeout)
        let response = try client.exchange(code: code, verifier: pkce.verifier, redirectURI: listener.redirectURI)
        var clientSecret: String?
        if case .secretBasic(let secret) = client.authentication { clientSecret = secret }
        return OAuthTokenSet(
            response: response, requestedScope: scope, endpoints: client.endpoints, clientID: client.clientID,
            clientSecret: clientSecret, now: now())
    }
}

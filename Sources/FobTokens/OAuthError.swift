/// What went wrong talking to an OAuth 2.0 provider, or in the login flow.
///
/// Descriptions are one line and never contain a token, code, verifier or
/// client secret; provider texts (`error`, `error_description`) are shown
/// on one line, control characters replaced and at most 300 characters.
public enum OAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The token endpoint answered with an error response (RFC 6749 §5.2),
    /// such as `invalid_grant` or `invalid_client`.
    case provider(error: String, description: String?, status: Int)
    /// The authorization server redirected back with an error (RFC 6749
    /// §4.1.2.1), such as `access_denied`.
    case authorization(error: String, description: String?)
    /// An endpoint answered with an HTTP error and no OAuth error body.
    case http(status: Int, endpoint: String)
    /// No answer within the time allowed: what was awaited, and the limit in seconds.
    case timeout(String, seconds: Double)
    /// The request could not be sent or the connection failed.
    case network(String)
    /// A response is not what the protocol requires (not JSON, no `access_token`, …).
    case invalidResponse(String)
    /// The discovery document is missing, malformed, or names another issuer.
    case discovery(String)
    /// The redirect's `state` does not match the request's (RFC 6749 §10.12).
    case stateMismatch
    /// The loopback redirect listener failed (socket error, malformed redirect).
    case listener(String)
    /// A setting is unusable (a non-HTTPS endpoint off loopback, an unreadable secret file, …).
    case configuration(String)
    /// The stored token has expired and there is no refresh token; log in again.
    case noRefreshToken
    /// The stored item is not a usable OAuth token set.
    case storedItem(String)

    /// One line naming the cause.
    public var description: String {
        switch self {
        case .provider(let error, let description, let status):
            var text = "the provider refused the request: \(OAuthError.oneLine(error))"
            if let description, !description.isEmpty { text += " (\(OAuthError.oneLine(description)))" }
            text += " [HTTP \(status)]"
            if error == "invalid_grant" { text += "; log in again with `fob oauth login`" }
            return text
        case .authorization(let error, let description):
            var text = "authorization failed: \(OAuthError.oneLine(error))"
            if let description, !description.isEmpty { text += " (\(OAuthError.oneLine(description)))" }
            return text
        case .http(let status, let endpoint):
            return "HTTP \(status) from \(endpoint)"
        case .timeout(let what, let seconds):
            return "timed out after \(TimeText.duration(seconds)) waiting for \(what)"
        case .network(let why):
            return "network error: \(why)"
        case .invalidResponse(let why):
            return "invalid response from the provider: \(why)"
        case .discovery(let why):
            return "OpenID discovery failed: \(why)"
        case .stateMismatch:
            return "the redirect's state does not match this login (possible cross-site request forgery); try again"
        case .listener(let why):
            return "redirect listener: \(why)"
        case .configuration(let why):
            return why
        case .noRefreshToken:
            return "the access token has expired and there is no refresh token; log in again with `fob oauth login`"
        case .storedItem(let why):
            return "not a usable oauth item: \(why)"
        }
    }

    /// A provider's text on one line: control characters become spaces, runs
    /// of spaces collapse, and more than 300 characters are cut with `…`.
    static func oneLine(_ text: String) -> String {
        let spaced = String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
        let collapsed = spaced.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        return collapsed.count > 300 ? String(collapsed.prefix(300)) + "…" : collapsed
    }
}

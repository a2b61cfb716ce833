import FobStore
import FobTokens
import Foundation

/// The JWT from the first-round issue: `{"alg":"HS256","typ":"JWT"}`, claims
/// `sub` dev@example.com, `iat` 1459870274, `exp` 1459872074; its claims
/// segment lacks one `=` of padding.
public let issueToken =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXZAZXhhbXBsZS5jb20iLCJpYXQiOjE0NTk4NzAyNzQsImV4cCI6MTQ1OTg3MjA3NH0.c2ln"

/// A compact JWS from raw header and claims JSON texts (base64url without
/// padding, RFC 7515 §7.1); the signature segment is arbitrary.
public func makeToken(header: String = #"{"alg":"HS256","typ":"JWT"}"#, claims: String, signature: String = "c2ln")
    -> String
{
    Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8)) + "." + signature
}

/// A JWT for `sub` "ana" whose `exp` is `exp`: a number of seconds since
/// 1970, or a `String` written as a JSON string (a numeric string claim).
public func jwt(exp: Any) -> String {
    let expJSON: String
    if let text = exp as? String { expJSON = "\"\(text)\"" } else { expJSON = "\(exp)" }
    return makeToken(claims: #"{"sub":"ana","exp":\#(expJSON)}"#)
}

/// An item with a UTF-8 secret; created and modified at `modified`
/// (default 2025-12-29 09:20 UTC).
public func item(
    _ service: String, _ account: String, _ secret: String = "s3cret", kind: ItemKind = .password,
    label: String? = nil, modified: Date = Date(timeIntervalSince1970: 1_767_000_000)
) -> Item {
    Item(
        service: service, account: account, label: label, kind: kind, created: modified, modified: modified,
        secret: SecretBytes(utf8: secret))
}

/// An `oauth` item holding a token set that expires at `expiresAt` (seconds since 1970).
public func oauthItem(_ service: String, _ account: String, expiresAt: TimeInterval) -> Item {
    let set = OAuthTokenSet(
        accessToken: "opaque", refreshToken: "rt", expiresAt: Date(timeIntervalSince1970: expiresAt),
        tokenEndpoint: URL(string: "https://idp.example/token")!, clientID: "fob")
    return Item(service: service, account: account, kind: .oauth, secret: SecretBytes(set.encoded()))
}

/// The `KeychainError` that `body` throws, or `nil` when it throws nothing
/// or another error; tests compare its ``KeychainError/statusName``
/// (`"errSecItemNotFound"` …), which names the case whatever its message.
public func thrownKeychainError<R>(_ body: () throws -> R) -> KeychainError? {
    do {
        _ = try body()
        return nil
    } catch let error as KeychainError {
        return error
    } catch {
        return nil
    }
}

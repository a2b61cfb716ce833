import FobStore
import FobTokens
import FoundationEssentials

/// What Fob can tell about the token in a `token` or `oauth` item, for
/// lists (expiry) and detail views (decoded claims).
public struct TokenDetails: Sendable, Equatable {
    /// When the token expires: the stored expiry of an `oauth` item, else the
    /// JWT's `exp`; `nil` when unknown (an opaque token, or no valid `exp`).
    public var expiresAt: Date?
    /// The decoded JWT (access token, else ID token, of an `oauth` item);
    /// `nil` when the token is not a JWT. Its signature is not verified.
    public var jwt: JWT?
    /// Whether the `oauth` item has a refresh token, so a refresh can be offered.
    public var canRefresh: Bool

    /// Reads an item with its secret.
    /// - Parameter item: an item fetched with its secret.
    /// - Returns: `nil` for items of other kinds, items without a secret,
    ///   and `oauth` items whose secret is not a token set.
    public init?(item: Item) {
        guard let secret = item.secret else { return nil }
        switch item.kind {
        case .oauth:
            guard let set = try? OAuthSession.tokenSet(of: item) else { return nil }
            expiresAt = set.expiresAt
            jwt = (try? JWT(decoding: set.accessToken)) ?? set.idToken.flatMap { try? JWT(decoding: $0) }
            canRefresh = set.refreshToken != nil
        case .token:
            guard let text = secret.unsafeString else { return nil }
            jwt = try? JWT(decoding: text)
            expiresAt = jwt?.expiresAt.date?.date
            canRefresh = false
        default:
            return nil
        }
    }

    /// `expires in 4m`, `expired 2h ago`, or `no expiry` relative to `now`.
    public func expiryText(now: Date) -> String {
        guard let expiresAt else { return "no expiry" }
        return TimeText.expiry(expiresAt, now: now)
    }
}

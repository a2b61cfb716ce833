import FoundationEssentials

/// The stored form of an `oauth` item: everything needed to use and refresh
/// the tokens, serialized as JSON into the item's secret (which the vault
/// encrypts as a whole).
///
/// A confidential client's secret (``clientSecret``), read once from the
/// file given at login, is kept in the item's hidden custom field
/// `client_secret`, never in this JSON, so `fob get` of the item does not
/// print it. A stored set never names a file to read: one that does
/// (`client_secret_file`, as older versions wrote, or an imported one that
/// could name any file) is refused here, and the vault refuses to save it.
///
/// JSON layout (version 1): `{"version":1,"access_token":…,"token_type":"Bearer",
/// "refresh_token":…,"id_token":…,"expires_at":<seconds since 1970>,
/// "scope":…,"token_endpoint":…,"client_id":…,"issuer":…,
/// "issued_at":<seconds since 1970>}`;
/// optional members are omitted when absent.
public struct OAuthTokenSet: Codable, Sendable, Equatable {
    /// The layout version this build writes.
    public static let currentVersion = 1
    /// The lifetime assumed when the provider gives neither `expires_in` nor a
    /// JWT `exp`: 5 minutes, so an unknown token is refreshed soon rather than trusted long.
    public static let defaultLifetime: TimeInterval = 300

    /// The layout version the set was written with.
    public var version: Int
    /// The access token (RFC 6749 §1.4).
    public var accessToken: String
    /// `Bearer` (RFC 6750).
    public var tokenType: String
    /// The refresh token (RFC 6749 §1.5), if one was issued.
    public var refreshToken: String?
    /// The OpenID Connect ID token, if one was issued.
    public var idToken: String?
    /// When the access token stops being valid.
    public var expiresAt: Date
    /// The granted scope, space-separated (RFC 6749 §3.3).
    public var scope: String?
    /// Where refreshes go (RFC 6749 §3.2).
    public var tokenEndpoint: URL
    /// `client_id` (RFC 6749 §2.2).
    public var clientID: String
    /// The client secret sent as `client_secret_basic` (RFC 6749 §2.3.1);
    /// `nil` for a public client. Not part of the JSON: the item keeps it in
    /// its hidden custom field `client_secret`.
    public var clientSecret: String? = nil
    /// The issuer the endpoints were discovered from, if any.
    public var issuer: String?
    /// When the access token was received; with ``expiresAt`` it gives the
    /// token's lifetime. `nil` in sets stored before it was recorded.
    public var issuedAt: Date?

    enum CodingKeys: String, CodingKey {
        case version
        case accessToken = "access_token"
        case tokenType = "token_type"
        case refreshToken = "refresh_token"
        case idToken = "id_token"
        case expiresAt = "expires_at"
        case scope
        case tokenEndpoint = "token_endpoint"
        case clientID = "client_id"
        case issuer
        case issuedAt = "issued_at"
    }

    /// A token set with these values, in the current layout version.
    public init(
        accessToken: String, tokenType: String = "Bearer", refreshToken: String? = nil, idToken: String? = nil,
        expiresAt: Date, scope: String? = nil, tokenEndpoint: URL, clientID: String,
        clientSecret: String? = nil, issuer: String? = nil, issuedAt: Date? = nil
    ) {
        version = OAuthTokenSet.currentVersion
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.expiresAt = expiresAt
        self.scope = scope
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.issuer = issuer
        self.issuedAt = issuedAt
    }

    /// The token set from a first token response (after login).
    /// - Parameters:
    ///   - response: the token endpoint's answer.
    ///   - requestedScope: the scope asked for, kept when the response omits `scope` (RFC 6749 §5.1).
    ///   - now: the time the response arrived.
    public init(
        response: TokenResponse, requestedScope: String?, endpoints: OAuthEndpoints, clientID: String,
        clientSecret: String?, now: Date
    ) {
        self.init(
            accessToken: response.accessToken, tokenType: response.tokenType, refreshToken: response.refreshToken,
            idToken: response.idToken, expiresAt: OAuthTokenSet.expiry(of: response, now: now),
            scope: response.scope ?? requestedScope, tokenEndpoint: endpoints.token, clientID: clientID,
            clientSecret: clientSecret, issuer: endpoints.issuer, issuedAt: now)
    }

    /// The token set after a refresh response (RFC 6749 §6): the new access
    /// token and expiry; the new refresh token when the provider rotated it,
    /// else the old one; the new ID token and scope when sent, else the old.
    public func refreshed(with response: TokenResponse, now: Date) -> OAuthTokenSet {
        var next = self
        next.version = OAuthTokenSet.currentVersion
        next.accessToken = response.accessToken
        next.tokenType = response.tokenType
        next.refreshToken = response.refreshToken ?? refreshToken
        next.idToken = response.idToken ?? idToken
        next.scope = response.scope ?? scope
        next.expiresAt = OAuthTokenSet.expiry(of: response, now: now)
        next.issuedAt = now
        return next
    }

    /// When a fresh access token expires: `now + expires_in` when the
    /// provider says; else the access token's JWT `exp`; else
    /// `now +` ``defaultLifetime``. Never "valid forever".
    public static func expiry(of response: TokenResponse, now: Date) -> Date {
        // expires_in is bounded by TokenResponse (0 to 10 years), the JWT's
        // exp by NumericDate.
        if let seconds = response.expiresIn { return now.addingTimeInterval(seconds) }
        if let jwt = try? JWT(decoding: response.accessToken), let exp = jwt.expiresAt.date { return exp.date }
        return now.addingTimeInterval(defaultLifetime)
    }

    /// Whether the access token expires within `margin` seconds of `now` (or already has).
    public func expires(within margin: TimeInterval, of now: Date) -> Bool {
        expiresAt.timeIntervalSince(now) <= margin
    }

    /// The share of a token's lifetime that ``refreshMargin(atMost:)`` never exceeds: one half.
    public static let marginFraction = 0.5

    /// How long before expiry to refresh: `margin`, but never more than
    /// ``marginFraction`` of the token's lifetime when it is known, so a
    /// token that lives 3 seconds is used for 1.5 seconds rather than
    /// refreshed by every caller as soon as it arrives.
    /// - Parameter margin: the usual margin in seconds (30 for Fob).
    public func refreshMargin(atMost margin: TimeInterval) -> TimeInterval {
        guard let issuedAt else { return margin }
        let lifetime = expiresAt.timeIntervalSince(issuedAt)
        guard lifetime > 0 else { return margin }
        return min(margin, lifetime * OAuthTokenSet.marginFraction)
    }

    /// The JSON bytes stored as the item's secret.
    /// - Important: the bytes hold tokens; put them in protected memory and wipe the copy.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .secondsSince1970
        // Encoding plain strings, numbers, dates and URLs cannot fail.
        return Array((try? encoder.encode(self)) ?? Data())
    }

    /// The member older sets used to name a file read at each refresh.
    static let clientSecretFileMember = "client_secret_file"

    /// Reads the stored JSON.
    /// - Throws: ``OAuthError/storedItem(_:)`` for bytes that are not this
    ///   layout or come from a newer version, that name a file to read
    ///   (`client_secret_file`), or whose `expires_at` is not a
    ///   finite number of seconds within ±``NumericDate/maximumSeconds``.
    public static func decode<C: Collection>(_ bytes: C) throws(OAuthError) -> OAuthTokenSet where C.Element == UInt8 {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let set: OAuthTokenSet
        do {
            set = try decoder.decode(OAuthTokenSet.self, from: Data(bytes))
        } catch {
            throw .storedItem("its secret is not an OAuth token set (log in with `fob oauth login`)")
        }
        let names = (try? JSONText.parse(bytes))?.object.map { Set($0.keys) }
        guard !(names ?? []).contains(clientSecretFileMember) else {
            throw .storedItem(
                "it names a file to read (client_secret_file), which Fob does not do: sign in again with "
                    + "`fob oauth login … --client-secret-file F`, which keeps the client secret in the item")
        }
        guard set.version <= currentVersion else {
            throw .storedItem("token set version \(set.version) is newer than this fob understands (\(currentVersion))")
        }
        guard !set.accessToken.isEmpty else { throw .storedItem("it has no access token") }
        // A number from the record is checked before anything does
        // arithmetic on it: 1e19 or 1e300 seconds would trap where a
        // duration becomes an integer.
        let seconds = set.expiresAt.timeIntervalSince1970
        guard seconds.isFinite, abs(seconds) <= NumericDate.maximumSeconds else {
            throw .storedItem(
                "its expires_at is not a usable date (a finite number of seconds within about 8,000 years of 1970)")
        }
        if let issued = set.issuedAt?.timeIntervalSince1970,
            !(issued.isFinite && abs(issued) <= NumericDate.maximumSeconds)
        {
            throw .storedItem(
                "its issued_at is not a usable date (a finite number of seconds within about 8,000 years of 1970)")
        }
        return set
    }
}

import FobAccess
import FobStore
import FobTokens
import FoundationEssentials

/// Keeps one stored `oauth` item usable: hands out a valid access token and
/// refreshes it (RFC 6749 §6) when it is about to expire.
///
/// Refreshes are serialised across processes with ``KeychainStore/withExclusiveLock(_:)``
/// and the item is read again once the lock is held, so when several
/// processes need a fresh token at once only the first reaches the
/// provider; the others use what it stored (a provider may revoke a refresh
/// token that is used twice). The new token set is written with one
/// ``KeychainStore/update(matching:with:)`` (one transaction); when the provider
/// refuses, times out or answers nonsense, the item is left as it was.
///
/// Like the store it uses, an instance stays on one thread at a time.
public final class OAuthSession {
    /// Refresh when the access token expires within this many seconds, or
    /// within half its lifetime when that is shorter (see
    /// ``OAuthTokenSet/refreshMargin(atMost:)``).
    public static let refreshMargin: TimeInterval = 30

    /// The store holding the item (unlocked).
    public let store: any KeychainStore
    /// The item's service.
    public let service: String
    /// The item's account.
    public let account: String
    private let transport: any HTTPTransport
    private let now: @Sendable () -> Date
    private let timeout: TimeInterval

    /// - Parameters:
    ///   - store: an unlocked store.
    ///   - service: the item's service.
    ///   - account: the item's account.
    ///   - transport: how to reach the token endpoint (a fake provider in tests).
    ///   - timeout: seconds to wait for the token endpoint.
    ///   - now: the clock.
    public init(
        store: any KeychainStore, service: String, account: String,
        transport: any HTTPTransport = HelperHTTPTransport(), timeout: TimeInterval = 30,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.store = store
        self.service = service
        self.account = account
        self.transport = transport
        self.timeout = timeout
        self.now = now
    }

    /// A session over an unlocked vault (wrapped in a ``VaultStore``).
    /// - Parameters: as ``init(store:service:account:transport:timeout:now:)``.
    public convenience init(
        vault: Vault, service: String, account: String,
        transport: any HTTPTransport = HelperHTTPTransport(), timeout: TimeInterval = 30,
        now: @escaping @Sendable () -> Date = Date.init
    ) {
        self.init(
            store: VaultStore(vault: vault), service: service, account: account,
            transport: transport, timeout: timeout, now: now)
    }

    /// The stored token set.
    /// - Throws: `.keychain(.itemNotFound)` when there is no such item;
    ///   `.oauth(.storedItem)` when it is not an `oauth` item or cannot be read.
    public func load() throws(OAuthSessionError) -> OAuthTokenSet {
        let item: Item
        do { item = try store.item(ItemKey(service: service, account: account)) } catch { throw .keychain(error) }
        return try OAuthSession.tokenSet(of: item)
    }

    /// The token set stored in `item`.
    /// - Throws: `.oauth(.storedItem)` when the item is not of kind `oauth` or its secret is not a token set.
    public static func tokenSet(of item: Item) throws(OAuthSessionError) -> OAuthTokenSet {
        guard item.kind == .oauth else {
            throw .oauth(.storedItem("\(item.displayName) is a \(item.kind.rawValue) item, not an oauth item"))
        }
        guard let secret = item.secret else { throw .oauth(.storedItem("\(item.displayName) has no secret")) }
        var bytes = secret.unsafeArray
        defer { bytes.wipe() }
        var set: OAuthTokenSet
        do {
            set = try OAuthTokenSet.decode(bytes)
        } catch {
            throw .oauth(error)
        }
        set.clientSecret = item.customFields.first { $0.name == clientSecretField }?.unsafeText
        return set
    }

    /// The hidden custom field of an `oauth` item that holds its client's
    /// secret (`client_secret_basic`), so the item never names a file to read.
    public static let clientSecretField = "client_secret"

    /// `fields` with the client secret field set to `secret` (added hidden,
    /// or replaced), or removed when `secret` is `nil`; other fields kept.
    static func fields(_ fields: [CustomField], withClientSecret secret: String?) -> [CustomField] {
        var kept = fields.filter { $0.name != clientSecretField }
        if let secret { kept.append(CustomField(name: clientSecretField, text: secret, isHidden: true)) }
        return kept
    }

    /// A valid access token: the stored one, or a fresh one when the stored
    /// one expires within ``refreshMargin`` seconds.
    ///
    /// A token that is about to expire but has no refresh token is still
    /// returned while it is valid; once expired, that is `.noRefreshToken`.
    /// - Returns: the access token.
    /// - Throws: ``OAuthSessionError``: the store's errors, or the provider's.
    public func validAccessToken() throws(OAuthSessionError) -> String {
        let stored = try load()
        if !stored.expires(within: stored.refreshMargin(atMost: OAuthSession.refreshMargin), of: now()) {
            return stored.accessToken
        }
        return try refresh(force: false, seen: stored).accessToken
    }

    /// Refreshes under the vault's exclusive lock.
    /// - Parameter force: refresh even when the stored token is still fresh
    ///   (`fob oauth refresh`); otherwise a token another process refreshed
    ///   meanwhile is used as it is.
    /// - Returns: the token set now stored.
    /// - Throws: ``OAuthSessionError``; the stored item is unchanged on any error.
    @discardableResult
    public func refresh(force: Bool) throws(OAuthSessionError) -> OAuthTokenSet {
        try refresh(force: force, seen: nil)
    }

    /// ``refresh(force:)``, knowing the token set read before waiting for
    /// the lock: when the stored access token differs from `seen`'s, another
    /// process refreshed meanwhile, and its token is used while it is valid.
    private func refresh(force: Bool, seen: OAuthTokenSet?) throws(OAuthSessionError) -> OAuthTokenSet {
        do {
            return try store.withExclusiveLock { () throws -> OAuthTokenSet in
                try refreshHoldingLock(force: force, seen: seen)
            }
        } catch let error as OAuthSessionError {
            throw error
        } catch let error as KeychainError {
            throw .keychain(error)
        } catch {
            throw .oauth(.configuration("\(error)"))
        }
    }

    private func refreshHoldingLock(force: Bool, seen: OAuthTokenSet?) throws(OAuthSessionError) -> OAuthTokenSet {
        // Read again: another process may have refreshed while we waited for the lock.
        let current = try load()
        let clock = now()
        if !force && !current.expires(within: current.refreshMargin(atMost: OAuthSession.refreshMargin), of: clock) {
            return current
        }
        // Refreshed by another process since we looked, and still valid:
        // use it rather than spend the refresh token again.
        if !force, let seen, seen.accessToken != current.accessToken, current.expiresAt > clock { return current }
        guard let refreshToken = current.refreshToken else {
            if !force && current.expiresAt > clock { return current }
            throw .oauth(.noRefreshToken)
        }
        let authentication = current.clientSecret.map { ClientAuthentication.secretBasic(secret: $0) } ?? .none
        let next: OAuthTokenSet
        do {
            // Refresh needs only the token endpoint (RFC 6749 §6).
            let endpoints = try OAuthEndpoints(
                authorization: current.tokenEndpoint, token: current.tokenEndpoint, issuer: current.issuer)
            let client = OAuthClient(
                endpoints: endpoints, clientID: current.clientID, authentication: authentication,
                transport: transport, timeout: timeout)
            let response = try client.refresh(refreshToken: refreshToken)
            next = current.refreshed(with: response, now: now())
        } catch {
            throw .oauth(error)
        }
        try write(next)
        return next
    }

    /// Replaces the item's secret in one transaction.
    private func write(_ set: OAuthTokenSet) throws(OAuthSessionError) {
        var bytes = set.encoded()
        defer { bytes.wipe() }
        do {
            _ = try store.update(
                matching: .key(service: service, account: account),
                with: ItemChanges(kind: .oauth, secret: SecretBytes(bytes)))
        } catch {
            throw .keychain(error)
        }
    }

    /// Stores the token set of a new login as an `oauth` item, adding it or
    /// replacing an existing `oauth` item in one transaction, under the
    /// vault's exclusive lock (so it does not interleave with a refresh).
    /// The set's client secret goes into the hidden field
    /// ``clientSecretField`` (removed for a public client); the item's other
    /// custom fields are kept.
    /// - Parameters:
    ///   - set: the tokens from ``OAuthLogin/run(client:scope:timeout:now:present:)``.
    ///   - label: the item's label, if any.
    /// - Returns: whether the item was added or updated.
    /// - Throws: `.keychain(.duplicateItem)` when an item of another kind has
    ///   this service and account (it is not overwritten); other store errors.
    @discardableResult
    public static func store(
        _ set: OAuthTokenSet, in store: any KeychainStore, service: String, account: String,
        label: String? = nil
    ) throws(OAuthSessionError) -> Vault.SaveOutcome {
        var bytes = set.encoded()
        defer { bytes.wipe() }
        let secret = SecretBytes(bytes)
        do {
            return try store.withExclusiveLock { () throws -> Vault.SaveOutcome in
                let existing = try? store.items(
                    matching: .key(service: service, account: account), withSecrets: true
                ).first
                if let existing, existing.kind != .oauth {
                    throw KeychainError.duplicateItem(
                        "\(existing.displayName) is a \(existing.kind.rawValue) item; not replacing it with an oauth item"
                    )
                }
                var changes = ItemChanges(kind: .oauth)
                changes.customFields = fields(existing?.customFields ?? [], withClientSecret: set.clientSecret)
                if let label { changes.label = .some(label) }
                return try store.save(service: service, account: account, secret: secret, attributes: changes)
            }
        } catch let error as KeychainError {
            throw .keychain(error)
        } catch {
            throw .oauth(.configuration("\(error)"))
        }
    }
}

@available(*, unavailable)
extension OAuthSession: Sendable {}

/// An error of ``OAuthSession``: from the store or from OAuth.
public enum OAuthSessionError: Error, Sendable, Equatable, CustomStringConvertible {
    case keychain(KeychainError)
    case oauth(OAuthError)

    /// One line naming the cause.
    public var description: String {
        switch self {
        case .keychain(let e): return e.description
        case .oauth(let e): return e.description
        }
    }

    /// The process exit status: the store's mapping (44 not found, 36
    /// locked, …), 1 for every OAuth error.
    public var exitStatus: Int32 {
        switch self {
        case .keychain(let e): return e.exitStatus
        case .oauth: return 1
        }
    }
}

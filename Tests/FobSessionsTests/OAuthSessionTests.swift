import FobAccess
import FobSessions
import FobStore
import FobTestSupport
import FobTokens
import Foundation
import Testing

@Suite struct OAuthSessionTests {
    /// A vault with one `oauth` item `api`/`me` whose token expires `expiresIn` seconds from `clock.now`.
    struct Fixture {
        let vault: TestVault
        let provider = FakeProvider()
        let clock = TestClock(start: Date(timeIntervalSince1970: 1_700_000_000))

        init(expiresIn: TimeInterval = 600, refreshToken: Bool = true, clientSecret: String? = nil) throws {
            vault = try TestVault()
            let set = OAuthTokenSet(
                accessToken: "at-0", refreshToken: refreshToken ? provider.issueRefreshToken() : nil,
                idToken: "id-0", expiresAt: clock.now.addingTimeInterval(expiresIn), scope: "openid",
                tokenEndpoint: provider.tokenURL, clientID: "client-1", clientSecret: clientSecret)
            try OAuthSession.store(set, in: VaultStore(vault: vault.vault), service: "api", account: "me")
        }

        func session(_ vault: Vault? = nil) -> OAuthSession {
            OAuthSession(
                vault: vault ?? self.vault.vault, service: "api", account: "me", transport: provider, timeout: 5,
                now: clock.function)
        }

        func stored() throws -> OAuthTokenSet { try session().load() }

        /// The item exactly as stored: secret bytes and modification date.
        func snapshot() throws -> (SecretBytes?, Date) {
            let item = try vault.vault.item(service: "api", account: "me")
            return (item.secret, item.modified)
        }
    }

    @Test func freshTokenIsReturnedWithoutAskingTheProvider() throws {
        let f = try Fixture(expiresIn: 31)
        #expect(try f.session().validAccessToken() == "at-0")
        #expect(f.provider.allRequests.isEmpty)
        let item = try f.vault.vault.item(service: "api", account: "me")
        #expect(item.kind == .oauth)
    }

    @Test func tokenExpiringWithin30SecondsIsRefreshedAndTheRefreshTokenRotated() throws {
        let f = try Fixture(expiresIn: 30)
        let before = try f.stored()
        let token = try f.session().validAccessToken()
        #expect(token != "at-0")
        #expect(f.provider.refreshCount == 1)
        let after = try f.stored()
        #expect(after.accessToken == token)
        #expect(after.refreshToken != before.refreshToken)
        #expect(after.idToken == "id-0")
        #expect(after.expiresAt == f.clock.now.addingTimeInterval(3600))
        let sent = f.provider.form(try #require(f.provider.allRequests.last))
        #expect(sent["refresh_token"] == before.refreshToken)
        #expect(sent["client_id"] == "client-1")

        // The rotated refresh token is the one used next; the old one is dead at the provider.
        f.clock.advance(3600)
        let third = try f.session().validAccessToken()
        #expect(third != token)
        #expect(f.provider.form(try #require(f.provider.allRequests.last))["refresh_token"] == after.refreshToken)
        #expect(f.provider.refreshCount == 2)
    }

    @Test func withoutRotationTheOldRefreshTokenIsKept() throws {
        let f = try Fixture(expiresIn: -10)
        f.provider.rotate = false
        let before = try f.stored()
        _ = try f.session().validAccessToken()
        #expect(try f.stored().refreshToken == before.refreshToken)
    }

    @Test func forcedRefreshRefreshesAFreshToken() throws {
        let f = try Fixture(expiresIn: 3000)
        let set = try f.session().refresh(force: true)
        #expect(set.accessToken != "at-0")
        #expect(f.provider.refreshCount == 1)
        #expect(try f.stored() == set)
    }

    @Test(arguments: ["3600", #""3600""#, "1800.5"])
    func expiresInAsNumberOrStringSetsTheExpiry(json: String) throws {
        let f = try Fixture(expiresIn: 0)
        f.provider.expiresInJSON = json
        _ = try f.session().validAccessToken()
        let seconds = Double(json.replacingOccurrences(of: "\"", with: ""))!
        #expect(try f.stored().expiresAt == f.clock.now.addingTimeInterval(seconds))
    }

    @Test func missingExpiresInUsesTheJWTExpElseTheDefault() throws {
        let f = try Fixture(expiresIn: 0)
        f.provider.expiresInJSON = nil
        f.provider.accessTokenOverride = makeToken(claims: #"{"exp":\#(Int(f.clock.now.timeIntervalSince1970) + 777)}"#)
        _ = try f.session().validAccessToken()
        #expect(try f.stored().expiresAt == f.clock.now.addingTimeInterval(777))

        f.clock.advance(800)
        f.provider.accessTokenOverride = "opaque"
        _ = try f.session().validAccessToken()
        #expect(try f.stored().expiresAt == f.clock.now.addingTimeInterval(OAuthTokenSet.defaultLifetime))
    }

    @Test(arguments: [
        (
            FakeProvider.Failure.status(400, body: #"{"error":"invalid_grant","error_description":"revoked"}"#),
            OAuthError.provider(error: "invalid_grant", description: "revoked", status: 400)
        ),
        (
            .status(401, body: #"{"error":"invalid_client"}"#),
            .provider(error: "invalid_client", description: nil, status: 401)
        ),
        (
            .status(500, body: "Internal Server Error"),
            .http(status: 500, endpoint: "https://idp.example.com/oauth2/token")
        ),
        (.status(200, body: "{}"), .invalidResponse("the token response has no access_token")),
        (.timeout, .timeout("the token endpoint https://idp.example.com", seconds: 5)),
        (.network, .network("connection refused")),
    ])
    func providerErrorsLeaveTheItemAsItWas(failure: FakeProvider.Failure, expected: OAuthError) throws {
        let f = try Fixture(expiresIn: 5)
        let before = try f.snapshot()
        f.provider.failure = failure
        // Every failure is the provider's (or the network's), reported as an OAuth error.
        let error = #expect(throws: OAuthSessionError.self) { try f.session().validAccessToken() }
        #expect(error == .oauth(expected))
        let after = try f.snapshot()
        #expect(after.0 == before.0)
        #expect(after.1 == before.1)
        do {
            _ = try f.session().validAccessToken()
        } catch {
            #expect(error.exitStatus == 1)
            #expect(!error.description.contains("\n"))
            #expect(!error.description.contains("rt-"))
        }
    }

    @Test func invalidGrantIsReportedInOneClearLine() throws {
        let f = try Fixture(expiresIn: 5)
        f.provider.failure = .status(400, body: #"{"error":"invalid_grant","error_description":"revoked"}"#)
        #expect(throws: OAuthSessionError.oauth(.provider(error: "invalid_grant", description: "revoked", status: 400)))
        {
            try f.session().validAccessToken()
        }
    }

    @Test func expiredWithoutRefreshTokenAsksForALogin() throws {
        let soon = try Fixture(expiresIn: 10, refreshToken: false)
        // Still valid for 10 s: returned as it is.
        #expect(try soon.session().validAccessToken() == "at-0")
        soon.clock.advance(10)
        #expect(throws: OAuthSessionError.oauth(.noRefreshToken)) { try soon.session().validAccessToken() }
        #expect(soon.provider.allRequests.isEmpty)
    }

    /// The client secret lives in the item's hidden field, never in the
    /// token set's JSON (which `fob get` prints), and a refresh sends it.
    @Test func clientSecretIsKeptInAHiddenFieldAndSentOnRefresh() throws {
        let f = try Fixture(expiresIn: 0, clientSecret: "s3cret")
        f.provider.requiredSecret = "s3cret"
        let item = try f.vault.vault.item(service: "api", account: "me")
        #expect(item.customFields == [CustomField(name: "client_secret", text: "s3cret", isHidden: true)])
        _ = try f.session().validAccessToken()
        #expect(f.provider.refreshCount == 1)
        #expect(!String(decoding: try f.snapshot().0!.unsafeArray, as: UTF8.self).contains("s3cret"))
        #expect(try f.vault.vault.item(service: "api", account: "me").customFields == item.customFields)
        // A login as a public client removes it and keeps other fields.
        try f.vault.vault.update(
            matching: .key(service: "api", account: "me"),
            with: ItemChanges(customFields: item.customFields + [CustomField(name: "team", text: "ops")]))
        var set = try f.stored()
        set.clientSecret = nil
        try OAuthSession.store(set, in: VaultStore(vault: f.vault.vault), service: "api", account: "me")
        #expect(
            try f.vault.vault.item(service: "api", account: "me").customFields == [
                CustomField(name: "team", text: "ops")
            ])
    }

    /// An oauth item that names a file to read at refresh (an import could
    /// name `~/.git-credentials`) is refused when saved, and a refresh of
    /// one already stored reads no file and says to sign in again.
    @Test func anItemNamingAClientSecretFileIsRefusedOnSaveAndNeverReadsIt() throws {
        let t = try TestVault()
        let directory = TemporaryDirectory()
        let victim = directory.file("git-credentials")
        try Data("https://ana:hunter2@example.com\n".utf8).write(to: victim)
        let json =
            #"{"version":1,"access_token":"at","token_type":"Bearer","expires_at":1,"refresh_token":"r","#
            + #""token_endpoint":"https://idp.example.com/t","client_id":"c","client_secret_file":"\#(victim.path)"}"#
        let item = Item(service: "api", account: "me", kind: .oauth, secret: .text(json))
        #expect {
            try t.vault.add(item)
        } throws: { error in
            guard case KeychainError.param(let why) = error else { return false }
            return why.contains("client_secret_file")
        }
        let refused = KeychainError.param(
            #"service "api", account "me" names a file to read (client_secret_file); an oauth item keeps its"#
                + " client secret itself: sign in with `fob oauth login … --client-secret-file F`")
        #expect(throws: refused) { try t.vault.add(contentsOf: [item]) }
        #expect(throws: refused) { try t.vault.applyImport([.add(item)]) }
        #expect(throws: refused) {
            try t.vault.save(service: "api", account: "me", secret: .text(json), attributes: ItemChanges(kind: .oauth))
        }
        // Saved as a password, then turned into an oauth item: refused too.
        try t.vault.add(Item(service: "api", account: "me", kind: .password, secret: .text(json)))
        #expect(throws: refused) {
            try t.vault.update(matching: .key(service: "api", account: "me"), with: ItemChanges(kind: .oauth))
        }
        // A token set naming a file, read by a session: refused, no request sent.
        let provider = FakeProvider()
        let stored = Item(service: "api", account: "me", kind: .oauth, secret: .text(json))
        #expect {
            try OAuthSession.tokenSet(of: stored)
        } throws: { error in
            guard case OAuthSessionError.oauth(.storedItem(let why)) = error else { return false }
            return why.contains("client_secret_file")
        }
        #expect(provider.allRequests.isEmpty)
    }

    @Test func itemsThatAreNotOAuthAreRefused() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "api", account: "me", kind: .password, secret: .text("hunter2")))
        let session = OAuthSession(vault: t.vault, service: "api", account: "me", transport: FakeProvider())
        #expect(
            throws: OAuthSessionError.oauth(
                .storedItem("service \"api\", account \"me\" is a password item, not an oauth item"))
        ) {
            try session.validAccessToken()
        }
        #expect(throws: OAuthSessionError.keychain(.itemNotFound("service \"api\", account \"nobody\""))) {
            try OAuthSession(vault: t.vault, service: "api", account: "nobody", transport: FakeProvider())
                .validAccessToken()
        }
        // A login does not overwrite a password item.
        let set = OAuthTokenSet(
            accessToken: "a", expiresAt: Date(), tokenEndpoint: URL(string: "https://x/t")!, clientID: "c")
        #expect(
            throws: OAuthSessionError.keychain(
                .duplicateItem(#"service "api", account "me" is a password item; not replacing it with an oauth item"#))
        ) { try OAuthSession.store(set, in: VaultStore(vault: t.vault), service: "api", account: "me") }
        #expect(try t.vault.item(service: "api", account: "me").secret == .text("hunter2"))
        // An oauth secret that is not a token set is reported.
        try t.vault.add(Item(service: "api", account: "junk", kind: .oauth, secret: .text("not json")))
        #expect(
            throws: OAuthSessionError.oauth(
                .storedItem("its secret is not an OAuth token set (log in with `fob oauth login`)"))
        ) {
            try OAuthSession(vault: t.vault, service: "api", account: "junk", transport: FakeProvider())
                .validAccessToken()
        }
    }

    @Test func storingALoginAgainReplacesTheOAuthItem() throws {
        let f = try Fixture()
        let set = OAuthTokenSet(
            accessToken: "new", expiresAt: f.clock.now.addingTimeInterval(100),
            tokenEndpoint: f.provider.tokenURL, clientID: "client-1")
        #expect(
            try OAuthSession.store(
                set, in: VaultStore(vault: f.vault.vault), service: "api", account: "me", label: "API") == .updated)
        #expect(try f.stored() == set)
        #expect(try f.vault.vault.item(service: "api", account: "me").label == "API")
    }

    @Test func concurrentCallersMakeExactlyOneRefresh() throws {
        let f = try Fixture(expiresIn: 5)
        f.provider.delay = 0.3
        let results = try validTokensFromConcurrentCallers(f, count: 6)
        let values = results.compactMap { if case .success(let t) = $0 { return t } else { return nil } }
        #expect(values.count == 6, "failures: \(results)")
        #expect(Set(values).count == 1)
        #expect(values.first != "at-0")
        #expect(f.provider.refreshCount == 1)
        #expect(try f.stored().accessToken == values.first)
    }

    /// A provider issuing 3-second tokens (less than the 30-second margin):
    /// three concurrent callers, each with its own connection as separate
    /// processes would have, make one refresh; the others use its token.
    @Test func shortLivedTokensAreRefreshedOnceByConcurrentCallers() throws {
        let f = try Fixture(expiresIn: 1)
        f.provider.expiresInJSON = "3"
        f.provider.delay = 0.3
        let results = try validTokensFromConcurrentCallers(f, count: 3)
        let values = results.compactMap { if case .success(let t) = $0 { return t } else { return nil } }
        #expect(values.count == 3, "\(results)")
        #expect(Set(values).count == 1)
        #expect(f.provider.refreshCount == 1)
    }

    /// `count` threads, each with its own vault connection (as separate
    /// processes would have), ask for a valid access token at once.
    private func validTokensFromConcurrentCallers(_ f: Fixture, count: Int) throws -> [CallResult] {
        let url = f.vault.vault.url
        let password = f.vault.password
        let results = ResultList()
        let group = DispatchGroup()
        for _ in 0..<count {
            group.enter()
            Thread.detachNewThread { [provider = f.provider, clock = f.clock] in
                defer { group.leave() }
                do {
                    let vault = try Vault(url: url)
                    try vault.unlock(password: password)
                    let session = OAuthSession(
                        vault: vault, service: "api", account: "me", transport: provider, timeout: 5,
                        now: clock.function)
                    results.append(.success(try session.validAccessToken()))
                } catch {
                    results.append(.failure("\(error)"))
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        return results.all
    }

    /// The margin never exceeds half the token's lifetime: a fresh 3-second
    /// token is used for 1.5 s, then refreshed.
    @Test func theMarginIsAtMostHalfTheLifetime() throws {
        let f = try Fixture(expiresIn: 600)
        f.provider.expiresInJSON = "3"
        let first = try f.session().refresh(force: true)
        #expect(first.issuedAt == f.clock.now)
        #expect(first.refreshMargin(atMost: 30) == 1.5)
        f.clock.advance(1.4)
        #expect(try f.session().validAccessToken() == first.accessToken)
        #expect(f.provider.refreshCount == 1)
        f.clock.advance(0.2)
        #expect(try f.session().validAccessToken() != first.accessToken)
        #expect(f.provider.refreshCount == 2)
    }
}

enum CallResult: Sendable, Equatable {
    case success(String)
    case failure(String)
}

final class ResultList: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [CallResult] = []
    func append(_ r: CallResult) { lock.withLock { items.append(r) } }
    var all: [CallResult] { lock.withLock { items } }
}

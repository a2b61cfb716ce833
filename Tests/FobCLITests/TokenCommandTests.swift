import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

/// `fob jwt`, `fob pkce` and the offline parts of `fob oauth`, in process.
@Suite struct TokenCommandTests {
    static let issueToken = FobTestSupport.issueToken

    static func token(claims: String) -> String {
        makeToken(header: #"{"alg":"RS256","typ":"JWT"}"#, claims: claims)
    }

    static func jsonObject(_ run: CLIRun) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
    }

    /// An `oauth` item's secret as `fob oauth login` stores it.
    static func oauthSecret(
        access: String, refresh: String? = nil, id: String? = nil, expiresAt: Date,
        tokenEndpoint: String = "http://127.0.0.1:1/token"
    ) -> String {
        var members = [
            #""version":1"#, #""access_token":"\#(access)""#, #""token_type":"Bearer""#,
            #""expires_at":\#(expiresAt.timeIntervalSince1970)"#, #""token_endpoint":"\#(tokenEndpoint)""#,
            #""client_id":"cli""#,
        ]
        if let refresh { members.append(#""refresh_token":"\#(refresh)""#) }
        if let id { members.append(#""id_token":"\#(id)""#) }
        return "{" + members.joined(separator: ",") + "}"
    }

    @Test func jwtFromStandardInputShowsHeaderClaimsAndTimes() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["jwt"], input: Self.issueToken + "\n", plain: true)
        #expect(run.status == 0, "\(run.stderr)")
        let out = run.stdoutText
        #expect(out.contains("\"sub\": \"dev@example.com\""))
        #expect(out.contains("\"alg\": \"HS256\""))
        #expect(out.contains("Issued:"))
        #expect(out.contains("Expires:"))
        #expect(out.contains("(expired "))
        #expect(out.contains("Signature:  not verified (alg HS256)"))
    }

    /// A token is untrusted input: its claims must not drive the terminal.
    @Test func jwtHumanOutputEscapesControlCharacters() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["jwt"], input: Self.token(claims: "{\"sub\":\"a\u{9B}31mb\u{7F}\"}"), plain: true)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText.contains(#""sub": "a\u{9B}31mb\u{7F}""#))
        #expect(!run.stdoutText.unicodeScalars.contains { $0.value == 0x9B || $0.value == 0x7F })
    }

    @Test func jwtJSONHasISODatesAndExpired() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["jwt", "--json"], input: Self.issueToken, plain: true)
        #expect(run.status == 0)
        let object = try Self.jsonObject(run)
        #expect(object["issuedAt"] as? String == "2016-04-05T15:31:14Z")
        #expect(object["expiresAt"] as? String == "2016-04-05T16:01:14Z")
        #expect(object["notBefore"] is NSNull)
        #expect(object["expired"] as? Bool == true)
        #expect((object["claims"] as? [String: Any])?["sub"] as? String == "dev@example.com")
        #expect((object["header"] as? [String: Any])?["typ"] as? String == "JWT")
        #expect(run.stdoutText.hasSuffix("}\n"))
    }

    @Test func jwtJSONKeepsFractionsAndFutureExpiry() throws {
        let h = try CLIHarness(createVault: false)
        let clock = TestClock()
        let exp = Int(clock.now.timeIntervalSince1970) + 240
        let run = h.run(
            ["jwt", "--json"], input: Self.token(claims: #"{"exp":\#(exp).5,"nbf":"1459870274.25"}"#), plain: true,
            clock: clock)
        let object = try Self.jsonObject(run)
        #expect((object["expiresAt"] as? String)?.hasSuffix(".5Z") == true)
        #expect(object["notBefore"] as? String == "2016-04-05T15:31:14.25Z")
        #expect(object["issuedAt"] is NSNull)
        #expect(object["expired"] as? Bool == false)
        let human = h.run(["jwt"], input: Self.token(claims: #"{"exp":\#(exp)}"#), plain: true, clock: clock)
        #expect(human.stdoutText.contains("(expires in 4m)"))
    }

    @Test func jwtReportsATimeClaimThatIsNotANumericDate() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["jwt"], input: Self.token(claims: #"{"sub":"a","exp":"tomorrow"}"#), plain: true)
        #expect(run.status == 1)
        #expect(run.stderrLines == [#"fob: claim "exp" is not a NumericDate (seconds since 1970): "tomorrow""#])
        #expect(run.stdoutText.contains(#"Expires:    invalid: "tomorrow" is not a NumericDate"#))
        let json = h.run(["jwt", "--json"], input: Self.token(claims: #"{"exp":true}"#), plain: true)
        #expect(json.status == 1)
        #expect(try Self.jsonObject(json)["expiresAt"] is NSNull)
    }

    @Test(arguments: [
        ("x.y", "not a JWT: expected 3 dot-separated segments (header.claims.signature), found 2"),
        ("", "not a JWT: no token given"),
    ])
    func jwtRejectsMalformedTokensInOneLine(input: String, message: String) throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["jwt"], input: input, plain: true)
        #expect(run.status == 1)
        #expect(run.stderrLines == ["fob: \(message)"])
        #expect(run.stdout.isEmpty)
    }

    @Test func jwtPayloadThatIsAStringIsAnError() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["jwt"], input: Self.token(claims: #""x""#), plain: true)
        #expect(run.status == 1)
        #expect(run.stderrLines == ["fob: not a JWT: the claims is a string, not a JSON object"])
    }

    @Test func jwtUsageErrors() throws {
        let h = try CLIHarness(createVault: false)
        #expect(h.run(["jwt", "only-service"], input: "", plain: true).status == 2)
        #expect(h.run(["jwt"], stdin: [], stdinIsTerminal: true, plain: true).status == 2)
    }

    @Test func jwtOfStoredTokenAndOAuthItems() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "api", "tok", "--kind", "token"], input: Self.issueToken + "\n").status == 0)
        let stored = h.run(["jwt", "api", "tok", "--json"])
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(try Self.jsonObject(stored)["expiresAt"] as? String == "2016-04-05T16:01:14Z")

        let id = Self.token(claims: #"{"sub":"id-user","exp":1459872074}"#)
        let secret = Self.oauthSecret(access: "opaque-access", id: id, expiresAt: Date().addingTimeInterval(600))
        #expect(h.run(["add", "api", "me", "--kind", "oauth"], input: secret).status == 0)
        let fallback = h.run(["jwt", "api", "me", "--json"])
        #expect(fallback.status == 0)
        #expect(fallback.stderr == "fob: the access token is opaque; decoding the ID token\n")
        #expect((try Self.jsonObject(fallback)["claims"] as? [String: Any])?["sub"] as? String == "id-user")
        #expect(h.run(["jwt", "api", "missing"]).status == 44)
    }

    @Test func pkcePrintsAFreshVerifierAndItsChallenge() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["pkce"], plain: true)
        #expect(run.status == 0)
        let lines = run.stdoutText.split(separator: "\n")
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("verifier:  ") && lines[0].count == 11 + 64)
        #expect(lines[2] == "method:    S256")
        let json = try Self.jsonObject(h.run(["pkce", "--json"], plain: true))
        #expect((json["verifier"] as? String)?.count == 64)
        #expect((json["challenge"] as? String)?.count == 43)
        #expect(json["method"] as? String == "S256")
    }

    @Test func pkceOfAGivenVerifier() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["pkce", "--verifier", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "--json"], plain: true)
        #expect(
            run.stdoutText
                == #"{"challenge":"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM","method":"S256","verifier":"dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"}"#
                + "\n")
        for bad in [
            String(repeating: "a", count: 42), String(repeating: "a", count: 129),
            String(repeating: "a", count: 50) + "+",
            String(repeating: "a", count: 50) + "/", String(repeating: "a", count: 50) + "=",
        ] {
            let refused = h.run(["pkce", "--verifier", bad], plain: true)
            #expect(refused.status == 2)
            #expect(refused.stderrLines.first?.hasPrefix("fob: a PKCE code verifier") == true)
        }
    }

    @Test func oauthTokenPrintsAFreshStoredTokenWithoutNetwork() throws {
        let h = try CLIHarness()
        let secret = Self.oauthSecret(access: "fresh-access", refresh: "rt", expiresAt: Date().addingTimeInterval(600))
        #expect(h.run(["add", "api", "me", "--kind", "oauth"], input: secret).status == 0)
        let run = h.run(["oauth", "token", "api", "me"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdoutText == "fresh-access\n")
    }

    @Test func oauthRefreshFailureLeavesTheItemAndExitsOne() throws {
        let h = try CLIHarness()
        let secret = Self.oauthSecret(access: "old", refresh: "rt", expiresAt: Date().addingTimeInterval(10))
        #expect(h.run(["add", "api", "me", "--kind", "oauth"], input: secret).status == 0)
        let before = try h.secret("api", "me")
        // Nothing listens on port 1: the refresh cannot reach the provider.
        let run = h.run(["oauth", "token", "api", "me"])
        #expect(run.status == 1)
        #expect(run.stderrLines.count == 1)
        #expect(run.stderr.hasPrefix("fob: "))
        #expect(try h.secret("api", "me") == before)
    }

    @Test func oauthErrorsForItemsAndUsage() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "api", "pw"], input: "hunter2").status == 0)
        let notOAuth = h.run(["oauth", "token", "api", "pw"])
        #expect(notOAuth.status == 1)
        #expect(
            notOAuth.stderrLines == [
                #"fob: not a usable oauth item: service "api", account "pw" is a password item, not an oauth item"#
            ])
        #expect(h.run(["oauth", "token", "api", "nobody"]).status == 44)

        let expired = Self.oauthSecret(access: "old", expiresAt: Date().addingTimeInterval(-5))
        #expect(h.run(["add", "api", "old", "--kind", "oauth"], input: expired).status == 0)
        let noRefresh = h.run(["oauth", "token", "api", "old"])
        #expect(noRefresh.status == 1)
        #expect(noRefresh.stderr.contains("log in again"))

        #expect(h.run(["oauth", "fetch", "api", "me"]).status == 2)
        #expect(h.run(["oauth", "token", "api", "me", "--issuer", "https://x"]).status == 2)
        #expect(h.run(["oauth", "login", "api", "me", "--issuer", "https://x"]).status == 2)
        #expect(h.run(["oauth", "login", "api", "me", "--client-id", "c"]).status == 2)
        #expect(
            h.run([
                "oauth", "login", "api", "me", "--client-id", "c", "--issuer", "https://x", "--token-endpoint",
                "https://x/t",
            ]).status == 2)
        #expect(
            h.run(["oauth", "login", "api", "me", "--client-id", "c", "--token-endpoint", "https://x/t"]).status == 2)
        #expect(
            h.run(["oauth", "login", "api", "me", "--client-id", "c", "--issuer", "https://x", "--timeout", "0"]).status
                == 2)
        // A login never replaces an item of another kind.
        let clash = h.run(["oauth", "login", "api", "pw", "--client-id", "c", "--issuer", "https://x"])
        #expect(clash.status == 45)
        // Plain http is refused off loopback, before any browser step.
        let insecure = h.run([
            "oauth", "login", "api", "new", "--client-id", "c",
            "--authorization-endpoint", "http://idp.example.com/a", "--token-endpoint", "https://idp.example.com/t",
        ])
        #expect(insecure.status == 1)
        #expect(insecure.stderr.contains("must use https"))
    }
}

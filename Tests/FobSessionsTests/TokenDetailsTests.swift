import FobSessions
import FobStore
import FobTestSupport
import FobTokens
import Foundation
import Testing

@Suite struct TokenDetailsTests {
    @Test func tokenItemsShowTheJWTExpiry() throws {
        let item = Item(service: "s", account: "a", kind: .token, secret: .text(issueToken))
        let details = try #require(TokenDetails(item: item))
        #expect(details.expiresAt == Date(timeIntervalSince1970: 1_459_872_074))
        #expect(details.jwt?.claims["sub"]?.string == "dev@example.com")
        #expect(!details.canRefresh)
        #expect(details.expiryText(now: Date(timeIntervalSince1970: 1_459_871_834)) == "expires in 4m")
        let opaque = try #require(
            TokenDetails(item: Item(service: "s", account: "a", kind: .token, secret: .text("ghp_opaque"))))
        #expect(opaque.jwt == nil)
        #expect(opaque.expiryText(now: Date()) == "no expiry")
    }

    @Test func oauthItemsShowTheStoredExpiryAndTheIDTokenClaims() throws {
        let id = makeToken(claims: #"{"sub":"ana","exp":1}"#)
        let set = OAuthTokenSet(
            accessToken: "opaque", refreshToken: "rt", idToken: id, expiresAt: Date(timeIntervalSince1970: 5000),
            tokenEndpoint: URL(string: "https://x/t")!, clientID: "c")
        let item = Item(service: "s", account: "a", kind: .oauth, secret: SecretBytes(set.encoded()))
        let details = try #require(TokenDetails(item: item))
        #expect(details.expiresAt == Date(timeIntervalSince1970: 5000))
        #expect(details.jwt?.claims["sub"]?.string == "ana")
        #expect(details.canRefresh)
    }

    /// JSONSerialization hands out JSON `true` as an NSNumber: a boolean
    /// `exp` must not be read as 1 second after 1970.
    @Test func aBooleanExpIsNoExpiry() throws {
        func details(_ claims: String) throws -> TokenDetails {
            try #require(
                TokenDetails(
                    item: Item(service: "s", account: "a", kind: .token, secret: .text(makeToken(claims: claims)))))
        }
        #expect(try details(#"{"exp":true}"#).expiresAt == nil)
        #expect(try details(#"{"exp":true}"#).expiryText(now: Date()) == "no expiry")
        #expect(try details(#"{"exp":1}"#).expiresAt == Date(timeIntervalSince1970: 1))
        #expect(try details(#"{"exp":"1"}"#).expiresAt == Date(timeIntervalSince1970: 1))
    }

    @Test func otherItemsHaveNoDetails() {
        #expect(TokenDetails(item: Item(service: "s", account: "a", kind: .password, secret: .text("x"))) == nil)
        #expect(TokenDetails(item: Item(service: "s", account: "a", kind: .oauth, secret: .text("not json"))) == nil)
        #expect(TokenDetails(item: Item(service: "s", account: "a", kind: .token, secret: nil)) == nil)
    }
}

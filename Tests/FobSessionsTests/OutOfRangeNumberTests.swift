import FobSessions
import FobStore
import FobTestSupport
import FobTokens
import Foundation
import Testing

/// Numbers read from a record are range-checked before any arithmetic: an
/// `oauth` item whose `expires_at` is outside the 64-bit range (or not a
/// date at all) is reported as unreadable, never a trap.
@Suite struct OutOfRangeNumberTests {
    static let outOfRange: [TimeInterval] = [1e19, 1e300, -1e300, 9.3e18, -9.3e18, 253_402_300_800]

    @Test(arguments: outOfRange)
    func storedExpiryOutOfRangeIsAStoredItemError(_ seconds: TimeInterval) throws {
        let item = oauthItem("api", "ana", expiresAt: seconds)
        let bytes = try #require(item.secret).withUnsafeBytes { Array($0) }
        #expect(
            throws: OAuthError.storedItem(
                "its expires_at is not a usable date (a finite number of seconds within about 8,000 years of 1970)")
        ) {
            try OAuthTokenSet.decode(bytes)
        }
        #expect(TokenDetails(item: item) == nil)
        #expect(TokenExpiry.expiry(of: item) == nil)
    }

    @Test func storedExpiryAtTheLimitStillReads() throws {
        let item = oauthItem("api", "ana", expiresAt: NumericDate.maximumSeconds)
        let expiry = try #require(TokenExpiry.expiry(of: item))
        #expect(expiry.timeIntervalSince1970 == NumericDate.maximumSeconds)
        #expect(TokenExpiry.describe(expiry, now: Date(timeIntervalSince1970: 0)) == "expires in 8035y")
    }

    @Test(arguments: [1e19, 1e300, -1e300, .infinity, -.infinity, .nan])
    func durationsOfAnySizeAreText(_ seconds: TimeInterval) {
        #expect(TimeText.duration(seconds) == ">100000y")
        let text = TokenExpiry.describe(Date(timeIntervalSince1970: seconds), now: Date(timeIntervalSince1970: 0))
        #expect(text == "expires in >100000y" || text == "expired >100000y ago")
    }
}

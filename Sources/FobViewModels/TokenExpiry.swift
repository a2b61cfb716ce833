import Foundation
import FobStore
import FobTokens

/// Token expiry for the item list, read with FobTokens' decoders through
/// ``TokenDetails``: the `exp` claim (RFC 7519 §4.1.4) of a `token` item's
/// JWT, or the stored expiry of an `oauth` item. Signatures are not verified.
enum TokenExpiry {
    /// When the token in `item` (fetched with its secret) expires, or `nil`
    /// when it has none or it cannot be read.
    static func expiry(of item: Item) -> Date? {
        TokenDetails(item: item)?.expiresAt
    }

    /// "expires in 4m", "expired 2h 5m ago" (FobTokens' `TimeText`).
    static func describe(_ expiry: Date, now: Date) -> String {
        TimeText.expiry(expiry, now: now)
    }
}

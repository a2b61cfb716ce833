import FobStore
import FobTokens
import FoundationEssentials

/// Token expiry for the item list, read with FobTokens' decoders through
/// ``TokenDetails``: the `exp` claim (RFC 7519 §4.1.4) of a `token` item's
/// JWT, or the stored expiry of an `oauth` item. Signatures are not verified.
public enum TokenExpiry {
    /// When the token in `item` (fetched with its secret) expires, or `nil`
    /// when it has none or it cannot be read.
    public static func expiry(of item: Item) -> Date? {
        TokenDetails(item: item)?.expiresAt
    }

    /// "expires in 4m", "expired 2h 5m ago" (FobTokens' `TimeText`); when
    /// that is longer than ``maximumLength`` characters, only the largest
    /// unit: "expired 10y ago" rather than "expired 10y 239d ago".
    public static func describe(_ expiry: Date, now: Date) -> String {
        let full = TimeText.expiry(expiry, now: now)
        guard full.count > maximumLength else { return full }
        let delta = expiry.timeIntervalSince(now)
        let unit = TimeText.duration(delta).split(separator: " ").first.map(String.init) ?? ""
        return delta > 0 ? "expires in \(unit)" : "expired \(unit) ago"
    }

    /// The longest expiry text kept with two units, in characters.
    public static let maximumLength = 17
}

import FobStore

/// Find by typing: the item list's ranked search.
///
/// The query is split at spaces into terms; every term must match one of an
/// item's fields (service, user ID, label, URL, kind), each compared folded
/// as ``ListingOrder/fold(_:)`` folds them (case and diacritics). A term
/// matches a field as a subsequence of its characters (`ghub` matches
/// `github`); the characters are taken literally, with no pattern syntax.
///
/// Each term ranks by how it matched, best first: a prefix of a field, a
/// run starting at a word start, any other run, a subsequence. An item's
/// rank is the sum over its terms; items of equal rank keep the list's order.
public enum ListSearch {
    /// Separates fields in a ``key(service:account:label:url:kind:)``;
    /// folded text never holds it (it is the NUL byte).
    static let separator: UInt8 = 0

    /// How one term matched a field, best first.
    public enum Tier: Int, Sendable, Comparable {
        /// The field starts with the term.
        case prefix = 0
        /// The term is a run of the field starting at a word's first character.
        case wordStart = 1
        /// The term is a run of the field elsewhere.
        case substring = 2
        /// The term's characters appear in the field in order, with gaps.
        case subsequence = 3

        public static func < (a: Tier, b: Tier) -> Bool { a.rawValue < b.rawValue }
    }

    /// The folded UTF-8 of an item's searchable fields, separated by NUL:
    /// built once per list load, so a keystroke is a byte scan.
    public static func key(service: String, account: String, label: String, url: String, kind: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for (i, field) in [service, account, label, url, kind].enumerated() {
            if i > 0 { bytes.append(separator) }
            bytes += ListingOrder.fold(field).utf8.lazy.filter { $0 != separator }
        }
        return bytes
    }

    /// The query's terms, folded: split at spaces (several in a row count as
    /// one), empty for a blank query.
    public static func terms(_ query: String) -> [[UInt8]] {
        query.split(separator: " ", omittingEmptySubsequences: true).map { Array(ListingOrder.fold(String($0)).utf8) }
            .filter { !$0.isEmpty }
    }

    /// The rank of a key (from ``key(service:account:label:url:kind:)``)
    /// for `terms`: the sum of each term's best ``Tier``, lower is better;
    /// `nil` when a term matches no field.
    public static func rank(_ key: [UInt8], terms: [[UInt8]]) -> Int? {
        var total = 0
        for term in terms {
            guard let tier = bestTier(of: term, in: key) else { return nil }
            total += tier.rawValue
        }
        return total
    }

    /// The indices of `keys` matching every term, best rank first, equal
    /// ranks in their order in `keys`.
    public static func matches(_ keys: [[UInt8]], terms: [[UInt8]]) -> [Int] {
        var ranked: [(index: Int, rank: Int)] = []
        for (index, key) in keys.enumerated() {
            if let rank = rank(key, terms: terms) { ranked.append((index, rank)) }
        }
        // Counting sort by rank: ranks are small and the order within one is kept.
        let maxRank = ranked.map(\.rank).max() ?? 0
        var buckets = [[Int]](repeating: [], count: maxRank + 1)
        for entry in ranked { buckets[entry.rank].append(entry.index) }
        return buckets.flatMap { $0 }
    }

    /// The best way `term` matches one field of `key`, or `nil`.
    static func bestTier(of term: [UInt8], in key: [UInt8]) -> Tier? {
        key.withUnsafeBufferPointer { hay in
            term.withUnsafeBufferPointer { needle in
                var best: Tier?
                var start = 0
                while start <= hay.count {
                    var end = start
                    while end < hay.count, hay[end] != separator { end += 1 }
                    if let tier = tier(needle, hay, start, end), best.map({ tier < $0 }) ?? true {
                        best = tier
                        if tier == .prefix { return best }
                    }
                    start = end + 1
                }
                return best
            }
        }
    }

    /// How `needle` matches `hay[start..<end]`, or `nil`.
    private static func tier(
        _ needle: UnsafeBufferPointer<UInt8>, _ hay: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
    ) -> Tier? {
        let n = needle.count
        guard n > 0, end - start >= n else { return nil }
        // Cheap rejection first: the term must be a subsequence at all.
        var j = 0
        var i = start
        while i < end, j < n {
            if hay[i] == needle[j] { j += 1 }
            i += 1
        }
        guard j == n else { return nil }
        var best = Tier.subsequence
        var at = start
        while at + n <= end {
            if hay[at] == needle[0] {
                var k = 1
                while k < n, hay[at + k] == needle[k] { k += 1 }
                if k == n {
                    if at == start { return .prefix }
                    if !isWordCharacter(hay[at - 1]) || !isWordCharacter(hay[at]) {
                        best = .wordStart
                    } else if best == .subsequence {
                        best = .substring
                    }
                }
            }
            at += 1
        }
        return best
    }

    /// Letters, digits and any byte of a non-ASCII character.
    private static func isWordCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
            || byte >= 0x80
    }
}

/// How wide the list's columns need to be for every item (not only those
/// the filter shows), so no column appears, vanishes or jumps as you type.
public struct ListColumnNeeds: Sendable, Equatable {
    /// The longest service and account, in characters.
    public var service = 0, account = 0
    /// The longest kind name, in characters.
    public var kind = 0
    /// Whether some item has an expiry (the expiry column shows).
    public var hasExpiry = false
    /// Whether some item has a one-time seed (the 2FA column shows).
    public var hasOneTimeCode = false

    /// The needs of `rows`.
    init(_ rows: [ItemRow]) {
        for row in rows {
            service = max(service, row.service.count)
            account = max(account, row.account.count)
            kind = max(kind, row.kind.rawValue.count)
            hasExpiry = hasExpiry || row.expires != nil
            hasOneTimeCode = hasOneTimeCode || row.hasOneTimeCode
        }
    }

    init() {}
}

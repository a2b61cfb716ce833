import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// Find by typing: the item list's ranked search.
///
/// The query is split at spaces into terms; every term must match one of an
/// item's fields (service, user ID, label, URL, kind), each compared folded
/// as ``ListingOrder/fold(_:)`` folds them (case and diacritics). A term
/// matches a field as a subsequence of its characters (`ghub` matches
/// `github`); the characters are taken literally, with no pattern syntax.
///
/// Each term ranks by how it matched, best first: a prefix of a field, a
/// run starting at a word start, any other run, a subsequence; within one
/// of those, a match that starts earlier in its field ranks higher (`ghub`
/// puts `github.com` before `api.github.com`). An item's rank is the sum
/// over its terms; items of equal rank keep the list's order.
public enum ListSearch {
    /// Separates fields in a ``key(service:account:label:url:kind:)``;
    /// folded text never holds it (it is the NUL byte).
    static let separator: UInt8 = 0

    /// How one term matched a field, best first.
    public enum Tier: Int, Sendable, Comparable {
        /// The field starts with the term.
        case prefix
        /// The term is a run of the field starting at a word's first character.
        case wordStart
        /// The term is a run of the field elsewhere.
        case substring
        /// The term's characters appear in the field in order, with gaps.
        case subsequence

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

    /// How many places into its field a match's start counts, at most:
    /// a term's score is its ``Tier`` times this, plus that offset.
    static let offsetSteps = 16

    /// The rank of a key (from ``key(service:account:label:url:kind:)``)
    /// for `terms`: the sum of each term's best score (its ``Tier`` times
    /// ``offsetSteps``, plus where in its field the match starts, up to
    /// ``offsetSteps`` − 1), lower is better: 0 when every term is a prefix;
    /// `nil` when a term matches no field.
    public static func rank(_ key: [UInt8], terms: [[UInt8]]) -> Int? {
        ranked(Index([key]), terms: terms, among: nil).ranks.first
    }

    /// The indices of `keys` matching every term, best rank first, equal
    /// ranks in their order in `keys`.
    public static func matches(_ keys: [[UInt8]], terms: [[UInt8]]) -> [Int] {
        ranked(Index(keys), terms: terms, among: nil).ranked
    }

    /// Every item's key in one buffer, so a search walks memory without a
    /// reference count per item: key `i` is `bytes[starts[i]..<starts[i + 1]]`.
    struct Index {
        /// The keys, one after another.
        let bytes: [UInt8]
        /// Where each key starts, and the end of the last.
        let starts: [Int]
        /// How many keys.
        var count: Int { starts.count - 1 }

        /// The index of `keys`.
        init(_ keys: [[UInt8]]) {
            var bytes: [UInt8] = []
            var starts: [Int] = [0]
            bytes.reserveCapacity(keys.reduce(0) { $0 + $1.count })
            starts.reserveCapacity(keys.count + 1)
            for key in keys {
                bytes += key
                starts.append(bytes.count)
            }
            self.bytes = bytes
            self.starts = starts
        }
    }

    /// The keys of `index` (of `candidates` only, when given, in ascending
    /// order) matching every term: in key order, best rank first, and the
    /// rank of each in key order.
    static func ranked(_ index: Index, terms: [[UInt8]], among candidates: [Int]?) -> (
        inOrder: [Int], ranked: [Int], ranks: [Int]
    ) {
        var inOrder: [Int] = []
        var ranks: [Int] = []
        inOrder.reserveCapacity(candidates?.count ?? index.count)
        ranks.reserveCapacity(candidates?.count ?? index.count)
        // The terms in one buffer too, each with its range.
        let flat = terms.flatMap { $0 }
        var ranges: [Range<Int>] = []
        var at = 0
        for term in terms {
            ranges.append(at..<(at + term.count))
            at += term.count
        }
        index.bytes.withUnsafeBufferPointer { hay in
            flat.withUnsafeBufferPointer { all in
                let needles = ranges.map { UnsafeBufferPointer(rebasing: all[$0]) }
                func consider(_ i: Int) {
                    let start = index.starts[i]
                    let end = index.starts[i + 1]
                    var total = 0
                    for needle in needles {
                        guard let score = bestScore(needle, hay, start, end) else { return }
                        total += score
                    }
                    inOrder.append(i)
                    ranks.append(total)
                }
                if let candidates {
                    for i in candidates { consider(i) }
                } else {
                    for i in 0..<index.count { consider(i) }
                }
            }
        }
        // Counting sort by rank: ranks are small and the order within one is kept.
        let maxRank = ranks.max() ?? 0
        var counts = [Int](repeating: 0, count: maxRank + 2)
        for rank in ranks { counts[rank + 1] += 1 }
        for r in 0...maxRank { counts[r + 1] += counts[r] }
        var sorted = [Int](repeating: 0, count: inOrder.count)
        for (i, rank) in zip(inOrder, ranks) {
            sorted[counts[rank]] = i
            counts[rank] += 1
        }
        return (inOrder, sorted, ranks)
    }

    /// Where `byte` first occurs in `hay[from..<to]` (`memchr`, which
    /// glibc vectorises), or `nil`.
    @inline(__always)
    private static func find(_ byte: UInt8, _ hay: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int) -> Int? {
        guard from < to, let base = hay.baseAddress, let found = memchr(base + from, Int32(byte), to - from) else {
            return nil
        }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    /// Whether `needle` is a subsequence of `hay[from..<to]`.
    @inline(__always)
    private static func isSubsequence(
        _ needle: UnsafeBufferPointer<UInt8>, _ hay: UnsafeBufferPointer<UInt8>, _ from: Int, _ to: Int
    )
        -> Bool
    {
        var at = from
        for byte in needle {
            guard let found = find(byte, hay, at, to) else { return false }
            at = found + 1
        }
        return true
    }

    /// Whether `hay[at...]` starts with `needle` (room for it checked by the caller).
    @inline(__always)
    private static func matches(_ needle: UnsafeBufferPointer<UInt8>, _ hay: UnsafeBufferPointer<UInt8>, at: Int)
        -> Bool
    {
        var k = 0
        while k < needle.count, hay[at + k] == needle[k] { k += 1 }
        return k == needle.count
    }

    /// The best score of `needle` over the fields of the key
    /// `hay[keyStart..<keyEnd]` (see ``rank(_:terms:)``), or `nil`.
    private static func bestScore(
        _ needle: UnsafeBufferPointer<UInt8>, _ hay: UnsafeBufferPointer<UInt8>, _ keyStart: Int, _ keyEnd: Int
    ) -> Int? {
        let n = needle.count
        // Cheap rejection: the term must be a subsequence of the whole key.
        guard isSubsequence(needle, hay, keyStart, keyEnd) else { return nil }
        var best: Int?
        var start = keyStart
        while start <= keyEnd {
            let end = find(separator, hay, start, keyEnd) ?? keyEnd
            if let known = best, known < offsetSteps * Tier.substring.rawValue {
                // Once a word start matched, only a prefix can do better.
                if end - start >= n, matches(needle, hay, at: start) { return 0 }
            } else if let score = score(needle, hay, start, end), best.map({ score < $0 }) ?? true {
                if score == 0 { return 0 }
                best = score
            }
            start = end + 1
        }
        return best
    }

    /// How `needle` matches `hay[start..<end]` as a score, or `nil`: the
    /// cheapest checks first (prefix, then runs), the subsequence last.
    private static func score(
        _ needle: UnsafeBufferPointer<UInt8>, _ hay: UnsafeBufferPointer<UInt8>, _ start: Int, _ end: Int
    ) -> Int? {
        let n = needle.count
        guard n > 0, end - start >= n else { return nil }
        if matches(needle, hay, at: start) { return 0 }
        func scored(_ tier: Tier, at: Int) -> Int { tier.rawValue * offsetSteps + min(at - start, offsetSteps - 1) }
        var firstRun: Int?
        var at = start + 1
        while let candidate = find(needle[0], hay, at, end - n + 1) {
            if matches(needle, hay, at: candidate) {
                if !isWordCharacter(hay[candidate - 1]) || !isWordCharacter(hay[candidate]) {
                    return scored(.wordStart, at: candidate)
                }
                if firstRun == nil { firstRun = candidate }
            }
            at = candidate + 1
        }
        if let firstRun { return scored(.substring, at: firstRun) }
        guard let first = find(needle[0], hay, start, end), isSubsequence(needle, hay, first, end) else { return nil }
        return scored(.subsequence, at: first)
    }

    /// Whether every key matching `new` also matches `old`: each term of
    /// `old` is a subsequence of some term of `new` (a field holding the
    /// longer term holds the shorter one too), and `new` may add terms.
    /// Then a keystroke searches only the previous matches: typing at the
    /// end of a term, and also at its start or in its middle (`serv` to
    /// `xserv`), which once looked at every item again.
    public static func narrows(_ old: [[UInt8]], to new: [[UInt8]]) -> Bool {
        guard !old.isEmpty, !new.isEmpty else { return false }
        return old.allSatisfy { o in new.contains { n in isSubsequence(o, of: n) } }
    }

    /// Whether `needle`'s bytes appear in `hay` in order.
    private static func isSubsequence(_ needle: [UInt8], of hay: [UInt8]) -> Bool {
        guard needle.count <= hay.count else { return false }
        var i = 0
        for byte in hay where i < needle.count && byte == needle[i] { i += 1 }
        return i == needle.count
    }

    /// Letters, digits and any byte of a non-ASCII character.
    private static func isWordCharacter(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
            || byte >= 0x80
    }
}

/// The rows the filter shows, as a view of the list's rows by index, so a
/// keystroke over 100,000 items copies no row.
public struct ShownRows: RandomAccessCollection, Sendable {
    /// Every row, in listing order.
    let all: [ItemRow]
    /// The shown rows' indices in ``all``, best match first; `nil` for every row in order.
    let order: [Int]?

    /// 0.
    public var startIndex: Int { 0 }
    /// The number of rows shown.
    public var endIndex: Int { order?.count ?? all.count }
    /// The row shown at `position`.
    public subscript(position: Int) -> ItemRow {
        if let order { return all[order[position]] }
        return all[position]
    }
}

/// How wide the list's columns need to be for every item (not only those
/// the filter shows), so no column appears, vanishes or jumps as you type.
public struct ListColumnNeeds: Sendable, Equatable {
    /// The longest service and account, in characters.
    public var service = 0, account = 0
    /// The longest kind name, in characters.
    public var kind = 0
    /// The longest label, in characters (0 when no item has one).
    public var label = 0
    /// How many items have a service of each length, in characters
    /// (index 0 to ``lengthLimit``, longer ones counted at the last).
    public var serviceLengths = [Int](repeating: 0, count: ListColumnNeeds.lengthLimit + 1)
    /// How many items have an account of each length, counted as ``serviceLengths``.
    public var accountLengths = [Int](repeating: 0, count: ListColumnNeeds.lengthLimit + 1)
    /// The longest length ``serviceLengths`` and ``accountLengths`` tell apart.
    public static let lengthLimit = 64
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
            label = max(label, row.label.count)
            serviceLengths[min(row.service.count, Self.lengthLimit)] += 1
            accountLengths[min(row.account.count, Self.lengthLimit)] += 1
            hasExpiry = hasExpiry || row.expires != nil
            hasOneTimeCode = hasOneTimeCode || row.hasOneTimeCode
        }
    }

    init() {}

    /// The service column's width for `room` cells of names (service, a
    /// space, account) that cuts the fewest names, then the fewest cells of
    /// them, then the narrowest (the accounts get the rest): every row
    /// aligned on it, the rare long name cut.
    public func serviceColumn(room: Int) -> Int {
        guard room > 2 else { return max(1, room) }
        // The names longer than `width`, and the cells they lose.
        func loss(_ counts: [Int], _ width: Int) -> (names: Int, cells: Int) {
            var names = 0
            var cells = 0
            for length in stride(from: counts.count - 1, to: max(width, 0), by: -1) where counts[length] > 0 {
                names += counts[length]
                cells += counts[length] * (length - width)
            }
            return (names, cells)
        }
        var best = (width: 1, names: Int.max, cells: Int.max)
        for width in 1...(room - 2) {
            let service = loss(serviceLengths, width)
            let account = loss(accountLengths, room - 1 - width)
            let names = service.names + account.names
            let cells = service.cells + account.cells
            if (names, cells) < (best.names, best.cells) { best = (width, names, cells) }
        }
        return best.width
    }
}

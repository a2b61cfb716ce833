/// The order people read a list of items in: by service, then account, each
/// compared without regard to case or diacritics (`Bank` beside `bank`,
/// `café` beside `cafe`), the exact UTF-8 bytes, then the access group,
/// breaking ties so the order is total. The terminal UI's list and
/// `fob ls` both show items in it. (The vault's own order, which
/// `SecItemCopyMatching` returns, is by bytes.)
public enum ListingOrder {
    /// `text` folded for sorting and searching: lower case, without
    /// diacritics: what Foundation's case- and diacritic-insensitive
    /// folding makes of it, by the table scripts/generate-folding writes
    /// (FoldingTable.swift).
    public static func fold(_ text: String) -> String {
        // ASCII has no diacritics: lower case is the whole fold, and far cheaper.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        let table = FoldTables.shared
        var out = String.UnicodeScalarView()
        var first = true
        for scalar in text.unicodeScalars {
            defer { first = false }
            if scalar.value < 0x80 {
                out.append(scalar.value >= 0x41 && scalar.value <= 0x5A ? Unicode.Scalar(scalar.value + 0x20)! : scalar)
            } else if let folded = table.folds[scalar.value] {
                out.append(contentsOf: folded)
            } else if first || !table.isDropped(scalar.value) {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// `elements` in listing order, each folded once.
    /// - Parameter key: an element's service, account and access group.
    public static func sorted<T>(_ elements: [T], key: (T) -> (service: String, account: String, accessGroup: String))
        -> [T]
    {
        ordered(elements, key: key).map(\.element)
    }

    /// `elements` in listing order with their folded service and account,
    /// for a caller that also searches them (the terminal UI's filter).
    /// - Parameter key: an element's service, account and access group.
    public static func ordered<T>(_ elements: [T], key: (T) -> (service: String, account: String, accessGroup: String))
        -> [(element: T, service: String, account: String)]
    {
        let keyed = elements.map { element in
            let k = key(element)
            return (element: element, service: fold(k.service), account: fold(k.account), raw: k)
        }
        // Folded texts compare by their UTF-8 bytes: the order of their
        // scalars, and far cheaper than String's canonical comparison.
        return keyed.sorted { a, b in
            if a.service != b.service { return a.service.utf8.lexicographicallyPrecedes(b.service.utf8) }
            if a.account != b.account { return a.account.utf8.lexicographicallyPrecedes(b.account.utf8) }
            let rawA = [a.raw.service, a.raw.account, a.raw.accessGroup]
            let rawB = [b.raw.service, b.raw.account, b.raw.accessGroup]
            return rawA.lexicographicallyPrecedes(rawB) { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }.map { ($0.element, $0.service, $0.account) }
    }
}

/// ``ListingOrder/foldTable`` and ``ListingOrder/foldDropped``, parsed
/// once, at the first fold of a text beyond ASCII.
private struct FoldTables: Sendable {
    static let shared = FoldTables()

    /// Each scalar's fold, where it is not the scalar itself.
    let folds: [UInt32: [Unicode.Scalar]]
    /// Sorted, disjoint ranges of the scalars dropped after another.
    let dropped: [ClosedRange<UInt32>]

    private init() {
        var folds: [UInt32: [Unicode.Scalar]] = [:]
        for line in ListingOrder.foldTable.split(separator: "\n") {
            let values = line.split(separator: " ").compactMap { UInt32($0, radix: 16) }
            guard let key = values.first else { continue }
            folds[key] = values.dropFirst().compactMap(Unicode.Scalar.init)
        }
        self.folds = folds
        dropped = ListingOrder.foldDropped.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { range in
            let ends = range.split(separator: "-").compactMap { UInt32($0, radix: 16) }
            guard let low = ends.first, let high = ends.last else { return nil }
            return low...high
        }
    }

    /// Whether `value` is in ``dropped`` (a binary search).
    func isDropped(_ value: UInt32) -> Bool {
        var low = 0
        var high = dropped.count
        while low < high {
            let middle = (low + high) / 2
            if dropped[middle].upperBound < value {
                low = middle + 1
            } else if dropped[middle].lowerBound > value {
                high = middle
            } else {
                return true
            }
        }
        return false
    }
}

import Foundation

/// The order people read a list of items in: by service, then account, each
/// compared without regard to case or diacritics (`Bank` beside `bank`,
/// `café` beside `cafe`), the exact UTF-8 bytes, then the access group,
/// breaking ties so the order is total. The terminal UI's list and
/// `fob ls` both show items in it. (The vault's own order, which
/// `SecItemCopyMatching` returns, is by bytes.)
public enum ListingOrder {
    /// `text` folded for sorting and searching: lower case, without
    /// diacritics (Foundation's case- and diacritic-insensitive folding).
    public static func fold(_ text: String) -> String {
        // ASCII has no diacritics: lower case is the whole fold, and far cheaper.
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return text.lowercased() }
        return text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
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

import FoundationEssentials

/// One item that a vault write transaction added, changed or deleted
/// (``Vault/lastWrite``), as stored after the write (before it, for a
/// deletion), without its secret.
public enum ItemWrite: Sendable, Equatable {
    /// A new item, at revision 1 (or the revision an import gave it).
    case added(Item)
    /// A stored item rewritten: `old` as it was, `new` as it is now; their
    /// primary keys differ when the write renamed it (`fob mv`), and their
    /// ``Item/persistentID`` is the same.
    case changed(old: Item, new: Item)
    /// A stored item removed, as it was.
    case deleted(Item)

    /// The item after the write (before it, for a deletion).
    public var item: Item {
        switch self {
        case .added(let item), .deleted(let item), .changed(_, let item): return item
        }
    }

    /// The same write as a read would return its items: without the secret
    /// (the one-time seed and custom field values stay), and with dates as
    /// the record stores them (seconds since 1970 as a `Double`).
    var withoutSecrets: ItemWrite {
        func strip(_ item: Item) -> Item {
            var copy = item
            copy.secret = nil
            copy.created = Date(timeIntervalSince1970: item.created.timeIntervalSince1970)
            copy.modified = Date(timeIntervalSince1970: item.modified.timeIntervalSince1970)
            return copy
        }
        switch self {
        case .added(let item): return .added(strip(item))
        case .changed(let old, let new): return .changed(old: strip(old), new: strip(new))
        case .deleted(let item): return .deleted(strip(item))
        }
    }
}

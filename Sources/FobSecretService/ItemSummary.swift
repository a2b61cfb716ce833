import FobStore
import FoundationEssentials

/// What the provider knows of one vault item between requests: its primary
/// key, revision, label, attributes (sorted by name), dates and content
/// type — never its secret or other fields. Kept packed in an
/// ``ItemCatalog``, and rebuilt from it when a property is read.
struct ItemSummary {
    /// What is not text: kept as it is in the catalog's fixed entry.
    let stamp: ItemStamp
    let service: String
    let account: String
    let accessGroup: String
    /// The item's label, else its display name.
    let label: String
    /// The attributes a client sees (``ItemMapping/attributes(of:)``), sorted by name.
    let attributes: [(key: String, value: String)]
    /// `nil` for `text/plain`.
    let contentType: String?

    var persistentID: UUID { stamp.persistentID }
    var revision: UInt64 { stamp.revision }
    var created: UInt64 { stamp.created }
    var modified: UInt64 { stamp.modified }
    var synchronizable: Bool { stamp.synchronizable }

    /// An item with only this one's primary key, persistent ID and revision:
    /// what an exact lookup, an update or a delete needs.
    var key: Item {
        var item = Item(service: service, account: account, persistentID: persistentID, secret: nil)
        item.accessGroup = accessGroup
        item.synchronizable = synchronizable
        item.revision = revision
        return item
    }

    /// The attributes as a dictionary.
    var attributeDictionary: [String: String] {
        Dictionary(attributes.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }
}

extension ItemSummary {
    /// The summary of `item`.
    init(_ item: Item) {
        stamp = ItemStamp(
            persistentID: item.persistentID, revision: item.revision,
            created: UInt64(max(0, item.created.timeIntervalSince1970)),
            modified: UInt64(max(0, item.modified.timeIntervalSince1970)), synchronizable: item.synchronizable)
        service = item.service
        account = item.account
        accessGroup = item.accessGroup
        label = item.label ?? item.displayName
        attributes = ItemMapping.attributes(of: item).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let type = ItemMapping.contentType(of: item)
        contentType = type == "text/plain" ? nil : type
    }
}

/// The fixed-size part of an item's summary: its persistent ID, revision,
/// created and modified dates (seconds since 1970) and
/// `kSecAttrSynchronizable`.
struct ItemStamp {
    let persistentID: UUID
    let revision: UInt64
    let created: UInt64
    let modified: UInt64
    let synchronizable: Bool
}

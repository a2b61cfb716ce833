import FobStore
import FoundationEssentials

/// What the provider knows of one vault item between requests: its primary
/// key, revision, label, attributes (sorted by name), dates and content
/// type — never its secret or other fields. Kept packed in an
/// ``ItemCatalog``, and rebuilt from it when a property is read.
struct ItemSummary {
    let persistentID: UUID
    let service: String
    let account: String
    let accessGroup: String
    let synchronizable: Bool
    let revision: UInt64
    /// The item's label, else its display name.
    let label: String
    /// The attributes a client sees (``ItemMapping/attributes(of:)``), sorted by name.
    let attributes: [(key: String, value: String)]
    /// Seconds since 1970.
    let created: UInt64
    /// Seconds since 1970.
    let modified: UInt64
    /// `nil` for `text/plain`.
    let contentType: String?

    /// - Parameters: as the properties.
    init(
        persistentID: UUID, service: String, account: String, accessGroup: String, synchronizable: Bool,
        revision: UInt64, label: String, attributes: [(key: String, value: String)], created: UInt64,
        modified: UInt64, contentType: String?
    ) {
        self.persistentID = persistentID
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
        self.revision = revision
        self.label = label
        self.attributes = attributes
        self.created = created
        self.modified = modified
        self.contentType = contentType
    }

    /// The summary of `item`.
    init(_ item: Item) {
        persistentID = item.persistentID
        service = item.service
        account = item.account
        accessGroup = item.accessGroup
        synchronizable = item.synchronizable
        revision = item.revision
        label = item.label ?? item.displayName
        attributes = ItemMapping.attributes(of: item).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        created = UInt64(max(0, item.created.timeIntervalSince1970))
        modified = UInt64(max(0, item.modified.timeIntervalSince1970))
        let type = ItemMapping.contentType(of: item)
        contentType = type == "text/plain" ? nil : type
    }

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

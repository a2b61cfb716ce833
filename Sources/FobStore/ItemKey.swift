/// The primary key of an item: class, access group, service and account.
public struct ItemKey: Hashable, Sendable {
    /// The item class (`kSecClass`).
    public var itemClass: ItemClass
    /// The access group (`kSecAttrAccessGroup`); empty by default.
    public var accessGroup: String
    /// The service (`kSecAttrService`).
    public var service: String
    /// The account (`kSecAttrAccount`), shown as "User ID" in the form.
    public var account: String

    /// Creates a key (generic password, empty access group unless given).
    public init(itemClass: ItemClass = .genericPassword, accessGroup: String = "", service: String, account: String) {
        self.itemClass = itemClass
        self.accessGroup = accessGroup
        self.service = service
        self.account = account
    }

    /// The key of `item`.
    public init(_ item: Item) {
        self.init(
            itemClass: item.itemClass, accessGroup: item.accessGroup, service: item.service, account: item.account)
    }

    /// The store query for exactly this item.
    public var query: ItemQuery {
        ItemQuery(itemClass: itemClass, service: service, account: account, accessGroup: accessGroup)
    }
}

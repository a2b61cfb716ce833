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

/// What an internet password's primary key adds to class, access group,
/// service and account (Apple's `kSecClassInternetPassword`): protocol,
/// authentication type, port, path and security domain, each empty (0 for
/// the port) when not set.
public struct InternetKeyParts: Hashable, Sendable {
    /// `kSecAttrProtocol`, a four-character code such as `"htps"`.
    public var internetProtocol = ""
    /// `kSecAttrAuthenticationType`, a four-character code such as `"dflt"`.
    public var authenticationType = ""
    /// `kSecAttrPort`, 0 to ``Item/maxPort``.
    public var port = 0
    /// `kSecAttrPath`.
    public var path = ""
    /// `kSecAttrSecurityDomain`.
    public var securityDomain = ""
}

extension Item {
    /// The item's ``InternetKeyParts``; setting it sets all five attributes.
    public var internetKeyParts: InternetKeyParts {
        get {
            InternetKeyParts(
                internetProtocol: internetProtocol, authenticationType: authenticationType, port: port, path: path,
                securityDomain: securityDomain)
        }
        set {
            (internetProtocol, authenticationType, port, path) = (
                newValue.internetProtocol, newValue.authenticationType, newValue.port, newValue.path
            )
            securityDomain = newValue.securityDomain
        }
    }
}

extension ItemQuery {
    /// Narrows the query to items whose five ``InternetKeyParts`` are exactly `parts`.
    public mutating func match(_ parts: InternetKeyParts) {
        (internetProtocol, authenticationType, port, path) = (
            parts.internetProtocol, parts.authenticationType, parts.port, parts.path
        )
        securityDomain = parts.securityDomain
    }
}

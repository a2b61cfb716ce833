import FoundationEssentials

/// Attributes to change in ``Vault/update(matching:with:)``; `nil` leaves a value as it is,
/// and for optional attributes `.some(nil)` removes the value.
///
/// ``Vault/save(service:account:accessGroup:itemClass:secret:attributes:)``
/// ignores the service, account and access group given here; any other
/// primary-key attribute (``synchronizable``, the internet-password ones)
/// moves the saved item to that key.
public struct ItemChanges: Sendable {
    /// A new service (changes the primary key).
    public var service: String?
    /// A new account (changes the primary key).
    public var account: String?
    /// A new access group (changes the primary key).
    public var accessGroup: String?
    /// `.some(nil)` removes the label.
    public var label: String??
    /// `.some(nil)` removes the comment (the notes).
    public var comment: String??
    /// A new kind.
    public var kind: ItemKind?
    /// A new accessibility class.
    public var accessible: Accessibility?
    /// `.some(nil)` removes the generic bytes.
    public var generic: [UInt8]??
    /// A new secret, up to 1 MiB.
    public var secret: SecretBytes?
    /// `.some(nil)` removes the URL.
    public var url: String??
    /// A new one-time-password seed (`otpauth://` URI); `.some(nil)` removes it.
    public var oneTimePassword: SecretBytes??
    /// Replaces every custom field (`[]` removes them all).
    public var customFields: [CustomField]?
    /// A new `kSecAttrSynchronizable` (changes the primary key).
    public var synchronizable: Bool?
    /// A new `kSecAttrProtocol`, `""` for none (changes an internet password's primary key).
    public var internetProtocol: String?
    /// A new `kSecAttrAuthenticationType`, `""` for none (changes an internet password's primary key).
    public var authenticationType: String?
    /// A new `kSecAttrPort`, 0 for none (changes an internet password's primary key).
    public var port: Int?
    /// A new `kSecAttrPath`, `""` for none (changes an internet password's primary key).
    public var path: String?
    /// A new `kSecAttrSecurityDomain`, `""` for none (changes an internet password's primary key).
    public var securityDomain: String?
    /// `.some(nil)` removes `kSecAttrDescription`.
    public var itemDescription: String??
    /// `.some(nil)` removes `kSecAttrType`.
    public var itemType: UInt32??
    /// `.some(nil)` removes `kSecAttrCreator`.
    public var creator: UInt32??
    /// A new `kSecAttrIsInvisible`.
    public var isInvisible: Bool?
    /// A new `kSecAttrIsNegative`.
    public var isNegative: Bool?
    /// New access-control flags; `.some(nil)` removes the access control.
    public var accessControlFlags: UInt64??
    /// A conditional write: the ``Item/revision`` the item must still have
    /// (the one the writer read), else nothing changes and the write fails
    /// with ``KeychainError/revisionMismatch(_:expected:current:)``; `nil`
    /// writes whatever the revision. For an update every matching item must
    /// have it. For a save, 0 means "only when no such item exists yet"; any
    /// other value needs the item to exist (`.itemNotFound` otherwise).
    /// Not an attribute: ``apply(to:now:)`` ignores it.
    public var expectedRevision: UInt64?
    /// A new `…ThisDeviceOnly` variant; `.some(nil)` makes the accessibility plain.
    public var deviceBinding: DeviceBinding??
    /// A new access rule (``AccessRule``); `AccessRule()` returns the item to the vault's default.
    public var accessRule: AccessRule?

    /// Changes the notes: another name for ``comment``.
    public var notes: String?? {
        get { comment }
        set { comment = newValue }
    }

    /// Changes; every attribute left `nil` stays as it is.
    public init(
        service: String? = nil, account: String? = nil, accessGroup: String? = nil,
        label: String?? = nil, comment: String?? = nil, kind: ItemKind? = nil,
        accessible: Accessibility? = nil, generic: [UInt8]?? = nil,
        url: String?? = nil, oneTimePassword: SecretBytes?? = nil, customFields: [CustomField]? = nil,
        secret: SecretBytes? = nil
    ) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.comment = comment
        self.kind = kind
        self.accessible = accessible
        self.generic = generic
        self.url = url
        self.oneTimePassword = oneTimePassword
        self.customFields = customFields
        self.secret = secret
    }

    /// Sets the changed attributes on `item` and stamps `modified`.
    /// - Parameter now: the new modification date.
    public func apply(to item: inout Item, now: Date) {
        if let service { item.service = service }
        if let account { item.account = account }
        if let accessGroup { item.accessGroup = accessGroup }
        if let label { item.label = label }
        if let comment { item.comment = comment }
        if let kind { item.kind = kind }
        if let accessible { item.accessible = accessible }
        if let generic { item.generic = generic }
        if let secret { item.secret = secret }
        if let url { item.url = url }
        if let oneTimePassword { item.oneTimePassword = oneTimePassword }
        if let customFields { item.customFields = customFields }
        if let synchronizable { item.synchronizable = synchronizable }
        if let internetProtocol { item.internetProtocol = internetProtocol }
        if let authenticationType { item.authenticationType = authenticationType }
        if let port { item.port = port }
        if let path { item.path = path }
        if let securityDomain { item.securityDomain = securityDomain }
        if let itemDescription { item.itemDescription = itemDescription }
        if let itemType { item.itemType = itemType }
        if let creator { item.creator = creator }
        if let isInvisible { item.isInvisible = isInvisible }
        if let isNegative { item.isNegative = isNegative }
        if let accessControlFlags { item.accessControlFlags = accessControlFlags }
        if let deviceBinding { item.deviceBinding = deviceBinding }
        if let accessRule { item.accessRule = accessRule }
        item.modified = now
    }
}

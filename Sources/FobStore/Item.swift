import FoundationEssentials

/// The Keychain item class: Fob stores generic and internet passwords.
public enum ItemClass: String, Sendable, CaseIterable, Codable {
    /// `kSecClassGenericPassword`.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword`: the server is stored as the service; the
    /// primary key adds protocol, port, path, authentication type and security domain.
    case internetPassword = "inet"
}

/// What an item's secret is; `token` and `oauth` items are wiped by logout.
/// An `ssh-key` item's secret is an SSH private key, which the SSH agent
/// signs with and never hands out (see `fob ssh`).
public enum ItemKind: String, Sendable, CaseIterable, Codable {
    case password, token, oauth, note
    case sshKey = "ssh-key"

    /// Whether a logout wipe deletes items of this kind.
    public var isSessionToken: Bool { self == .token || self == .oauth }
}

/// When an item may be read (`kSecAttrAccessible…`). Never part of the primary key.
public enum Accessibility: String, Sendable, CaseIterable, Codable {
    /// `kSecAttrAccessibleWhenUnlocked` (default).
    case whenUnlocked
    /// `kSecAttrAccessibleAfterFirstUnlock`.
    case afterFirstUnlock
}

/// The `…ThisDeviceOnly` part of a `kSecAttrAccessible` value, kept so that
/// the value given comes back as given. A vault never leaves the machine
/// and always has a master password, so it changes nothing else: the class
/// (``Accessibility``) decides when the item can be read.
public enum DeviceBinding: String, Sendable, CaseIterable, Codable {
    /// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly` or
    /// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`, by the class.
    case thisDeviceOnly
    /// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` (class `whenUnlocked`).
    case whenPasscodeSetThisDeviceOnly
}

/// A stored item's attributes and, when asked for, its secret.
///
/// Everything here lives inside the item's encrypted record. Besides the
/// Keychain's attributes an item holds Fob's own: a ``url``, ``notes`` (the
/// Keychain's `comment`), a one-time-password seed and ``customFields``.
///
/// The primary key is (class, access group, service, account,
/// ``synchronizable``) for generic passwords; internet passwords add
/// ``securityDomain``, ``internetProtocol``, ``authenticationType``, ``port``
/// and ``path``, as Apple's `errSecDuplicateItem` documentation defines it
/// (<https://developer.apple.com/documentation/security/errsecduplicateitem>).
///
/// - Important: ``secret``, ``oneTimePassword`` and every custom field's value
///   are held in ``SecretBytes``; `description` and `debugDescription` of
///   those types never show their bytes.
public struct Item: Sendable, Equatable {
    /// `kSecClass`: part of the primary key.
    public var itemClass: ItemClass
    /// `kSecAttrService` (for internet passwords: `kSecAttrServer`). An empty service is a value, not a wildcard.
    public var service: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecAttrAccessGroup`; empty by default.
    public var accessGroup: String
    /// `kSecAttrLabel`; `nil` when not set.
    public var label: String?
    /// `kSecAttrComment`; `nil` when not set. The same value as ``notes``.
    public var comment: String?
    /// What the secret is; `token` and `oauth` items go on logout.
    public var kind: ItemKind
    /// `kSecAttrAccessible`; not part of the primary key.
    public var accessible: Accessibility
    /// `kSecAttrGeneric`: application bytes (not secret, but stored encrypted), up to ``maxNotesBytes``.
    public var generic: [UInt8]?
    /// `kSecAttrCreationDate`, UTC.
    public var created: Date
    /// `kSecAttrModificationDate`, UTC.
    public var modified: Date
    /// The secret (`kSecValueData`), up to ``Item/maxSecretBytes`` bytes; `nil` in listings.
    public var secret: SecretBytes?

    // MARK: Fob's own attributes

    /// The web address the item is for (any text up to ``maxTextBytes``; Fob does not parse it); `nil` when not set.
    public var url: String?
    /// A one-time-password seed: an `otpauth://` URI (Key Uri Format) of up
    /// to ``maxOneTimePasswordBytes`` bytes, kept as a secret; `nil` when not set.
    /// Unlike ``secret`` it is decoded in listings too.
    public var oneTimePassword: SecretBytes?
    /// Custom fields in the order the user gave them (at most ``maxCustomFields``;
    /// names need not be unique). Decoded in listings too; hidden values stay in ``SecretBytes``.
    public var customFields: [CustomField]

    /// Multi-line notes: another name for ``comment`` (`kSecAttrComment`,
    /// the CLI's `--comment`), so notes written by any front end show in all.
    public var notes: String? {
        get { comment }
        set { comment = newValue }
    }

    // MARK: Apple's other attributes (used by FobSecurity)

    /// `kSecAttrProtocol` of an internet password: a four-character code such
    /// as `"htps"`; `""` when not set. Part of an internet password's primary key.
    public var internetProtocol: String = ""
    /// `kSecAttrAuthenticationType`: a four-character code such as `"dflt"`;
    /// `""` when not set. Part of an internet password's primary key.
    public var authenticationType: String = ""
    /// `kSecAttrPort`, 0 to ``maxPort``; 0 when not set. Part of an internet password's primary key.
    public var port: Int = 0
    /// `kSecAttrPath`; `""` when not set. Part of an internet password's primary key.
    public var path: String = ""
    /// `kSecAttrSecurityDomain`; `""` when not set. Part of an internet password's primary key.
    public var securityDomain: String = ""
    /// `kSecAttrDescription`: what kind of item this is, for people; `nil` when not set.
    public var itemDescription: String?
    /// `kSecAttrType`: a four-character code as its `UInt32` value; `nil` when not set.
    public var itemType: UInt32?
    /// `kSecAttrCreator`: a four-character code as its `UInt32` value; `nil` when not set.
    public var creator: UInt32?
    /// `kSecAttrIsInvisible`: whether the item is hidden from user-facing lists of Apple's Keychain Access.
    public var isInvisible: Bool = false
    /// `kSecAttrIsNegative`: whether the item is a placeholder with no valid password.
    public var isNegative: Bool = false
    /// `kSecAttrSynchronizable`: whether the item asked to be synchronised.
    /// Fob never synchronises; the flag is kept and is part of the primary
    /// key, as on a device without iCloud Keychain.
    public var synchronizable: Bool = false
    /// The flags of the item's `SecAccessControl` (`kSecAttrAccessControl`,
    /// Apple's `SecAccessControlCreateFlags` raw value), or `nil` when the item has none.
    public var accessControlFlags: UInt64?
    /// The `…ThisDeviceOnly` variant of ``accessible`` the item was given,
    /// or `nil` for the plain value.
    public var deviceBinding: DeviceBinding?
    /// A random identifier given when the item is created, stable for the item's
    /// life (updates keep it); FobSecurity's persistent references carry it.
    /// ``Vault/add(_:)`` stores the one given: give a copy of an item its own (`UUID()`).
    /// Records written before it existed get one derived from their primary
    /// key and creation date, kept from their first rewrite on.
    public var persistentID: UUID
    /// The item's revision: 1 when it is added, one more with every write of
    /// it (update, save, rename), kept by re-encryption (`passwd`), backups
    /// and verification. It is sealed inside the item's authenticated record,
    /// so it cannot be changed without detection. A writer that read revision
    /// N writes conditionally with ``ItemChanges/expectedRevision`` or
    /// ``ItemQuery/expectedRevision``; any other write fails with
    /// ``KeychainError/revisionMismatch(_:expected:current:)``. The store
    /// sets it: the value given to ``Vault/add(_:)`` is ignored. 0 for an
    /// item not (yet) read from a store.
    public var revision: UInt64 = 0
    /// Who may read the secret without being asked (``AccessRule``); the
    /// default rule follows the vault's default. Sealed in the record, so it
    /// cannot be changed without the vault key.
    public var accessRule = AccessRule()

    /// Fields of the record that this version does not know, written back unchanged on update.
    var unknownFields: [UnknownRecordField] = []

    /// The largest secret an item holds: 1 MiB.
    public static let maxSecretBytes = 1 << 20

    /// An item; `created` and `modified` are set by the store when it is added.
    /// - Parameters:
    ///   - notes: see ``comment``; `comment` and `notes` are one attribute.
    ///   - url: the web address, up to ``maxTextBytes`` bytes.
    ///   - oneTimePassword: an `otpauth://` URI, up to ``maxOneTimePasswordBytes`` bytes.
    ///   - customFields: up to ``maxCustomFields`` fields.
    ///   - persistentID: a new random identifier unless given.
    public init(
        itemClass: ItemClass = .genericPassword, service: String, account: String,
        accessGroup: String = "", label: String? = nil, comment: String? = nil,
        kind: ItemKind = .password, accessible: Accessibility = .whenUnlocked,
        generic: [UInt8]? = nil, created: Date = Date(), modified: Date = Date(),
        url: String? = nil, oneTimePassword: SecretBytes? = nil, customFields: [CustomField] = [],
        persistentID: UUID = UUID(), secret: SecretBytes?
    ) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.comment = comment
        self.kind = kind
        self.accessible = accessible
        self.generic = generic
        self.created = created
        self.modified = modified
        self.url = url
        self.oneTimePassword = oneTimePassword
        self.customFields = customFields
        self.persistentID = persistentID
        self.secret = secret
    }

    /// `service "S", account "A"` for messages (names only, never the secret).
    public var displayName: String { describeKey(service: service, account: account) }
}

func describeKey(service: String?, account: String?) -> String {
    var parts: [String] = []
    if let service { parts.append("service \"\(displaySafe(service))\"") }
    if let account { parts.append("account \"\(displaySafe(account))\"") }
    return parts.isEmpty ? "any item" : parts.joined(separator: ", ")
}

/// `text` with control characters (C0, DEL, C1) written as `\u{1B}`, so a
/// name can never move the cursor or recolour a terminal that shows a message.
public func displaySafe(_ text: String) -> String {
    // Printable ASCII, most names, is checked byte by byte.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) { return text }
    guard text.unicodeScalars.contains(where: isControl) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        if isControl(scalar) {
            out += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
}

/// How many items a query returns (`kSecMatchLimit`).
public enum MatchLimit: Sendable, Equatable {
    /// `kSecMatchLimitOne`.
    case one
    /// `kSecMatchLimitAll`.
    case all
}

/// Attributes to match; `nil` matches anything. Strings compare byte for
/// byte (UTF-8), as the Keychain does.
public struct ItemQuery: Sendable, Equatable {
    /// `kSecClass`; `nil` matches both classes.
    public var itemClass: ItemClass?
    /// `kSecAttrService` (`kSecAttrServer`); `""` matches only the empty service.
    public var service: String?
    /// `kSecAttrAccount`.
    public var account: String?
    /// `nil` matches every access group but the reserved ones
    /// (``reservedAccessGroups``). `fob get`, `add` and the other
    /// commands that name one item use `""`; `fob ls` lists every group.
    public var accessGroup: String?
    /// `kSecAttrLabel`; `""` matches items without a label.
    public var label: String?
    /// The item's kind.
    public var kind: ItemKind?
    /// Narrows only when given.
    public var accessible: Accessibility?
    /// The item's ``Item/url``; `""` matches items without one.
    public var url: String?
    /// `kSecAttrSynchronizable`; `nil` matches both (Apple's `kSecAttrSynchronizableAny`).
    public var synchronizable: Bool?
    /// `kSecAttrProtocol`; `""` matches items without one.
    public var internetProtocol: String?
    /// `kSecAttrAuthenticationType`; `""` matches items without one.
    public var authenticationType: String?
    /// `kSecAttrPort`; 0 matches items without one.
    public var port: Int?
    /// `kSecAttrPath`; `""` matches items without one.
    public var path: String?
    /// `kSecAttrSecurityDomain`; `""` matches items without one.
    public var securityDomain: String?
    /// The item's ``Item/persistentID`` (a FobSecurity persistent reference).
    public var persistentID: UUID?
    /// For a delete only: the ``Item/revision`` every matching item must
    /// still have, else nothing is deleted and the delete fails with
    /// ``KeychainError/revisionMismatch(_:expected:current:)``; `nil` deletes
    /// whatever revision. Matching (``matches(_:)``) ignores it.
    public var expectedRevision: UInt64?

    /// A query; by default every generic password.
    public init(
        itemClass: ItemClass? = .genericPassword, service: String? = nil, account: String? = nil,
        accessGroup: String? = nil, label: String? = nil, kind: ItemKind? = nil,
        accessible: Accessibility? = nil, url: String? = nil, synchronizable: Bool? = nil
    ) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.kind = kind
        self.accessible = accessible
        self.url = url
        self.synchronizable = synchronizable
    }

    /// The query for exactly one generic-password primary key (synchronizable or not).
    public static func key(service: String, account: String, accessGroup: String = "") -> ItemQuery {
        ItemQuery(itemClass: .genericPassword, service: service, account: account, accessGroup: accessGroup)
    }

    /// The primary keys (``RecordCodec/primaryKey(of:)`` bytes) of the items
    /// this query can match, when it names every attribute of the primary key
    /// but perhaps ``synchronizable`` (then two keys, one per value), so the
    /// store finds them by their lookup hashes instead of scanning; `nil` otherwise.
    var primaryKeyCandidates: [[UInt8]]? {
        guard let itemClass, let service, let account, let accessGroup else { return nil }
        var item = Item(
            itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
            persistentID: RecordCodec.nilUUID, secret: nil)
        if itemClass == .internetPassword {
            // A port no item can have (checkLimits) leaves the query to the scan, which finds nothing.
            guard let internetProtocol, let authenticationType, let port, let path, let securityDomain,
                (0...Item.maxPort).contains(port)
            else { return nil }
            item.internetKeyParts = InternetKeyParts(
                internetProtocol: internetProtocol, authenticationType: authenticationType, port: port, path: path,
                securityDomain: securityDomain)
        }
        let values = synchronizable.map { [$0] } ?? [false, true]
        return values.map { flag in
            item.synchronizable = flag
            return RecordCodec.primaryKey(of: item)
        }
    }

    /// Whether `item` has every attribute this query names (strings
    /// compared byte for byte, as the Keychain does).
    public func matches(_ item: Item) -> Bool {
        if accessGroup == nil, !ItemQuery.isListed(accessGroup: item.accessGroup) { return false }
        if let c = itemClass, c != item.itemClass { return false }
        if let s = service, !s.utf8.elementsEqual(item.service.utf8) { return false }
        if let a = account, !a.utf8.elementsEqual(item.account.utf8) { return false }
        if let g = accessGroup, !g.utf8.elementsEqual(item.accessGroup.utf8) { return false }
        if let l = label, !l.utf8.elementsEqual((item.label ?? "").utf8) { return false }
        if let k = kind, k != item.kind { return false }
        if let x = accessible, x != item.accessible { return false }
        if let u = url, !u.utf8.elementsEqual((item.url ?? "").utf8) { return false }
        if let y = synchronizable, y != item.synchronizable { return false }
        if let p = internetProtocol, !p.utf8.elementsEqual(item.internetProtocol.utf8) { return false }
        if let t = authenticationType, !t.utf8.elementsEqual(item.authenticationType.utf8) { return false }
        if let n = port, n != item.port { return false }
        if let p = path, !p.utf8.elementsEqual(item.path.utf8) { return false }
        if let d = securityDomain, !d.utf8.elementsEqual(item.securityDomain.utf8) { return false }
        if let i = persistentID, i != item.persistentID { return false }
        return true
    }

    var displayName: String { describeKey(service: service, account: account) }
}

extension ItemQuery {
    /// Access groups that hold Fob's own records (`fob.sync`: the sync
    /// state), not the user's. Their items stay in the vault, under its
    /// whole-vault commitment, so a backup, `fob passwd` and `fob verify`
    /// carry them; but only a query that names the group matches them, so
    /// no listing, search, export, SecItem query or wipe sees them.
    public static let reservedAccessGroups: Set<String> = ["fob.sync"]

    /// Whether listings show the items of `accessGroup`: every group but the
    /// reserved ones. The one rule every listing follows: a query without an
    /// access group (``matches(_:)``), the agent's known items and its change
    /// feed (the terminal UI and the Secret Service hear nothing else).
    public static func isListed(accessGroup: String) -> Bool {
        !reservedAccessGroups.contains(accessGroup)
    }

    /// The query naming exactly `item`'s primary key (class, access group,
    /// service, account, synchronizable and, for internet passwords, protocol,
    /// authentication type, port, path and security domain): one indexed lookup.
    public static func exact(for item: Item) -> ItemQuery {
        var query = ItemQuery(
            itemClass: item.itemClass, service: item.service, account: item.account,
            accessGroup: item.accessGroup, synchronizable: item.synchronizable)
        if item.itemClass == .internetPassword {
            query.match(item.internetKeyParts)
        }
        return query
    }
}

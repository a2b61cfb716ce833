import Foundation

/// The Keychain item class. Fob stores generic passwords (`kSecClassGenericPassword`).
public enum ItemClass: String, Sendable, CaseIterable, Codable {
    /// `kSecClassGenericPassword`.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword` (stored with the same primary key fields).
    case internetPassword = "inet"
}

/// What an item's secret is; `token` and `oauth` items are wiped by logout.
public enum ItemKind: String, Sendable, CaseIterable, Codable {
    case password, token, oauth, note

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

/// A stored item's attributes and, when asked for, its secret.
public struct Item: Sendable, Equatable {
    /// `kSecClass`: part of the primary key.
    public var itemClass: ItemClass
    /// `kSecAttrService`. An empty service is a value, not a wildcard.
    public var service: String
    /// `kSecAttrAccount`.
    public var account: String
    /// `kSecAttrAccessGroup`; empty by default.
    public var accessGroup: String
    /// `kSecAttrLabel`; `nil` when not set.
    public var label: String?
    /// `kSecAttrComment`; `nil` when not set.
    public var comment: String?
    /// What the secret is; `token` and `oauth` items go on logout.
    public var kind: ItemKind
    /// `kSecAttrAccessible`; not part of the primary key.
    public var accessible: Accessibility
    /// `kSecAttrGeneric`: application bytes (not secret, but stored encrypted).
    public var generic: [UInt8]?
    /// `kSecAttrCreationDate`, UTC.
    public var created: Date
    /// `kSecAttrModificationDate`, UTC.
    public var modified: Date
    /// The secret (`kSecValueData`), up to ``Item/maxSecretBytes`` bytes; `nil` in listings.
    public var secret: SecretBytes?

    /// The largest secret an item holds: 1 MiB.
    public static let maxSecretBytes = 1 << 20

    /// An item; `created` and `modified` are set by the store when it is added.
    public init(itemClass: ItemClass = .genericPassword, service: String, account: String,
                accessGroup: String = "", label: String? = nil, comment: String? = nil,
                kind: ItemKind = .password, accessible: Accessibility = .whenUnlocked,
                generic: [UInt8]? = nil, created: Date = Date(), modified: Date = Date(),
                secret: SecretBytes?) {
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
    /// `kSecAttrService`; `""` matches only the empty service.
    public var service: String?
    /// `kSecAttrAccount`.
    public var account: String?
    /// `nil` matches every access group; the CLI always passes `""`.
    public var accessGroup: String?
    /// `kSecAttrLabel`; `""` matches items without a label.
    public var label: String?
    /// The item's kind.
    public var kind: ItemKind?
    /// Narrows only when given.
    public var accessible: Accessibility?

    /// A query; by default every generic password.
    public init(itemClass: ItemClass? = .genericPassword, service: String? = nil, account: String? = nil,
                accessGroup: String? = nil, label: String? = nil, kind: ItemKind? = nil,
                accessible: Accessibility? = nil) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.kind = kind
        self.accessible = accessible
    }

    /// The query for exactly one generic-password primary key.
    public static func key(service: String, account: String, accessGroup: String = "") -> ItemQuery {
        ItemQuery(itemClass: .genericPassword, service: service, account: account, accessGroup: accessGroup)
    }

    /// Whether every attribute of the primary key is given, so the store can
    /// find the item by its lookup hash instead of scanning.
    var isExactKey: Bool { itemClass != nil && service != nil && account != nil && accessGroup != nil }

    /// Whether `item` has every attribute this query names (strings
    /// compared byte for byte, as the Keychain does).
    public func matches(_ item: Item) -> Bool {
        if let c = itemClass, c != item.itemClass { return false }
        if let s = service, !s.utf8.elementsEqual(item.service.utf8) { return false }
        if let a = account, !a.utf8.elementsEqual(item.account.utf8) { return false }
        if let g = accessGroup, !g.utf8.elementsEqual(item.accessGroup.utf8) { return false }
        if let l = label, !l.utf8.elementsEqual((item.label ?? "").utf8) { return false }
        if let k = kind, k != item.kind { return false }
        if let x = accessible, x != item.accessible { return false }
        return true
    }

    var displayName: String { describeKey(service: service, account: account) }
}

/// Attributes to change in ``Vault/update(matching:with:)``; `nil` leaves a value as it is.
public struct ItemChanges: Sendable {
    /// A new service (changes the primary key).
    public var service: String?
    /// A new account (changes the primary key).
    public var account: String?
    /// A new access group (changes the primary key).
    public var accessGroup: String?
    /// `.some(nil)` removes the label.
    public var label: String??
    /// `.some(nil)` removes the comment.
    public var comment: String??
    /// A new kind.
    public var kind: ItemKind?
    /// A new accessibility class.
    public var accessible: Accessibility?
    /// `.some(nil)` removes the generic bytes.
    public var generic: [UInt8]??
    /// A new secret, up to 1 MiB.
    public var secret: SecretBytes?

    /// Changes; every attribute left `nil` stays as it is.
    public init(service: String? = nil, account: String? = nil, accessGroup: String? = nil,
                label: String?? = nil, comment: String?? = nil, kind: ItemKind? = nil,
                accessible: Accessibility? = nil, generic: [UInt8]?? = nil, secret: SecretBytes? = nil) {
        self.service = service
        self.account = account
        self.accessGroup = accessGroup
        self.label = label
        self.comment = comment
        self.kind = kind
        self.accessible = accessible
        self.generic = generic
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
        item.modified = now
    }
}

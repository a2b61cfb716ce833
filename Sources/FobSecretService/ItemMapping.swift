import FobAgent
import FobStore
import FobSystem
import FoundationEssentials

/// How Secret Service items are vault items (docs/secret-service.md).
///
/// - A D-Bus item is a generic password in access group `""`. Each of its
///   attributes is a visible custom field named `attr:NAME` whose value is
///   the attribute's value, so attributes are sealed in the item's record
///   like every field and go into exports and backups.
/// - Its service is the attribute `service`, else the label, else
///   `xdg:schema`, else `secret-service`; its account is the attribute
///   `username`, else `account`, else `user`, else empty. When that key is
///   taken, ` (2)`, ` (3)`, … is added to the account, so items with the same
///   attributes, or with none naming a service, are never refused or merged
///   (unless the client asks to replace: ``replaces(_:service:account:with:label:)``).
/// - An item with no `attr:` field (one made by `fob add S A`) shows the
///   attributes `service` = S, `account` = A and `username` = A.
public enum ItemMapping {
    /// The prefix of the custom fields that hold attributes.
    public static let fieldPrefix = ItemOperations.attributeFieldPrefix
    /// The custom field holding a content type other than `text/plain`.
    public static let contentTypeField = ItemOperations.contentTypeField

    /// The attributes a client sees for `item`.
    public static func attributes(of item: Item) -> [String: String] {
        var attributes: [String: String] = [:]
        for field in item.customFields where field.name.hasPrefix(fieldPrefix) {
            attributes[String(field.name.dropFirst(fieldPrefix.count))] = field.value.unsafeString ?? ""
        }
        if attributes.isEmpty {
            attributes = ["service": item.service, "account": item.account, "username": item.account]
        }
        return attributes
    }

    /// The content type of `item`'s secret (`text/plain` unless one was stored).
    public static func contentType(of item: Item) -> String {
        item.customFields.first { $0.name == contentTypeField }?.value.unsafeString ?? "text/plain"
    }

    /// Whether `item` has every pair of `query` (exact, case-sensitive; `[:]` matches all).
    public static func matches(_ item: Item, _ query: [String: String]) -> Bool {
        let attributes = attributes(of: item)
        return query.allSatisfy { attributes[$0.key] == $0.value }
    }

    /// The custom fields of `item` with the attributes (and content type) replaced.
    public static func fields(
        keeping item: [CustomField], attributes: [String: String], contentType: String?
    ) -> [CustomField] {
        var fields = item.filter { !$0.name.hasPrefix(fieldPrefix) && $0.name != contentTypeField }
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            fields.append(CustomField(name: fieldPrefix + name, value: SecretBytes(utf8: value)))
        }
        if let contentType, contentType != "text/plain", !contentType.isEmpty {
            fields.append(CustomField(name: contentTypeField, value: SecretBytes(utf8: contentType)))
        } else if let kept = item.first(where: { $0.name == contentTypeField }), contentType == nil {
            fields.append(kept)
        }
        return fields
    }

    /// The service and account a new item with these attributes and label is stored under.
    public static func key(attributes: [String: String], label: String) -> (service: String, account: String) {
        let service =
            attributes["service"] ?? (label.isEmpty ? nil : label) ?? attributes["xdg:schema"] ?? "secret-service"
        let account = attributes["username"] ?? attributes["account"] ?? attributes["user"] ?? ""
        return (service, account)
    }

    /// Whether the attributes of an item are the ones shown for an item
    /// with no `attr:` field (``attributes(of:)``: made by `fob add S A`).
    public static func isSynthesised(_ attributes: [String: String], service: String, account: String) -> Bool {
        attributes == ["service": service, "account": account, "username": account]
    }

    /// Whether `CreateItem(replace: true)` with `attributes` and `label`
    /// replaces an item showing `existing` under the key (`service`,
    /// `account`), as gnome-keyring replaces the item whose attributes are
    /// the same: equal attributes, or, for an item made by `fob add S A`
    /// (attributes synthesised), attributes that name its key
    /// (``key(attributes:label:)``) and agree with each of its three (a
    /// client's extra attributes, such as keyring's `application`, do not
    /// matter), so `keyring.set_password(S, A, …)` and `secret-tool store
    /// … service S account A` replace it.
    public static func replaces(
        _ existing: [String: String], service: String, account: String, with attributes: [String: String],
        label: String
    ) -> Bool {
        if existing == attributes { return true }
        guard isSynthesised(existing, service: service, account: account), attributes["service"] == service else {
            return false
        }
        let named = key(attributes: attributes, label: label)
        return named == (service, account)
            && ["account", "username", "user"].allSatisfy { attributes[$0].map { $0 == account } ?? true }
    }

    /// `account`, or `account (n)` for the first n ≥ 2 whose key is free.
    /// - Parameter isTaken: whether a key exists.
    public static func freeAccount(
        service: String, account: String, isTaken: (String) throws(KeychainError) -> Bool
    ) throws(KeychainError) -> String {
        try freeAccount(account: account, from: 1, isTaken: isTaken).account
    }

    /// The first of `account` (n = 1) and `account (n)` (n ≥ 2), from
    /// n = `start` on, whose key is free, and its n.
    /// - Parameter isTaken: whether a key exists.
    static func freeAccount(
        account: String, from start: Int, isTaken: (String) throws(KeychainError) -> Bool
    ) throws(KeychainError) -> (account: String, n: Int) {
        var n = max(1, start)
        while true {
            let candidate = suffixed(account, n)
            if try !isTaken(candidate) { return (candidate, n) }
            n += 1
        }
    }

    /// `account` for n = 1, else `account (n)` (`(n)` for an empty account).
    static func suffixed(_ account: String, _ n: Int) -> String {
        n <= 1 ? account : account.isEmpty ? "(\(n))" : "\(account) (\(n))"
    }

    /// The object path element of an item: its persistent ID as 32 lowercase hex digits.
    public static func pathElement(of id: UUID) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return withUnsafeBytes(of: id.uuid) { raw in
            String(unsafeUninitializedCapacity: 32) { out in
                for (i, byte) in raw.enumerated() {
                    out[2 * i] = digits[Int(byte >> 4)]
                    out[2 * i + 1] = digits[Int(byte & 0xF)]
                }
                return 32
            }
        }
    }

    /// The persistent ID of a path element made by ``pathElement(of:)``, or `nil`.
    /// Decodes the UTF-8 bytes directly: it runs for every property of every item a client reads.
    public static func persistentID(pathElement: String) -> UUID? {
        var bytes = [UInt8](repeating: 0, count: 16)
        var count = 0
        for unit in pathElement.utf8 {
            let nibble: UInt8
            switch unit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = unit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = unit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = unit - UInt8(ascii: "A") + 10
            default: return nil
            }
            guard count < 32 else { return nil }
            bytes[count / 2] |= count % 2 == 0 ? nibble << 4 : nibble
            count += 1
        }
        guard count == 32 else { return nil }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

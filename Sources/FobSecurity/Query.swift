import FobStore
import Foundation

/// Which `SecItem…` dictionary is being read; each accepts different keys.
enum DictionaryRole {
    /// The attributes of `SecItemAdd`.
    case add
    /// The query of `SecItemCopyMatching`.
    case copy
    /// The query of `SecItemUpdate`.
    case updateQuery
    /// The attributes to change of `SecItemUpdate`.
    case updateAttributes
    /// The query of `SecItemDelete`.
    case delete

    var isQuery: Bool { self == .copy || self == .updateQuery || self == .delete }
}

/// The item classes a query can name.
enum QueryClass: Equatable {
    /// A class Fob stores.
    case stored(ItemClass)
    /// Certificates, keys and identities: Apple classes Fob holds no items of.
    case foreign(String)
}

/// How many matches a copy returns.
enum ResultLimit: Equatable {
    case one
    case all
    case count(Int)
}

/// The attribute values of a dictionary, by Fob field.
struct AttributeValues {
    var service: String?
    var account: String?
    var accessGroup: String?
    var label: String?
    var comment: String?
    var accessible: Accessibility?
    var kind: ItemKind?
    var generic: Data?
    var created: Date?
    var modified: Date?

    var isEmpty: Bool {
        service == nil && account == nil && accessGroup == nil && label == nil && comment == nil
            && accessible == nil && kind == nil && generic == nil && created == nil && modified == nil
    }

    /// Whether the attributes the store cannot match on are given (they are matched here).
    var needsLocalFilter: Bool { comment != nil || generic != nil || created != nil || modified != nil }

    /// The part of the match the store answers.
    func storeQuery(_ itemClass: ItemClass) -> ItemQuery {
        ItemQuery(itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
                  label: label, kind: kind, accessible: accessible)
    }

    /// Whether `item` matches every attribute given (strings byte for byte, as the Keychain does).
    func matches(_ item: Item) -> Bool {
        if let comment, !comment.utf8.elementsEqual((item.comment ?? "").utf8) { return false }
        if let generic, !generic.elementsEqual(item.generic ?? []) { return false }
        if let created, created != item.created { return false }
        if let modified, modified != item.modified { return false }
        return storeQuery(item.itemClass).matchesForSecItem(item)
    }

    /// These values as store changes.
    func changes(secret: SecretBytes?) -> ItemChanges {
        ItemChanges(service: service, account: account, accessGroup: accessGroup,
                    label: label.map { .some($0) }, comment: comment.map { .some($0) }, kind: kind,
                    accessible: accessible, generic: generic.map { .some(Array($0)) }, secret: secret)
    }
}

extension ItemQuery {
    /// The store's own matching, restated with the public fields.
    func matchesForSecItem(_ item: Item) -> Bool {
        if let c = itemClass, c != item.itemClass { return false }
        if let s = service, !s.utf8.elementsEqual(item.service.utf8) { return false }
        if let a = account, !a.utf8.elementsEqual(item.account.utf8) { return false }
        if let g = accessGroup, !g.utf8.elementsEqual(item.accessGroup.utf8) { return false }
        if let l = label, !l.utf8.elementsEqual((item.label ?? "").utf8) { return false }
        if let x = accessible, x != item.accessible { return false }
        if let k = kind, k != item.kind { return false }
        return true
    }
}

/// A `SecItem…` dictionary, checked and decoded.
struct ParsedDictionary {
    var itemClass: QueryClass?
    var attributes = AttributeValues()
    /// `kSecValueData` (matched by nothing; stored by add and update).
    var data: Data?
    var returnData = false
    var returnAttributes = false
    var limit: ResultLimit?

    /// Decodes `dictionary` for `role`.
    ///
    /// Keys are checked in sorted order, so that the status of a dictionary
    /// with several faults does not depend on hashing order.
    /// - Throws: `errSecParam` for an unknown key, a value of the wrong type,
    ///   or a key the role does not take; `errSecNoSuchAttr` for an Apple
    ///   attribute Fob does not store; `errSecUnimplemented` for references
    ///   and synchronisation.
    init(_ dictionary: [String: Any], role: DictionaryRole) throws(SecItemFailure) {
        for key in dictionary.keys.sorted() {
            guard let value = unwrapOptional(dictionary[key]!) else {
                throw SecItemFailure(errSecParam, "\(key) has no value")
            }
            try read(key: key, value: value, role: role)
        }
        if role != .updateAttributes, itemClass == nil {
            throw SecItemFailure(errSecParam, "kSecClass is missing")
        }
        if case .stored(let c)? = itemClass { try checkAttributes(of: c) }
    }

    /// Checks that the service-like attribute given is the one `itemClass`
    /// has: `kSecAttrService` for generic, `kSecAttrServer` for internet passwords.
    /// - Throws: `errSecNoSuchAttr` otherwise.
    func checkAttributes(of itemClass: ItemClass) throws(SecItemFailure) {
        if itemClass == .genericPassword, serverGiven {
            throw SecItemFailure(errSecNoSuchAttr, "kSecAttrServer is not an attribute of kSecClassGenericPassword")
        }
        if itemClass == .internetPassword, serviceGiven {
            throw SecItemFailure(errSecNoSuchAttr, "kSecAttrService is not an attribute of kSecClassInternetPassword")
        }
    }

    private var serviceGiven = false
    private var serverGiven = false

    private mutating func read(key: String, value: Any, role: DictionaryRole) throws(SecItemFailure) {
        switch key {
        case kSecClass:
            guard let name = value as? String else { throw wrongType(key, "a kSecClass… string") }
            switch name {
            case kSecClassGenericPassword: itemClass = .stored(.genericPassword)
            case kSecClassInternetPassword: itemClass = .stored(.internetPassword)
            case kSecClassCertificate, kSecClassKey, kSecClassIdentity: itemClass = .foreign(name)
            default: throw SecItemFailure(errSecParam, "unknown kSecClass value \"\(name)\"")
            }
        case kSecAttrService:
            serviceGiven = true
            attributes.service = try string(key, value)
        case kSecAttrServer:
            serverGiven = true
            attributes.service = try string(key, value)
        case kSecAttrAccount: attributes.account = try string(key, value)
        case kSecAttrAccessGroup: attributes.accessGroup = try string(key, value)
        case kSecAttrLabel: attributes.label = try string(key, value)
        case kSecAttrComment: attributes.comment = try string(key, value)
        case kSecAttrGeneric: attributes.generic = try data(key, value)
        case kSecAttrAccessible:
            let name = try string(key, value)
            switch name {
            case kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                 kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly:
                attributes.accessible = .whenUnlocked
            case kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly:
                attributes.accessible = .afterFirstUnlock
            case kSecAttrAccessibleAlways, kSecAttrAccessibleAlwaysThisDeviceOnly:
                throw SecItemFailure(errSecParam, "kSecAttrAccessibleAlways… is not supported: a Fob vault is never read while locked")
            default:
                throw SecItemFailure(errSecParam, "unknown kSecAttrAccessible value \"\(name)\"")
            }
        case kFobAttrKind:
            let name = try string(key, value)
            guard let kind = ItemKind(rawValue: name) else { throw SecItemFailure(errSecParam, "unknown kFobAttrKind value \"\(name)\"") }
            attributes.kind = kind
        case kSecAttrCreationDate, kSecAttrModificationDate:
            guard role.isQuery else { throw SecItemFailure(errSecParam, "\(key) is set by the store and cannot be written") }
            guard let date = value as? Date else { throw wrongType(key, "a Date") }
            if key == kSecAttrCreationDate { attributes.created = date } else { attributes.modified = date }
        case kSecValueData:
            // Apple ignores the secret in a query (code often deletes with its add dictionary).
            data = try data(key, value)
        case kSecReturnData, kSecReturnAttributes:
            let wanted = try bool(key, value)
            guard !wanted || role == .copy || role == .add else {
                throw SecItemFailure(errSecParam, "\(key) is only taken by SecItemCopyMatching and SecItemAdd")
            }
            if key == kSecReturnData { returnData = wanted } else { returnAttributes = wanted }
        case kSecReturnRef, kSecReturnPersistentRef:
            if try bool(key, value) { throw SecItemFailure(errSecUnimplemented, "item references (\(key)) are not implemented") }
        case kSecValueRef, kSecValuePersistentRef:
            throw SecItemFailure(errSecUnimplemented, "item references (\(key)) are not implemented")
        case kSecMatchLimit:
            let limit = try self.limit(value)
            switch role {
            case .copy: self.limit = limit
            case .updateQuery, .delete:
                guard limit == .all else { throw SecItemFailure(errSecParam, "SecItemUpdate and SecItemDelete act on every match; only kSecMatchLimitAll is accepted") }
            case .add, .updateAttributes:
                throw SecItemFailure(errSecParam, "kSecMatchLimit is not taken by SecItemAdd or as attributes to update")
            }
        case kSecAttrSynchronizable:
            if let name = value as? String {
                guard name == kSecAttrSynchronizableAny, role.isQuery else { throw wrongType(key, "a Bool or kSecAttrSynchronizableAny in a query") }
            } else if try bool(key, value) {
                throw SecItemFailure(errSecUnimplemented, "Fob does not synchronise items (kSecAttrSynchronizable)")
            }
        case kSecUseDataProtectionKeychain:
            _ = try bool(key, value)
        case kSecUseAuthenticationUI:
            let name = try string(key, value)
            guard [kSecUseAuthenticationUIAllow, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip].contains(name) else {
                throw SecItemFailure(errSecParam, "unknown kSecUseAuthenticationUI value \"\(name)\"")
            }
        case kSecUseOperationPrompt:
            _ = try string(key, value)
        case kSecAttrDescription, kSecAttrCreator, kSecAttrType, kSecAttrIsInvisible, kSecAttrIsNegative,
             kSecAttrSecurityDomain, kSecAttrProtocol, kSecAttrAuthenticationType, kSecAttrPort, kSecAttrPath,
             kSecAttrAccessControl:
            throw SecItemFailure(errSecNoSuchAttr, "Fob does not store the attribute \(key)")
        default:
            throw SecItemFailure(errSecParam, "unknown key \"\(key)\"")
        }
    }

    private func wrongType(_ key: String, _ expected: String) -> SecItemFailure {
        SecItemFailure(errSecParam, "\(key) needs \(expected)")
    }

    private func string(_ key: String, _ value: Any) throws(SecItemFailure) -> String {
        guard let text = value as? String else { throw wrongType(key, "a String") }
        return text
    }

    private func data(_ key: String, _ value: Any) throws(SecItemFailure) -> Data {
        guard let bytes = value as? Data else { throw wrongType(key, "a Data") }
        return bytes
    }

    private func bool(_ key: String, _ value: Any) throws(SecItemFailure) -> Bool {
        if let flag = value as? Bool { return flag }
        if value is String { throw wrongType(key, "a Bool") }
        if let number = value as? NSNumber { return number.boolValue }
        throw wrongType(key, "a Bool")
    }

    private func limit(_ value: Any) throws(SecItemFailure) -> ResultLimit {
        if let name = value as? String {
            switch name {
            case kSecMatchLimitOne: return .one
            case kSecMatchLimitAll: return .all
            default: throw SecItemFailure(errSecParam, "unknown kSecMatchLimit value \"\(name)\"")
            }
        }
        if isBoolean(value) { throw wrongType(kSecMatchLimit, "kSecMatchLimitOne, kSecMatchLimitAll or a positive Int") }
        if let count = value as? Int, count >= 1 { return count == 1 ? .one : .count(count) }
        throw wrongType(kSecMatchLimit, "kSecMatchLimitOne, kSecMatchLimitAll or a positive Int")
    }
}

/// Whether `value` is a boolean (`Bool`, or an `NSNumber` made from one)
/// rather than a number, as `CFBoolean` differs from `CFNumber`.
func isBoolean(_ value: Any) -> Bool {
    if type(of: value) == Bool.self { return true }
    if let number = value as? NSNumber, type(of: value) is NSNumber.Type {
        return String(cString: number.objCType) == "c"
    }
    return false
}

/// The value inside an `Optional` stored as `Any` (as `kCFBooleanTrue` is when
/// used without `!`), `nil` for an empty one, or the value itself.
func unwrapOptional(_ value: Any) -> Any? {
    let mirror = Mirror(reflecting: value)
    guard mirror.displayStyle == .optional else { return value }
    guard let wrapped = mirror.children.first?.value else { return nil }
    return unwrapOptional(wrapped)
}

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

/// `kSecAttrSynchronizable` as given.
enum SynchronizableValue: Equatable {
    case value(Bool)
    /// `kSecAttrSynchronizableAny` (queries only).
    case any
}

/// The attribute values of a dictionary, by Fob field.
struct AttributeValues {
    var service: String?
    var account: String?
    var accessGroup: String?
    var label: String?
    var comment: String?
    var accessible: Accessibility?
    /// The `…ThisDeviceOnly` variant given with `kSecAttrAccessible` (`.some(nil)`: a plain value).
    var deviceBinding: DeviceBinding??
    var kind: ItemKind?
    var generic: Data?
    var created: Date?
    var modified: Date?
    var internetProtocol: String?
    var authenticationType: String?
    var port: Int?
    var path: String?
    var securityDomain: String?
    var itemDescription: String?
    var itemType: UInt32?
    var creator: UInt32?
    var isInvisible: Bool?
    var isNegative: Bool?
    var synchronizable: SynchronizableValue?
    var accessControl: SecAccessControl?
    /// From `kSecValuePersistentRef`.
    var persistentID: UUID?
    /// Set when the query cannot match anything (a persistent reference of another class).
    var matchesNothing = false

    var isEmpty: Bool {
        service == nil && account == nil && accessGroup == nil && label == nil && comment == nil
            && accessible == nil && kind == nil && generic == nil && created == nil && modified == nil
            && internetProtocol == nil && authenticationType == nil && port == nil && path == nil
            && securityDomain == nil && itemDescription == nil && itemType == nil && creator == nil
            && isInvisible == nil && isNegative == nil && synchronizable == nil && accessControl == nil
    }

    /// Whether attributes the store does not match on are given (they are matched here).
    var needsLocalFilter: Bool {
        comment != nil || generic != nil || created != nil || modified != nil || itemDescription != nil
            || itemType != nil || creator != nil || isInvisible != nil || isNegative != nil
            || accessControl != nil || deviceBinding != nil || matchesNothing
    }

    /// The part of the match the store answers. Without `kSecAttrSynchronizable`
    /// only items stored with `false` match, as Apple documents; a persistent
    /// reference finds its item either way.
    func storeQuery(_ itemClass: ItemClass) -> ItemQuery {
        let sync: Bool?
        switch synchronizable {
        case .value(let flag)?: sync = flag
        case .any?: sync = nil
        case nil: sync = persistentID == nil ? false : nil
        }
        var query = ItemQuery(
            itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
            label: label, kind: kind,
            accessible: accessControl.flatMap { try? accessibility(named: $0.protection) } ?? accessible,
            synchronizable: sync)
        query.internetProtocol = internetProtocol
        query.authenticationType = authenticationType
        query.port = port
        query.path = path
        query.securityDomain = securityDomain
        query.persistentID = persistentID
        return query
    }

    /// Whether `item` matches every attribute given (strings byte for byte, as the Keychain does).
    func matches(_ item: Item) -> Bool {
        if matchesNothing { return false }
        if let comment, !comment.utf8.elementsEqual((item.comment ?? "").utf8) { return false }
        if let generic, !generic.elementsEqual(item.generic ?? []) { return false }
        if let created, created != item.created { return false }
        if let modified, modified != item.modified { return false }
        if let itemDescription, !itemDescription.utf8.elementsEqual((item.itemDescription ?? "").utf8) { return false }
        if let itemType, itemType != item.itemType ?? 0 { return false }
        if let creator, creator != item.creator ?? 0 { return false }
        if let isInvisible, isInvisible != item.isInvisible { return false }
        if let isNegative, isNegative != item.isNegative { return false }
        // kSecAttrAccessible matches the value given, …ThisDeviceOnly included.
        if let deviceBinding, deviceBinding != item.deviceBinding { return false }
        if let accessControl, accessControl.flags.rawValue != item.accessControlFlags.map(CFOptionFlags.init) {
            return false
        }
        return storeQuery(item.itemClass).matches(item)
    }

    /// A new item of `itemClass` with these values (defaults for the rest).
    func newItem(_ itemClass: ItemClass, secret: SecretBytes) -> Item {
        var item = Item(
            itemClass: itemClass, service: service ?? "", account: account ?? "",
            accessGroup: accessGroup ?? "", label: label, comment: comment,
            kind: kind ?? .password, accessible: accessible ?? .whenUnlocked,
            generic: generic.map { Array($0) }, secret: secret)
        // The attributes the initialiser does not take; dates stay the store's to set.
        changes(secret: nil).apply(to: &item, now: item.modified)
        return item
    }

    /// These values as store changes.
    func changes(secret: SecretBytes?) -> ItemChanges {
        var changes = ItemChanges(
            service: service, account: account, accessGroup: accessGroup,
            label: label.map { .some($0) }, comment: comment.map { .some($0) }, kind: kind,
            accessible: accessible, generic: generic.map { .some(Array($0)) }, secret: secret)
        changes.internetProtocol = internetProtocol
        changes.authenticationType = authenticationType
        changes.port = port
        changes.path = path
        changes.securityDomain = securityDomain
        changes.itemDescription = itemDescription.map { .some($0) }
        changes.itemType = itemType.map { .some($0) }
        changes.creator = creator.map { .some($0) }
        changes.isInvisible = isInvisible
        changes.isNegative = isNegative
        if case .value(let flag)? = synchronizable { changes.synchronizable = flag }
        changes.deviceBinding = deviceBinding
        if let accessControl {
            changes.accessible = try? accessibility(named: accessControl.protection)
            changes.deviceBinding = .some(FobSecurity.deviceBinding(named: accessControl.protection))
            changes.accessControlFlags = .some(UInt64(accessControl.flags.rawValue))
        }
        return changes
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
    var returnPersistentRef = false
    var returnRef = false
    var limit: ResultLimit?

    /// Whether any return key asks for something.
    var returnsSomething: Bool { returnData || returnAttributes || returnPersistentRef || returnRef }

    /// Decodes `dictionary` for `role`.
    ///
    /// Keys are checked in sorted order, so that the status of a dictionary
    /// with several faults does not depend on hashing order.
    /// - Throws: `errSecParam` for an unknown key, a value of the wrong type,
    ///   or a key the role does not take; `errSecNoSuchAttr` for an attribute
    ///   of the other password class; `errSecAuthFailed` for access control that needs
    ///   authentication Fob cannot check.
    init(_ dictionary: [String: Any], role: DictionaryRole) throws(SecItemFailure) {
        var refClass: ItemClass?
        for key in dictionary.keys.sorted() {
            guard let value = unwrapOptional(dictionary[key]!) else {
                throw SecItemFailure(errSecParam, "\(key) has no value")
            }
            if key == kSecValuePersistentRef || key == kSecValueRef {
                guard role.isQuery else { throw SecItemFailure(errSecParam, "\(key) is taken only by queries") }
                let (c, id) = try reference(key, value)
                if let earlier = attributes.persistentID, earlier != id || refClass != c {
                    attributes.matchesNothing = true
                }
                refClass = c
                attributes.persistentID = id
                continue
            }
            try read(key: key, value: value, role: role)
        }
        if let refClass {
            // A persistent reference names its class (Apple lets the query leave kSecClass out).
            if itemClass == nil {
                itemClass = .stored(refClass)
            } else if itemClass != .stored(refClass) {
                attributes.matchesNothing = true
            }
        }
        if role != .updateAttributes, itemClass == nil {
            throw SecItemFailure(errSecParam, "kSecClass is missing")
        }
        if case .stored(let c)? = itemClass { try checkAttributes(of: c) }
        if let control = attributes.accessControl, !role.isQuery {
            guard !accessibleGiven else {
                throw SecItemFailure(
                    errSecParam, "kSecAttrAccessible and kSecAttrAccessControl cannot be given together")
            }
            guard !control.flags.contains(.privateKeyUsage) else {
                throw SecItemFailure(errSecParam, "kSecAccessControlPrivateKeyUsage is for keys, not passwords")
            }
            guard control.flags.isDisjoint(with: .needsAuthentication) else {
                throw SecItemFailure(
                    errSecAuthFailed,
                    "Fob cannot check a passcode, biometry, a companion device or an application password (SecAccessControlCreateFlags 0x\(String(control.flags.rawValue, radix: 16)))"
                )
            }
        }
    }

    /// Checks that the attributes given belong to `itemClass`: `kSecAttrService`
    /// to generic passwords; `kSecAttrServer` and the other internet attributes
    /// to internet passwords.
    /// - Throws: `errSecNoSuchAttr` otherwise.
    func checkAttributes(of itemClass: ItemClass) throws(SecItemFailure) {
        if itemClass == .genericPassword, let key = internetKeyGiven {
            throw SecItemFailure(errSecNoSuchAttr, "\(key) is not an attribute of kSecClassGenericPassword")
        }
        if itemClass == .internetPassword, serviceGiven {
            throw SecItemFailure(errSecNoSuchAttr, "kSecAttrService is not an attribute of kSecClassInternetPassword")
        }
    }

    /// Where the text attributes of internet passwords only are kept
    /// (`kSecAttrServer` is the service); `nil` for any other key.
    private static func internetText(_ key: String) -> WritableKeyPath<AttributeValues, String?>? {
        switch key {
        case kSecAttrServer: \.service
        case kSecAttrProtocol: \.internetProtocol
        case kSecAttrAuthenticationType: \.authenticationType
        case kSecAttrPath: \.path
        case kSecAttrSecurityDomain: \.securityDomain
        default: nil
        }
    }

    private var serviceGiven = false
    private var internetKeyGiven: String?
    private var accessibleGiven = false

    private mutating func read(key: String, value: Any, role: DictionaryRole) throws(SecItemFailure) {
        if let field = Self.internetText(key) {
            internetKeyGiven = internetKeyGiven ?? key
            attributes[keyPath: field] = try string(key, value)
        } else if try !readAttribute(key: key, value: value, role: role) {
            try readControl(key: key, value: value, role: role)
        }
    }

    /// Reads `kSecClass` or a `kSecAttr…` key.
    /// - Returns: `false` for any other key.
    private mutating func readAttribute(key: String, value: Any, role: DictionaryRole) throws(SecItemFailure) -> Bool {
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
        case kSecAttrPort:
            internetKeyGiven = internetKeyGiven ?? key
            let port = try integer(key, value)
            guard (0...Item.maxPort).contains(port) else {
                throw SecItemFailure(errSecParam, "kSecAttrPort is not between 0 and 65535")
            }
            attributes.port = port
        case kSecAttrAccount: attributes.account = try string(key, value)
        case kSecAttrAccessGroup: attributes.accessGroup = try string(key, value)
        case kSecAttrLabel: attributes.label = try string(key, value)
        case kSecAttrComment: attributes.comment = try string(key, value)
        case kSecAttrDescription: attributes.itemDescription = try string(key, value)
        case kSecAttrGeneric: attributes.generic = try data(key, value)
        case kSecAttrType, kSecAttrCreator:
            let code = try integer(key, value)
            guard let code32 = UInt32(exactly: code) ?? Int32(exactly: code).map({ UInt32(bitPattern: $0) }) else {
                throw SecItemFailure(errSecParam, "\(key) is not a four-character code")
            }
            if key == kSecAttrType { attributes.itemType = code32 } else { attributes.creator = code32 }
        case kSecAttrIsInvisible: attributes.isInvisible = try bool(key, value)
        case kSecAttrIsNegative: attributes.isNegative = try bool(key, value)
        case kSecAttrAccessible:
            accessibleGiven = true
            let name = try string(key, value)
            attributes.accessible = try accessibility(named: name)
            attributes.deviceBinding = .some(deviceBinding(named: name))
        case kSecAttrAccessControl:
            guard let control = value as? SecAccessControl else { throw wrongType(key, "a SecAccessControl") }
            attributes.accessControl = control
        case kFobAttrKind:
            let name = try string(key, value)
            guard let kind = ItemKind(rawValue: name) else {
                throw SecItemFailure(errSecParam, "unknown kFobAttrKind value \"\(name)\"")
            }
            attributes.kind = kind
        case kSecAttrCreationDate, kSecAttrModificationDate:
            guard role.isQuery else {
                throw SecItemFailure(errSecParam, "\(key) is set by the store and cannot be written")
            }
            guard let date = value as? Date else { throw wrongType(key, "a Date") }
            if key == kSecAttrCreationDate { attributes.created = date } else { attributes.modified = date }
        case kSecAttrSynchronizable:
            if let name = value as? String {
                guard name == kSecAttrSynchronizableAny, role.isQuery else {
                    throw wrongType(key, "a Bool, or kSecAttrSynchronizableAny in a query")
                }
                attributes.synchronizable = .any
            } else {
                attributes.synchronizable = .value(try bool(key, value))
            }
        default:
            return false
        }
        return true
    }

    /// Reads a `kSecValue…`, `kSecReturn…`, `kSecMatch…` or `kSecUse…` key.
    /// - Throws: `errSecParam` for an unknown key or a wrong value.
    private mutating func readControl(key: String, value: Any, role: DictionaryRole) throws(SecItemFailure) {
        switch key {
        case kSecValueData:
            // Apple ignores the secret in a query (code often deletes with its add dictionary).
            data = try data(key, value)
        case kSecReturnData, kSecReturnAttributes, kSecReturnPersistentRef, kSecReturnRef:
            let wanted = try bool(key, value)
            guard !wanted || role == .copy || role == .add else {
                throw SecItemFailure(errSecParam, "\(key) is only taken by SecItemCopyMatching and SecItemAdd")
            }
            switch key {
            case kSecReturnData: returnData = wanted
            case kSecReturnAttributes: returnAttributes = wanted
            case kSecReturnRef: returnRef = wanted
            default: returnPersistentRef = wanted
            }
        case kSecMatchLimit:
            let limit = try self.limit(value)
            switch role {
            case .copy: self.limit = limit
            case .updateQuery, .delete:
                guard limit == .all else {
                    throw SecItemFailure(
                        errSecParam,
                        "SecItemUpdate and SecItemDelete act on every match; only kSecMatchLimitAll is accepted")
                }
            case .add, .updateAttributes:
                throw SecItemFailure(
                    errSecParam, "kSecMatchLimit is not taken by SecItemAdd or as attributes to update")
            }
        case kSecUseDataProtectionKeychain, kSecUseNoAuthenticationUI:
            _ = try bool(key, value)
        case kSecUseAuthenticationUI:
            let name = try string(key, value)
            guard
                [kSecUseAuthenticationUIAllow, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip].contains(name)
            else {
                throw SecItemFailure(errSecParam, "unknown kSecUseAuthenticationUI value \"\(name)\"")
            }
        case kSecUseOperationPrompt:
            _ = try string(key, value)
        case kSecUseAuthenticationContext:
            // A LAContext on Apple platforms; no Fob item needs one.
            break
        default:
            throw SecItemFailure(errSecParam, "unknown key \"\(key)\"")
        }
    }

    /// The item a `kSecValuePersistentRef` (`Data`) or `kSecValueRef`
    /// (``SecKeychainItem``) names.
    private func reference(_ key: String, _ value: Any) throws(SecItemFailure) -> (ItemClass, UUID) {
        if key == kSecValueRef {
            guard let item = value as? SecKeychainItem else {
                throw wrongType(key, "a SecKeychainItem (kSecReturnRef)")
            }
            return (item.itemClass, item.persistentID)
        }
        return try PersistentReference.parse(try data(key, value))
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

    /// A whole number (`Int`, another integer type, or an `NSNumber` of one); not a `Bool`.
    private func integer(_ key: String, _ value: Any) throws(SecItemFailure) -> Int {
        if isBoolean(value) || value is String { throw wrongType(key, "a number") }
        if let number = value as? Int { return number }
        if let number = value as? NSNumber, let exact = Int(exactly: number.doubleValue) { return exact }
        throw wrongType(key, "a number")
    }

    private func limit(_ value: Any) throws(SecItemFailure) -> ResultLimit {
        if let name = value as? String {
            switch name {
            case kSecMatchLimitOne: return .one
            case kSecMatchLimitAll: return .all
            default: throw SecItemFailure(errSecParam, "unknown kSecMatchLimit value \"\(name)\"")
            }
        }
        if isBoolean(value) {
            throw wrongType(kSecMatchLimit, "kSecMatchLimitOne, kSecMatchLimitAll or a positive Int")
        }
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

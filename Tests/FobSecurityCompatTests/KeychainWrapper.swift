import Foundation

// Keychain code written the way iOS projects write it: a key-value wrapper
// over generic passwords of one service. It builds against Apple's Security
// framework and, unchanged but for the import, against FobSecurity.
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

/// When a stored value may be read.
enum KeychainItemAccessibility {
    case afterFirstUnlock
    case afterFirstUnlockThisDeviceOnly
    case whenUnlocked
    case whenUnlockedThisDeviceOnly
    case whenPasscodeSetThisDeviceOnly

    var attributeValue: CFString {
        switch self {
        case .afterFirstUnlock: return kSecAttrAccessibleAfterFirstUnlock
        case .afterFirstUnlockThisDeviceOnly: return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        case .whenUnlocked: return kSecAttrAccessibleWhenUnlocked
        case .whenUnlockedThisDeviceOnly: return kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .whenPasscodeSetThisDeviceOnly: return kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        }
    }

    init?(attributeValue: String) {
        let all: [KeychainItemAccessibility] = [
            .afterFirstUnlock, .afterFirstUnlockThisDeviceOnly, .whenUnlocked,
            .whenUnlockedThisDeviceOnly, .whenPasscodeSetThisDeviceOnly,
        ]
        guard let match = all.first(where: { ($0.attributeValue as String) == attributeValue }) else { return nil }
        self = match
    }
}

/// Stores strings, data and Codable values under keys, one generic password per key.
open class KeychainWrapper {
    static let standard = KeychainWrapper(serviceName: Bundle.main.bundleIdentifier ?? "KeychainWrapper")

    let serviceName: String
    let accessGroup: String?
    /// The status of the last call, for diagnostics.
    private(set) var lastStatus: OSStatus = noErr

    init(serviceName: String, accessGroup: String? = nil) {
        self.serviceName = serviceName
        self.accessGroup = accessGroup
    }

    // MARK: Reading

    func hasValue(forKey key: String, isSynchronizable: Bool = false) -> Bool {
        data(forKey: key, isSynchronizable: isSynchronizable) != nil
    }

    func string(forKey key: String, isSynchronizable: Bool = false) -> String? {
        guard let data = data(forKey: key, isSynchronizable: isSynchronizable) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    func integer(forKey key: String) -> Int? {
        string(forKey: key).flatMap { Int($0) }
    }

    func object<T: Decodable>(of type: T.Type, forKey key: String) -> T? {
        guard let data = data(forKey: key) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }

    func data(forKey key: String, isSynchronizable: Bool = false) -> Data? {
        var query = baseQuery(forKey: key, isSynchronizable: isSynchronizable)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = withUnsafeMutablePointer(to: &result) {
            SecItemCopyMatching(query as CFDictionary, UnsafeMutablePointer($0))
        }
        lastStatus = status
        return status == noErr ? result as? Data : nil
    }

    /// A persistent reference to the key's item.
    func dataRef(forKey key: String) -> Data? {
        var query = baseQuery(forKey: key)
        query[kSecReturnPersistentRef as String] = kCFBooleanTrue
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        return lastStatus == errSecSuccess ? result as? Data : nil
    }

    func accessibilityOfKey(_ key: String) -> KeychainItemAccessibility? {
        var query = baseQuery(forKey: key)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        guard lastStatus == noErr, let attributes = result as? [String: AnyObject],
            let value = attributes[kSecAttrAccessible as String] as? String
        else { return nil }
        return KeychainItemAccessibility(attributeValue: value)
    }

    /// Every key stored for this service (synchronizable or not).
    func allKeys() -> Set<String> {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: serviceName,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
            kSecReturnAttributes as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        var result: AnyObject?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        guard lastStatus == errSecSuccess, let items = result as? [[String: Any]] else { return [] }
        return Set(items.compactMap { $0[kSecAttrAccount as String] as? String })
    }

    // MARK: Writing

    @discardableResult
    func set(
        _ value: String, forKey key: String, withAccessibility accessibility: KeychainItemAccessibility? = nil,
        isSynchronizable: Bool = false
    ) -> Bool {
        guard let data = value.data(using: .utf8) else { return false }
        return set(data, forKey: key, withAccessibility: accessibility, isSynchronizable: isSynchronizable)
    }

    @discardableResult
    func set(_ value: Int, forKey key: String) -> Bool {
        set(String(value), forKey: key)
    }

    @discardableResult
    func set<T: Encodable>(object value: T, forKey key: String) -> Bool {
        guard let data = try? JSONEncoder().encode(value) else { return false }
        return set(data, forKey: key)
    }

    /// Adds the value, or updates it when the key exists.
    @discardableResult
    func set(
        _ value: Data, forKey key: String, withAccessibility accessibility: KeychainItemAccessibility? = nil,
        isSynchronizable: Bool = false
    ) -> Bool {
        var query = baseQuery(forKey: key, withAccessibility: accessibility, isSynchronizable: isSynchronizable)
        query[kSecValueData as String] = value
        let status = SecItemAdd(query as CFDictionary, nil)
        lastStatus = status
        if status == errSecSuccess { return true }
        if status == errSecDuplicateItem {
            return update(value, forKey: key, withAccessibility: accessibility, isSynchronizable: isSynchronizable)
        }
        return false
    }

    @discardableResult
    func removeObject(forKey key: String, isSynchronizable: Bool = false) -> Bool {
        let query = baseQuery(forKey: key, isSynchronizable: isSynchronizable)
        lastStatus = SecItemDelete(query as CFDictionary)
        return lastStatus == errSecSuccess
    }

    /// Removes every key of this service, synchronizable or not.
    @discardableResult
    func removeAllKeys() -> Bool {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: serviceName,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        ]
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        lastStatus = SecItemDelete(query as CFDictionary)
        return lastStatus == errSecSuccess || lastStatus == errSecItemNotFound
    }

    // MARK: Private

    private func update(
        _ value: Data, forKey key: String, withAccessibility accessibility: KeychainItemAccessibility?,
        isSynchronizable: Bool
    ) -> Bool {
        let query = baseQuery(forKey: key, isSynchronizable: isSynchronizable)
        var changes: [String: Any] = [kSecValueData as String: value]
        if let accessibility = accessibility { changes[kSecAttrAccessible as String] = accessibility.attributeValue }
        lastStatus = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
        return lastStatus == errSecSuccess
    }

    private func baseQuery(
        forKey key: String, withAccessibility accessibility: KeychainItemAccessibility? = nil,
        isSynchronizable: Bool = false
    ) -> [String: Any] {
        // The key goes in both account and generic, as many wrappers do.
        let encodedKey = key.data(using: .utf8)
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: serviceName,
            kSecAttrAccount as String: key,
            kSecAttrGeneric as String: encodedKey as Any,
            kSecAttrSynchronizable as String: isSynchronizable ? kCFBooleanTrue! : kCFBooleanFalse!,
        ]
        if let accessibility = accessibility { query[kSecAttrAccessible as String] = accessibility.attributeValue }
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}

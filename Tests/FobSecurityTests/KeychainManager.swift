import Foundation

// Keychain client code written the way iOS apps write it. It compiles
// against Apple's Security framework and, unchanged, against FobSecurity.
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

/// A small Keychain wrapper in the usual iOS style: generic passwords of one
/// service, keyed by account.
final class KeychainManager {
    enum KeychainManagerError: Error, Equatable {
        case unhandledError(status: OSStatus)
        case unexpectedData
    }

    let service: String
    /// The status of the last Keychain call, for tests to check.
    private(set) var lastStatus: OSStatus = errSecSuccess

    init(service: String) {
        self.service = service
    }

    /// Adds the item, or updates its data when it exists already.
    func save(_ data: Data, for account: String) throws {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecValueData as String: data,
        ]
        var status = SecItemAdd(query as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let search: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            let attributes: [String: Any] = [kSecValueData as String: data]
            status = SecItemUpdate(search as CFDictionary, attributes as CFDictionary)
        }
        lastStatus = status
        guard status == errSecSuccess else { throw KeychainManagerError.unhandledError(status: status) }
    }

    /// The item's data, or `nil` when there is no such item.
    func read(account: String) throws -> Data? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: kCFBooleanTrue!,
            kSecMatchLimit as String: kSecMatchLimitOne,
        ]
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        lastStatus = status
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw KeychainManagerError.unhandledError(status: status) }
        guard let data = result as? Data else { throw KeychainManagerError.unexpectedData }
        return data
    }

    /// Deletes the item; a missing item is not an error.
    func delete(account: String) throws {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        let status = SecItemDelete(query as CFDictionary)
        lastStatus = status
        guard status == errSecSuccess || status == errSecItemNotFound else {
            throw KeychainManagerError.unhandledError(status: status)
        }
    }

    /// Every account of this service, sorted by the Keychain.
    func accounts() throws -> [String] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        lastStatus = status
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else { throw KeychainManagerError.unhandledError(status: status) }
        guard let items = result as? [[String: Any]] else { throw KeychainManagerError.unexpectedData }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }
    }

    // MARK: Token conveniences

    func saveToken(_ token: String, for account: String) throws {
        try save(Data(token.utf8), for: account)
    }

    func token(for account: String) throws -> String? {
        guard let data = try read(account: account) else { return nil }
        guard let token = String(data: data, encoding: .utf8) else { throw KeychainManagerError.unexpectedData }
        return token
    }

    func deleteToken(for account: String) throws {
        try delete(account: account)
    }
}

import Foundation

// A session-token store the way iOS apps write one: access control,
// the data-protection keychain, no authentication UI, errors explained with
// SecCopyErrorMessageString. Builds unchanged against Apple's Security.
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

enum TokenStoreError: Error, Equatable, CustomStringConvertible {
    case accessControl(code: Int)
    case keychain(OSStatus)
    case badData

    var description: String {
        switch self {
        case .accessControl(let code): return "cannot create access control (\(code))"
        case .keychain(let status):
            let message = SecCopyErrorMessageString(status, nil) as String? ?? "unknown"
            return "Keychain error \(status): \(message)"
        case .badData: return "the stored token is not readable"
        }
    }

    var status: OSStatus? {
        if case .keychain(let status) = self { return status }
        return nil
    }
}

struct StoredToken: Codable, Equatable {
    var accessToken: String
    var refreshToken: String?
    var expiresAt: Date
}

/// Keeps OAuth tokens, one item per account, readable after first unlock on this device only.
final class TokenStore {
    private let service: String
    private let accessGroup: String?
    /// Stands for a LAContext; any object is passed through.
    private let authenticationContext = NSObject()

    init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    static func accessControl(_ flags: SecAccessControlCreateFlags = []) throws -> SecAccessControl {
        var error: Unmanaged<CFError>?
        guard
            let access = SecAccessControlCreateWithFlags(
                kCFAllocatorDefault,
                kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                flags, &error)
        else {
            let cfError = error!.takeRetainedValue()
            throw TokenStoreError.accessControl(code: CFErrorGetCode(cfError))
        }
        return access
    }

    /// Saves the token, replacing any stored for the account.
    func save(_ token: StoredToken, account: String, requireUserPresence: Bool = false) throws {
        let data = try JSONEncoder().encode(token)
        let access = try TokenStore.accessControl(requireUserPresence ? .userPresence : [])
        var attributes = query(account: account)
        attributes[kSecValueData as String] = data
        attributes[kSecAttrAccessControl as String] = access
        attributes[kSecAttrLabel as String] = "\(service) (\(account))"
        attributes[kSecAttrDescription as String] = "OAuth token"
        attributes[kSecUseDataProtectionKeychain as String] = true

        var status = SecItemAdd(attributes as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let changes: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessControl as String: access,
            ]
            status = SecItemUpdate(query(account: account) as CFDictionary, changes as CFDictionary)
        }
        guard status == errSecSuccess else { throw TokenStoreError.keychain(status) }
    }

    func token(account: String) throws -> StoredToken? {
        var query = self.query(account: account)
        query[kSecReturnData as String] = true
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
        query[kSecUseAuthenticationContext as String] = authenticationContext
        query[kSecUseOperationPrompt as String] = "Sign in to continue"
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        switch status {
        case errSecSuccess:
            guard let data = item as? Data else { throw TokenStoreError.badData }
            do { return try JSONDecoder().decode(StoredToken.self, from: data) } catch { throw TokenStoreError.badData }
        case errSecItemNotFound:
            return nil
        default:
            throw TokenStoreError.keychain(status)
        }
    }

    /// The accounts with a token, at most `limit`.
    func accounts(limit: Int) throws -> [String] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: limit,
        ]
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else { throw TokenStoreError.keychain(status) }
        if let one = result as? [String: Any] { return [one[kSecAttrAccount as String] as? String ?? ""] }
        guard let all = result as? [[String: Any]] else { throw TokenStoreError.badData }
        return all.compactMap { $0[kSecAttrAccount as String] as? String }
    }

    func delete(account: String) throws {
        let status = SecItemDelete(query(account: account) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw TokenStoreError.keychain(status) }
    }

    /// Signs out everywhere: deletes every token of the service.
    func deleteAll() throws {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw TokenStoreError.keychain(status) }
    }

    private func query(account: String) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }
}

import Foundation

// Website credentials the way iOS apps store them: internet passwords keyed
// by server, protocol, port, path and account, persistent references for
// quick access, generated passwords. Builds unchanged against Apple's Security.
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

struct WebCredential: Equatable {
    var account: String
    var password: String
    var persistentRef: Data
}

final class InternetPasswordStore {
    enum StoreError: Error, Equatable {
        case duplicate
        case notFound
        case unexpected(OSStatus)

        init(status: OSStatus) {
            switch status {
            case errSecDuplicateItem: self = .duplicate
            case errSecItemNotFound: self = .notFound
            default: self = .unexpected(status)
            }
        }

        var message: String {
            switch self {
            case .duplicate: return SecCopyErrorMessageString(errSecDuplicateItem, nil) as String? ?? ""
            case .notFound: return SecCopyErrorMessageString(errSecItemNotFound, nil) as String? ?? ""
            case .unexpected(let status):
                return SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
            }
        }
    }

    let accessGroup: String?
    let synchronizable: Bool

    init(accessGroup: String? = nil, synchronizable: Bool = false) {
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
    }

    /// A random password of `length` characters from an unambiguous alphabet.
    static func generatePassword(length: Int = 20) -> String? {
        let alphabet = Array("abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_")
        var bytes = [UInt8](repeating: 0, count: length)
        let status = SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes)
        guard status == errSecSuccess else { return nil }
        return String(bytes.map { alphabet[Int($0) % alphabet.count] })
    }

    /// Adds a credential for `url` and returns its persistent reference.
    @discardableResult
    func add(
        url: URL, account: String, password: String,
        authenticationType: CFString = kSecAttrAuthenticationTypeHTMLForm
    ) throws -> Data {
        var attributes = keyAttributes(url: url)
        attributes[kSecAttrAccount as String] = account
        attributes[kSecAttrAuthenticationType as String] = authenticationType
        attributes[kSecValueData as String] = password.data(using: .utf8)!
        attributes[kSecAttrLabel as String] = url.host ?? ""
        attributes[kSecReturnPersistentRef as String] = true
        var result: CFTypeRef?
        let status = SecItemAdd(attributes as CFDictionary, &result)
        guard status == errSecSuccess else { throw StoreError(status: status) }
        guard let reference = result as? Data else { throw StoreError.unexpected(errSecDecode) }
        return reference
    }

    /// Every credential for `url`'s server, protocol, port and path.
    func credentials(for url: URL) throws -> [WebCredential] {
        var query = keyAttributes(url: url)
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecReturnPersistentRef as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { throw StoreError(status: status) }
        return items.compactMap { item in
            guard let account = item[kSecAttrAccount as String] as? String,
                let data = item[kSecValueData as String] as? Data,
                let password = String(data: data, encoding: .utf8),
                let reference = item[kSecValuePersistentRef as String] as? Data
            else { return nil }
            return WebCredential(account: account, password: password, persistentRef: reference)
        }
    }

    /// The password behind a persistent reference.
    func password(persistentRef: Data) throws -> String {
        let query: [String: Any] = [
            kSecValuePersistentRef as String: persistentRef,
            kSecReturnData as String: true,
        ]
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess else { throw StoreError(status: status) }
        guard let data = result as? Data, let password = String(data: data, encoding: .utf8) else {
            throw StoreError.unexpected(errSecDecode)
        }
        return password
    }

    /// The attributes behind a persistent reference.
    func attributes(persistentRef: Data) throws -> [String: Any] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecValuePersistentRef as String: persistentRef,
            kSecReturnAttributes as String: true,
        ]
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess, let attributes = result as? [String: Any] else {
            throw StoreError(status: status)
        }
        return attributes
    }

    func changePassword(url: URL, account: String, to password: String) throws {
        var query = keyAttributes(url: url)
        query[kSecAttrAccount as String] = account
        let changes: [String: Any] = [kSecValueData as String: password.data(using: .utf8)!]
        let status = SecItemUpdate(query as CFDictionary, changes as CFDictionary)
        guard status == errSecSuccess else { throw StoreError(status: status) }
    }

    /// Moves every credential of `host` to `newPort` (as after a server move).
    func movePort(host: String, from oldPort: Int, to newPort: Int) throws {
        let query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: host,
            kSecAttrPort as String: oldPort,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        ]
        let status = SecItemUpdate(query as CFDictionary, [kSecAttrPort as String: newPort] as CFDictionary)
        guard status == errSecSuccess else { throw StoreError(status: status) }
    }

    func delete(persistentRef: Data) throws {
        let status = SecItemDelete([kSecValuePersistentRef as String: persistentRef] as CFDictionary)
        guard status == errSecSuccess else { throw StoreError(status: status) }
    }

    /// Deletes every credential of `host`, on any protocol, port or path.
    func deleteAll(host: String) throws {
        var query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: host,
            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
        ]
        if let accessGroup = accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        let status = SecItemDelete(query as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw StoreError(status: status) }
    }

    /// Whether any credential exists for `host`, written as Apple's own documentation writes queries.
    func hasCredentials(host: String) -> Bool {
        let query =
            [
                kSecClass: kSecClassInternetPassword,
                kSecAttrServer: host,
                kSecAttrSynchronizable: kSecAttrSynchronizableAny,
                kSecMatchLimit: kSecMatchLimitOne,
            ] as [String: Any]
        return SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess
    }

    private func keyAttributes(url: URL) -> [String: Any] {
        var attributes: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: url.host ?? "",
            kSecAttrProtocol as String: url.scheme == "https" ? kSecAttrProtocolHTTPS : kSecAttrProtocolHTTP,
            kSecAttrPort as String: url.port ?? (url.scheme == "https" ? 443 : 80),
            kSecAttrPath as String: url.path,
            kSecAttrSynchronizable as String: synchronizable,
        ]
        if let accessGroup = accessGroup { attributes[kSecAttrAccessGroup as String] = accessGroup }
        return attributes
    }
}

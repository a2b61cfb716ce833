import FobStore
import FobTestSupport
import Foundation
import Testing

// Behaviour of the iOS-style Keychain code in this target (KeychainWrapper,
// TokenStore, InternetPasswordStore) over a temporary Fob vault. The target
// builds in Swift 5 language mode, as most iOS projects still do.
#if canImport(Security)
    import Security
#else
    import FobSecurity
#endif

@Suite(.serialized)
struct CompatBehaviourTests {
    /// Runs `body` with a fresh temporary vault behind the `SecItem…` calls.
    static func withVault<R>(_ body: (TestVault) throws -> R) throws -> R {
        let test = try TestVault()
        return try SharedSettingLock.secItemVault.withLock {
            FobKeychain.configure(vault: test.vault)
            defer { FobKeychain.reset() }
            return try body(test)
        }
    }

    // MARK: - KeychainWrapper

    @Test func wrapperStoresReadsAndRemovesValues() throws {
        try Self.withVault { (test) throws in
            let keychain = KeychainWrapper(serviceName: "com.example.app")
            #expect(keychain.string(forKey: "token") == nil)
            #expect(keychain.lastStatus == errSecItemNotFound)
            #expect(keychain.set("abc", forKey: "token"))
            #expect(keychain.set("def", forKey: "token")) // the duplicate path updates
            #expect(keychain.string(forKey: "token") == "def")
            #expect(keychain.set(42, forKey: "launches"))
            #expect(keychain.integer(forKey: "launches") == 42)
            struct Profile: Codable, Equatable {
                var name: String
                var age: Int
            }
            #expect(keychain.set(object: Profile(name: "Ana", age: 30), forKey: "profile"))
            #expect(keychain.object(of: Profile.self, forKey: "profile") == Profile(name: "Ana", age: 30))
            #expect(keychain.allKeys() == ["token", "launches", "profile"])
            #expect(keychain.hasValue(forKey: "token"))
            #expect(keychain.removeObject(forKey: "token"))
            #expect(!keychain.removeObject(forKey: "token"))
            #expect(keychain.lastStatus == errSecItemNotFound)
            #expect(keychain.removeAllKeys())
            #expect(keychain.allKeys().isEmpty)
            #expect(try test.vault.allItems().isEmpty)
        }
    }

    @Test func wrapperAccessibilityAndPersistentReference() throws {
        try Self.withVault { (_) throws in
            let keychain = KeychainWrapper(serviceName: "svc")
            #expect(keychain.set("v", forKey: "k", withAccessibility: .afterFirstUnlock))
            #expect(keychain.accessibilityOfKey("k") == .afterFirstUnlock)
            #expect(keychain.set("w", forKey: "k", withAccessibility: .whenUnlocked))
            #expect(keychain.accessibilityOfKey("k") == .whenUnlocked)
            let reference = try #require(keychain.dataRef(forKey: "k"))
            #expect(keychain.dataRef(forKey: "k") == reference)
            // The reference finds the item, and stays the same across updates.
            var result: AnyObject?
            #expect(
                SecItemCopyMatching(
                    [kSecValuePersistentRef as String: reference, kSecReturnData as String: true] as CFDictionary,
                    &result) == errSecSuccess)
            #expect(result as? Data == Data("w".utf8))
            #expect(keychain.set("x", forKey: "k"))
            #expect(keychain.dataRef(forKey: "k") == reference)
        }
    }

    @Test func wrapperSynchronizableItemsAreKeptApart() throws {
        try Self.withVault { (test) throws in
            let keychain = KeychainWrapper(serviceName: "svc")
            #expect(keychain.set("local", forKey: "k"))
            #expect(keychain.set("synced", forKey: "k", isSynchronizable: true))
            #expect(keychain.string(forKey: "k") == "local")
            #expect(keychain.string(forKey: "k", isSynchronizable: true) == "synced")
            #expect(try test.vault.allItems().map(\.synchronizable).sorted { !$0 && $1 } == [false, true])
            // A query with kSecAttrSynchronizableAny sees both; allKeys has one key.
            #expect(keychain.allKeys() == ["k"])
            var result: AnyObject?
            let any: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc",
                kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
                kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(any as CFDictionary, &result) == errSecSuccess)
            let items = try #require(result as? [[String: Any]])
            #expect(Set(items.compactMap { $0[kSecAttrSynchronizable as String] as? Bool }) == [false, true])
            #expect(keychain.removeObject(forKey: "k", isSynchronizable: true))
            #expect(keychain.string(forKey: "k") == "local")
            #expect(keychain.removeAllKeys())
            #expect(try test.vault.allItems().isEmpty)
        }
    }

    @Test func wrapperAccessGroupsAreSeparate() throws {
        try Self.withVault { (_) throws in
            let mine = KeychainWrapper(serviceName: "svc")
            let shared = KeychainWrapper(serviceName: "svc", accessGroup: "ABCDE12345.com.example.shared")
            #expect(mine.set("mine", forKey: "k"))
            #expect(shared.set("shared", forKey: "k"))
            #expect(shared.string(forKey: "k") == "shared")
            #expect(shared.allKeys() == ["k"])
            #expect(shared.removeAllKeys())
            // A query without an access group matches every group (as on a device with one app).
            #expect(mine.string(forKey: "k") == "mine")
        }
    }

    // MARK: - TokenStore

    @Test func tokenStoreRoundTripsWithAccessControl() throws {
        try Self.withVault { (test) throws in
            let store = TokenStore(service: "api.example.com")
            let token = StoredToken(
                accessToken: "eyJ.a.b", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 1_900_000_000))
            try store.save(token, account: "ana")
            #expect(try store.token(account: "ana") == token)
            var rotated = token
            rotated.refreshToken = "r2"
            try store.save(rotated, account: "ana")
            #expect(try store.token(account: "ana") == rotated)
            let stored = try test.vault.item(service: "api.example.com", account: "ana")
            #expect(stored.accessible == .afterFirstUnlock)
            #expect(stored.accessControlFlags == 0)
            #expect(stored.itemDescription == "OAuth token")

            // The access control comes back as a SecAccessControl.
            var result: AnyObject?
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api.example.com",
                kSecAttrAccount as String: "ana", kSecReturnAttributes as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrAccessControl as String] is SecAccessControl)
            #expect(attributes[kSecAttrDescription as String] as? String == "OAuth token")
        }
    }

    @Test func tokenStoreRefusesUserPresenceItCannotCheck() throws {
        try Self.withVault { (test) throws in
            let store = TokenStore(service: "api.example.com")
            let token = StoredToken(accessToken: "a", refreshToken: nil, expiresAt: Date())
            #expect(throws: TokenStoreError.keychain(errSecAuthFailed)) {
                try store.save(token, account: "ana", requireUserPresence: true)
            }
            #expect(try test.vault.allItems().isEmpty)
            let message = TokenStoreError.keychain(errSecAuthFailed).description
            #expect(message == "Keychain error -25293: The user name or passphrase you entered is not correct.")
        }
    }

    @Test func tokenStoreMatchLimitsAndDeleteAll() throws {
        try Self.withVault { (_) throws in
            let store = TokenStore(service: "api.example.com")
            for account in ["c", "a", "b"] {
                try store.save(
                    StoredToken(accessToken: account, refreshToken: nil, expiresAt: Date()), account: account)
            }
            #expect(try store.accounts(limit: 1) == ["a"])
            #expect(try store.accounts(limit: 2) == ["a", "b"])
            #expect(try store.accounts(limit: 10) == ["a", "b", "c"])
            try store.delete(account: "b")
            try store.delete(account: "b")
            #expect(try store.accounts(limit: 10) == ["a", "c"])
            try store.deleteAll()
            #expect(try store.accounts(limit: 10).isEmpty)
            #expect(try store.token(account: "a") == nil)
        }
    }

    @Test func accessControlCreationAndCFErrors() throws {
        #expect(throws: Never.self) { try TokenStore.accessControl([]) }
        // Creating with flags Fob cannot check succeeds, as on Apple platforms; storing is refused.
        #expect(throws: Never.self) { try TokenStore.accessControl([.biometryCurrentSet, .or, .devicePasscode]) }
        #expect(throws: TokenStoreError.accessControl(code: Int(errSecParam))) {
            try TokenStore.accessControl([.or, .and])
        }

        var error: Unmanaged<CFError>?
        #expect(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAlways, [], &error) == nil)
        let cfError = try #require(error?.takeRetainedValue())
        #expect(CFErrorGetCode(cfError) == Int(errSecParam))
        #expect(CFErrorGetDomain(cfError) as String == kCFErrorDomainOSStatus as String)
        #expect(
            (CFErrorCopyDescription(cfError) as String).hasPrefix(
                "One or more parameters passed to a function were not valid."))
        let swiftError: Error = cfError
        #expect((swiftError as NSError).code == Int(errSecParam))
    }

    // MARK: - InternetPasswordStore

    @Test func internetPasswordsByURLWithPersistentReferences() throws {
        try Self.withVault { (test) throws in
            let store = InternetPasswordStore()
            let login = URL(string: "https://example.com/login")!
            let reference = try store.add(url: login, account: "ana", password: "pw-ana")
            try store.add(url: login, account: "bob", password: "pw-bob")
            try store.add(url: URL(string: "https://example.com:8443/login")!, account: "ana", password: "pw-8443")
            try store.add(url: URL(string: "http://example.com/login")!, account: "ana", password: "pw-http")
            #expect(throws: InternetPasswordStore.StoreError.duplicate) {
                try store.add(url: login, account: "ana", password: "again")
            }
            // Another authentication type is another item.
            try store.add(
                url: login, account: "ana", password: "pw-basic",
                authenticationType: kSecAttrAuthenticationTypeHTTPBasic)

            let found = try store.credentials(for: login)
            #expect(found.map(\.account) == ["ana", "ana", "bob"])
            #expect(Set(found.map(\.password)) == ["pw-ana", "pw-basic", "pw-bob"])
            #expect(found.contains { $0.persistentRef == reference })
            #expect(try store.password(persistentRef: reference) == "pw-ana")

            let attributes = try store.attributes(persistentRef: reference)
            #expect(attributes[kSecAttrServer as String] as? String == "example.com")
            #expect(attributes[kSecAttrProtocol as String] as? String == kSecAttrProtocolHTTPS as String)
            #expect(attributes[kSecAttrPort as String] as? Int == 443)
            #expect(attributes[kSecAttrPath as String] as? String == "/login")
            #expect(
                attributes[kSecAttrAuthenticationType as String] as? String == kSecAttrAuthenticationTypeHTMLForm
                    as String)
            #expect(attributes[kSecAttrSecurityDomain as String] as? String == "")

            try store.changePassword(
                url: URL(string: "https://example.com:8443/login")!, account: "ana", to: "new-8443")
            #expect(
                try store.credentials(for: URL(string: "https://example.com:8443/login")!).map(\.password) == [
                    "new-8443"
                ])
            #expect(throws: InternetPasswordStore.StoreError.notFound) {
                try store.changePassword(url: URL(string: "https://example.com:9999/login")!, account: "ana", to: "x")
            }

            try store.movePort(host: "example.com", from: 8443, to: 9443)
            #expect(
                try store.credentials(for: URL(string: "https://example.com:9443/login")!).map(\.password) == [
                    "new-8443"
                ])

            // The reference survives an update and dies with its item.
            try store.changePassword(url: login, account: "ana", to: "pw-ana-2")
            #expect(try store.password(persistentRef: reference) == "pw-ana-2")
            try store.delete(persistentRef: reference)
            #expect(throws: InternetPasswordStore.StoreError.notFound) { try store.password(persistentRef: reference) }
            #expect(
                InternetPasswordStore.StoreError.notFound.message
                    == "The specified item could not be found in the keychain.")

            #expect(store.hasCredentials(host: "example.com"))
            try store.deleteAll(host: "example.com")
            #expect(!store.hasCredentials(host: "example.com"))
            #expect(try test.vault.allItems().isEmpty)
        }
    }

    @Test func synchronizableInternetPasswordsNeedTheirFlagOrAny() throws {
        try Self.withVault { (_) throws in
            let synced = InternetPasswordStore(synchronizable: true)
            let local = InternetPasswordStore()
            let url = URL(string: "https://example.org/")!
            try synced.add(url: url, account: "ana", password: "synced")
            #expect(try local.credentials(for: url).isEmpty)
            #expect(try synced.credentials(for: url).map(\.password) == ["synced"])
            try local.add(url: url, account: "ana", password: "local")
            #expect(try local.credentials(for: url).map(\.password) == ["local"])
            try local.deleteAll(host: "example.org")
            #expect(try synced.credentials(for: url).isEmpty)
        }
    }

    @Test func generatedPasswordsUseSecRandomCopyBytes() {
        let first = InternetPasswordStore.generatePassword()
        let second = InternetPasswordStore.generatePassword()
        #expect(first?.count == 20)
        #expect(first != second)
        var bytes = [UInt8](repeating: 0, count: 64)
        #expect(SecRandomCopyBytes(kSecRandomDefault, bytes.count, &bytes) == errSecSuccess)
        #expect(bytes.contains { $0 != 0 })
        #expect(SecRandomCopyBytes(kSecRandomDefault, 0, &bytes) == errSecSuccess)
        #expect(SecRandomCopyBytes(kSecRandomDefault, -1, &bytes) == errSecParam)
    }
}

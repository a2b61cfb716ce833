import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

/// Every FobSecurity test shares the process-wide vault configuration, so the
/// suite runs its tests one at a time (each on its own temporary vault), and
/// holds ``SharedSettingLock/secItemVault`` against tests of other targets.
@Suite(.serialized)
struct SecItemTests {
    /// Runs `body` with a fresh temporary vault configured for `SecItem…` calls.
    static func withVault<R>(_ body: (TestVault) throws -> R) throws -> R {
        let test = try TestVault()
        return try SharedSettingLock.secItemVault.withLock {
            FobKeychain.configure(vault: test.vault)
            defer { FobKeychain.reset() }
            return try body(test)
        }
    }

    static func genericPassword(
        _ service: String, _ account: String, _ secret: String? = nil,
        extra: [String: Any] = [:]
    ) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        if let secret { query[kSecValueData as String] = Data(secret.utf8) }
        return query.merging(extra) { _, new in new }
    }

    static func copy(_ query: [String: Any]) -> (OSStatus, AnyObject?) {
        var result: AnyObject? = "stale" as AnyObject
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result)
    }

    // MARK: - The iOS-style manager

    @Test func managerSavesReadsUpdatesAndDeletes() throws {
        try Self.withVault { _ in
            let keychain = KeychainManager(service: "com.example.app")
            #expect(try keychain.read(account: "ana") == nil)
            #expect(keychain.lastStatus == errSecItemNotFound)

            try keychain.save(Data("first".utf8), for: "ana")
            #expect(keychain.lastStatus == errSecSuccess)
            #expect(try keychain.read(account: "ana") == Data("first".utf8))
            #expect(keychain.lastStatus == errSecSuccess)

            // A second save takes the duplicate path and updates.
            try keychain.save(Data("second".utf8), for: "ana")
            #expect(keychain.lastStatus == errSecSuccess)
            #expect(try keychain.read(account: "ana") == Data("second".utf8))

            try keychain.save(Data([0, 255, 10]), for: "bob")
            #expect(try keychain.accounts() == ["ana", "bob"])
            #expect(keychain.lastStatus == errSecSuccess)

            try keychain.delete(account: "ana")
            #expect(keychain.lastStatus == errSecSuccess)
            try keychain.delete(account: "ana")
            #expect(keychain.lastStatus == errSecItemNotFound)
            #expect(try keychain.read(account: "ana") == nil)
            #expect(try keychain.read(account: "bob") == Data([0, 255, 10]))
            #expect(try keychain.accounts() == ["bob"])
        }
    }

    @Test func managerTokenConveniences() throws {
        try Self.withVault { _ in
            let keychain = KeychainManager(service: "api.example.com")
            try keychain.saveToken("eyJhbGciOiJIUzI1NiJ9.e30.sig", for: "access")
            try keychain.saveToken("refresh-ü-1", for: "refresh")
            #expect(try keychain.token(for: "access") == "eyJhbGciOiJIUzI1NiJ9.e30.sig")
            #expect(try keychain.token(for: "refresh") == "refresh-ü-1")
            try keychain.saveToken("rotated", for: "refresh")
            #expect(try keychain.token(for: "refresh") == "rotated")
            try keychain.deleteToken(for: "access")
            #expect(try keychain.token(for: "access") == nil)
            #expect(keychain.lastStatus == errSecItemNotFound)
            try keychain.deleteToken(for: "access")
            #expect(keychain.lastStatus == errSecItemNotFound)
        }
    }

    @Test func managerSeesItemsOfAnotherServiceAsAbsent() throws {
        try Self.withVault { _ in
            let mail = KeychainManager(service: "mail")
            let chat = KeychainManager(service: "chat")
            try mail.saveToken("m", for: "ana")
            #expect(try chat.token(for: "ana") == nil)
            #expect(try chat.accounts() == [])
            #expect(chat.lastStatus == errSecItemNotFound)
        }
    }

    // MARK: - SecItemAdd

    @Test func addReportsDuplicateByPrimaryKey() throws {
        try Self.withVault { _ in
            #expect(SecItemAdd(Self.genericPassword("s", "ana", "1") as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(Self.genericPassword("s", "ana", "2") as CFDictionary, nil) == errSecDuplicateItem)
            // A label is not part of the key.
            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "ana", "3", extra: [kSecAttrLabel as String: "x"]) as CFDictionary, nil)
                    == errSecDuplicateItem)
            #expect(SecItemAdd(Self.genericPassword("s", "bob", "2") as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(Self.genericPassword("t", "ana", "2") as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "ana", "4", extra: [kSecAttrAccessGroup as String: "team.group"])
                        as CFDictionary, nil) == errSecSuccess)
            // The first item is unchanged.
            let (status, result) = Self.copy(
                Self.genericPassword(
                    "s", "ana", extra: [kSecReturnData as String: true, kSecAttrAccessGroup as String: ""]))
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data("1".utf8))
        }
    }

    @Test func addWithoutDataStoresAnEmptySecret() throws {
        try Self.withVault { _ in
            #expect(SecItemAdd(Self.genericPassword("s", "ana") as CFDictionary, nil) == errSecSuccess)
            let (status, result) = Self.copy(Self.genericPassword("s", "ana", extra: [kSecReturnData as String: true]))
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data())
        }
    }

    @Test func addReturnsTheItemWhenAsked() throws {
        try Self.withVault { _ in
            var result: CFTypeRef? = "stale" as AnyObject
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, &result) == errSecSuccess)
            #expect(result == nil)

            let query = Self.genericPassword(
                "s", "b", "pw", extra: [kSecReturnAttributes as String: true, kSecReturnData as String: true])
            #expect(SecItemAdd(query as CFDictionary, &result) == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecAttrAccount as String] as? String == "b")
            #expect(attributes[kSecValueData as String] as? Data == Data("pw".utf8))

            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "c", "pc", extra: [kSecReturnData as String: true]) as CFDictionary,
                    &result) == errSecSuccess)
            #expect(result as? Data == Data("pc".utf8))
        }
    }

    @Test func legacyAnyObjectDictionariesWork() throws {
        try Self.withVault { _ in
            var query = [String: AnyObject]()
            query[kSecClass as String] = kSecClassGenericPassword as AnyObject
            query[kSecAttrService as String] = "legacy" as AnyObject
            query[kSecAttrAccount as String] = "ana" as AnyObject
            query[kSecValueData as String] = Data("old style".utf8) as AnyObject
            #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)

            query[kSecValueData as String] = nil
            query[kSecReturnData as String] = kCFBooleanTrue
            query[kSecMatchLimit as String] = kSecMatchLimitOne as AnyObject
            var dataTypeRef: AnyObject?
            let status: OSStatus = SecItemCopyMatching(query as CFDictionary, &dataTypeRef)
            #expect(status == noErr)
            #expect(dataTypeRef as? Data == Data("old style".utf8))
        }
    }

    @Test func literalDictionariesWithCFStringKeysWork() throws {
        try Self.withVault { _ in
            let add =
                [
                    kSecClass: kSecClassGenericPassword, kSecAttrAccount: "ana",
                    kSecValueData: Data("v".utf8),
                ] as CFDictionary
            #expect(SecItemAdd(add, nil) == errSecSuccess)
            var item: CFTypeRef?
            let query =
                [
                    kSecClass: kSecClassGenericPassword, kSecAttrAccount: "ana",
                    kSecReturnData: kCFBooleanTrue as Any, kSecMatchLimit: kSecMatchLimitOne,
                ] as CFDictionary
            #expect(SecItemCopyMatching(query, &item) == errSecSuccess)
            #expect(item as? Data == Data("v".utf8))
            #expect(
                SecItemDelete([kSecClass: kSecClassGenericPassword, kSecAttrAccount: "ana"] as CFDictionary)
                    == errSecSuccess)
        }
    }
}

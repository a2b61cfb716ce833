import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

extension SecItemTests {
    static func secret(_ service: String, _ account: String) -> Data? {
        let (status, result) = copy(genericPassword(service, account, extra: [kSecReturnData as String: true]))
        return status == errSecSuccess ? result as? Data : nil
    }

    static func attributes(_ service: String, _ account: String) -> [String: Any]? {
        let (status, result) = copy(genericPassword(service, account, extra: [kSecReturnAttributes as String: true]))
        return status == errSecSuccess ? result as? [String: Any] : nil
    }

    @Test func updateChangesEveryMatch() throws {
        try Self.withVault { _ in
            Self.addSample()
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s"]
            let changes: [String: Any] = [
                kSecValueData as String: Data("new".utf8), kSecAttrLabel as String: "relabelled",
            ]
            #expect(SecItemUpdate(query as CFDictionary, changes as CFDictionary) == errSecSuccess)
            for account in ["a", "b", "c"] {
                #expect(Self.secret("s", account) == Data("new".utf8))
                #expect(Self.attributes("s", account)?[kSecAttrLabel as String] as? String == "relabelled")
            }
            #expect(Self.secret("t", "a") == Data("t-a".utf8))
            #expect(Self.attributes("t", "a")?[kSecAttrLabel as String] == nil)
        }
    }

    @Test func updateMovesModificationDateOnly() throws {
        try Self.withVault { _ in
            #expect(SecItemAdd(Self.genericPassword("s", "a", "1") as CFDictionary, nil) == errSecSuccess)
            let before = try #require(Self.attributes("s", "a"))
            let created = try #require(before[kSecAttrCreationDate as String] as? Date)
            Thread.sleep(forTimeInterval: 0.01)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrComment as String: "c", kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock]
                        as CFDictionary) == errSecSuccess)
            let after = try #require(Self.attributes("s", "a"))
            #expect(after[kSecAttrCreationDate as String] as? Date == created)
            #expect(try #require(after[kSecAttrModificationDate as String] as? Date) > created)
            #expect(after[kSecAttrComment as String] as? String == "c")
            #expect(after[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
            // The secret is kept when only attributes change.
            #expect(Self.secret("s", "a") == Data("1".utf8))
        }
    }

    @Test func updateCanRenameAndReportsCollisions() throws {
        try Self.withVault { _ in
            Self.addSample()
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrAccount as String: "z"] as CFDictionary) == errSecSuccess)
            #expect(Self.secret("s", "a") == nil)
            #expect(Self.secret("s", "z") == Data("s-a".utf8))
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "z") as CFDictionary,
                    [kSecAttrAccount as String: "b"] as CFDictionary) == errSecDuplicateItem)
            #expect(Self.secret("s", "z") == Data("s-a".utf8))
            #expect(Self.secret("s", "b") == Data("s-b".utf8))
        }
    }

    @Test func updateRefusesAClassChangeButAcceptsTheSameClass() throws {
        try Self.withVault { _ in
            Self.addSample()
            let query = Self.genericPassword("s", "a")
            #expect(
                SecItemUpdate(
                    query as CFDictionary,
                    [
                        kSecClass as String: kSecClassInternetPassword,
                        kSecValueData as String: Data("x".utf8),
                    ] as CFDictionary) == errSecParam)
            #expect(Self.secret("s", "a") == Data("s-a".utf8))
            #expect(
                SecItemUpdate(
                    query as CFDictionary,
                    [
                        kSecClass as String: kSecClassGenericPassword,
                        kSecValueData as String: Data("x".utf8),
                    ] as CFDictionary) == errSecSuccess)
            #expect(Self.secret("s", "a") == Data("x".utf8))
        }
    }

    @Test func updateStatuses() throws {
        try Self.withVault { _ in
            Self.addSample()
            let data: [String: Any] = [kSecValueData as String: Data("x".utf8)]
            #expect(
                SecItemUpdate(Self.genericPassword("s", "nobody") as CFDictionary, data as CFDictionary)
                    == errSecItemNotFound)
            #expect(SecItemUpdate(Self.genericPassword("s", "a") as CFDictionary, [:] as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a", extra: [kSecReturnData as String: true]) as CFDictionary,
                    data as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a", extra: [kSecMatchLimit as String: kSecMatchLimitOne])
                        as CFDictionary, data as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a", extra: [kSecMatchLimit as String: kSecMatchLimitAll])
                        as CFDictionary, data as CFDictionary) == errSecSuccess)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary, [kSecValueData as String: "text"] as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrCreationDate as String: Date()] as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary, [kSecReturnData as String: true] as CFDictionary)
                    == errSecParam)
            #expect(
                SecItemUpdate([kSecAttrService as String: "s"] as CFDictionary, data as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary, [kSecAttrServer as String: "x"] as CFDictionary)
                    == errSecNoSuchAttr)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary, [kSecAttrPort as String: 80] as CFDictionary)
                    == errSecNoSuchAttr)
            #expect(Self.secret("s", "a") == Data("x".utf8))
            #expect(Self.secret("s", "b") == Data("s-b".utf8))
        }
    }

    @Test func updateWithALocallyMatchedAttribute() throws {
        try Self.withVault { _ in
            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "a", "1", extra: [kSecAttrComment as String: "old"]) as CFDictionary, nil)
                    == errSecSuccess)
            #expect(SecItemAdd(Self.genericPassword("s", "b", "2") as CFDictionary, nil) == errSecSuccess)
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrComment as String: "old",
            ]
            #expect(
                SecItemUpdate(query as CFDictionary, [kSecValueData as String: Data("3".utf8)] as CFDictionary)
                    == errSecSuccess)
            #expect(Self.secret("s", "a") == Data("3".utf8))
            #expect(Self.secret("s", "b") == Data("2".utf8))
            #expect(SecItemDelete(query as CFDictionary) == errSecSuccess)
            #expect(Self.secret("s", "a") == nil)
            #expect(Self.secret("s", "b") == Data("2".utf8))
            #expect(SecItemDelete(query as CFDictionary) == errSecItemNotFound)
        }
    }

    @Test func deleteRemovesEveryMatch() throws {
        try Self.withVault { test in
            Self.addSample()
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s"] as CFDictionary)
                    == errSecSuccess)
            let left = try test.vault.allItems().map { "\($0.service)/\($0.account)" }
            #expect(left == ["t/a"])
            #expect(
                SecItemDelete(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s"] as CFDictionary)
                    == errSecItemNotFound)
            // A class-wide delete, as logout code does.
            #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecSuccess)
            let none = try test.vault.allItems()
            #expect(none.isEmpty)
            #expect(
                SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecItemNotFound)
        }
    }

    @Test func deleteWithTheAddDictionaryThenAdd() throws {
        // A common iOS pattern: delete with the add dictionary (secret included), then add.
        try Self.withVault { _ in
            for secret in ["one", "two"] {
                let query = Self.genericPassword("s", "a", secret)
                let deleted = SecItemDelete(query as CFDictionary)
                #expect(deleted == (secret == "one" ? errSecItemNotFound : errSecSuccess))
                #expect(SecItemAdd(query as CFDictionary, nil) == errSecSuccess)
                #expect(Self.secret("s", "a") == Data(secret.utf8))
            }
        }
    }

    @Test func deleteStatuses() throws {
        try Self.withVault { _ in
            Self.addSample()
            #expect(
                SecItemDelete(
                    Self.genericPassword("s", "a", extra: [kSecMatchLimit as String: kSecMatchLimitOne]) as CFDictionary
                ) == errSecParam)
            #expect(
                SecItemDelete(Self.genericPassword("s", "a", extra: [kSecReturnData as String: true]) as CFDictionary)
                    == errSecParam)
            #expect(SecItemDelete([kSecAttrService as String: "s"] as CFDictionary) == errSecParam)
            #expect(
                SecItemDelete(
                    Self.genericPassword("s", "a", extra: [kSecMatchLimit as String: kSecMatchLimitAll]) as CFDictionary
                ) == errSecSuccess)
            #expect(Self.secret("s", "a") == nil)
            #expect(Self.secret("s", "b") == Data("s-b".utf8))
        }
    }
}

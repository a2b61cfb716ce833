import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

extension SecItemTests {
    /// Adds three items of service "s" (accounts a, b, c) and one of "t".
    static func addSample() {
        for (service, account) in [("s", "b"), ("s", "a"), ("t", "a"), ("s", "c")] {
            let status = SecItemAdd(genericPassword(service, account, "\(service)-\(account)") as CFDictionary, nil)
            #expect(status == errSecSuccess)
        }
    }

    @Test func copyWithoutReturnKeyReturnsNothing() throws {
        try Self.withVault { _ in
            Self.addSample()
            let (status, result) = Self.copy(Self.genericPassword("s", "a"))
            #expect(status == errSecSuccess)
            #expect(result == nil)
            #expect(SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemCopyMatching(Self.genericPassword("s", "zz") as CFDictionary, nil) == errSecItemNotFound)
        }
    }

    @Test func copyReturnsDataForLimitOne() throws {
        try Self.withVault { _ in
            Self.addSample()
            // The default limit is one: the first match by service then account.
            let (status, result) = Self.copy([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "s",
                kSecReturnData as String: true,
            ])
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data("s-a".utf8))
        }
    }

    @Test func copyReturnsAnArrayOfDataForLimitAll() throws {
        try Self.withVault { _ in
            Self.addSample()
            let (status, result) = Self.copy([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "s",
                kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            #expect(status == errSecSuccess)
            #expect(result as? [Data] == ["s-a", "s-b", "s-c"].map { Data($0.utf8) })
        }
    }

    @Test func copyReturnsAttributesWithAppleKeysAndTypes() throws {
        try Self.withVault { _ in
            let before = Date()
            let add = Self.genericPassword(
                "svc", "ana", "pw",
                extra: [
                    kSecAttrLabel as String: "Mail",
                    kSecAttrComment as String: "work account",
                    kSecAttrGeneric as String: Data([1, 2, 3]),
                    kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
                ])
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            let (status, result) = Self.copy(
                Self.genericPassword("svc", "ana", extra: [kSecReturnAttributes as String: kCFBooleanTrue!]))
            #expect(status == errSecSuccess)
            let attributes = try #require(result as? [String: Any])
            #expect(attributes[kSecClass as String] as? String == kSecClassGenericPassword as String)
            #expect(attributes[kSecAttrService as String] as? String == "svc")
            #expect(attributes[kSecAttrAccount as String] as? String == "ana")
            #expect(attributes[kSecAttrAccessGroup as String] as? String == "")
            #expect(attributes[kSecAttrLabel as String] as? String == "Mail")
            #expect(attributes[kSecAttrComment as String] as? String == "work account")
            #expect(attributes[kSecAttrGeneric as String] as? Data == Data([1, 2, 3]))
            #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock as String)
            let created = try #require(attributes[kSecAttrCreationDate as String] as? Date)
            let modified = try #require(attributes[kSecAttrModificationDate as String] as? Date)
            #expect(created.timeIntervalSince(before) > -1 && created.timeIntervalSinceNow < 1)
            #expect(modified == created)
            // Without kSecReturnData the secret is not in the dictionary.
            #expect(attributes[kSecValueData as String] == nil)
        }
    }

    @Test func copyReturnsAttributesAndDataTogether() throws {
        try Self.withVault { _ in
            Self.addSample()
            let (status, result) = Self.copy(
                Self.genericPassword(
                    "s", "b",
                    extra: [
                        kSecReturnAttributes as String: true, kSecReturnData as String: true,
                        kSecMatchLimit as String: kSecMatchLimitOne,
                    ]))
            #expect(status == errSecSuccess)
            let item = try #require(result as? [String: Any])
            #expect(item[kSecAttrAccount as String] as? String == "b")
            #expect(item[kSecValueData as String] as? Data == Data("s-b".utf8))
            // Items without a label or comment have no such keys.
            #expect(item[kSecAttrLabel as String] == nil)
            #expect(item[kSecAttrComment as String] == nil)
        }
    }

    @Test func copyReturnsAnArrayOfDictionariesForLimitAll() throws {
        try Self.withVault { _ in
            Self.addSample()
            let (status, result) = Self.copy([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrAccount as String: "a",
                kSecReturnAttributes as String: true,
                kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitAll,
            ])
            #expect(status == errSecSuccess)
            let items = try #require(result as? [[String: Any]])
            #expect(items.map { $0[kSecAttrService as String] as? String } == ["s", "t"])
            #expect(items.map { $0[kSecValueData as String] as? Data } == [Data("s-a".utf8), Data("t-a".utf8)])
        }
    }

    @Test func copyTakesANumericLimit() throws {
        try Self.withVault { _ in
            Self.addSample()
            var (status, result) = Self.copy([
                kSecClass as String: kSecClassGenericPassword,
                kSecReturnData as String: true, kSecMatchLimit as String: 2,
            ])
            #expect(status == errSecSuccess)
            #expect(result as? [Data] == [Data("s-a".utf8), Data("s-b".utf8)])
            (status, result) = Self.copy([
                kSecClass as String: kSecClassGenericPassword,
                kSecReturnData as String: true, kSecMatchLimit as String: NSNumber(value: 1),
            ])
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data("s-a".utf8))
            for bad: Any in [0, -3, "m_LimitSome", true, 1.5] {
                (status, result) = Self.copy([
                    kSecClass as String: kSecClassGenericPassword,
                    kSecReturnData as String: true, kSecMatchLimit as String: bad,
                ])
                #expect(status == errSecParam, "limit \(bad)")
                #expect(result == nil)
            }
        }
    }

    @Test func copyNotFoundClearsTheResult() throws {
        try Self.withVault { _ in
            Self.addSample()
            let (status, result) = Self.copy(Self.genericPassword("nope", "a", extra: [kSecReturnData as String: true]))
            #expect(status == errSecItemNotFound)
            #expect(result == nil)
        }
    }

    @Test func copyMatchesEveryGivenAttribute() throws {
        try Self.withVault { _ in
            #expect(
                SecItemAdd(
                    Self.genericPassword(
                        "s", "a", "1",
                        extra: [
                            kSecAttrLabel as String: "L", kSecAttrComment as String: "C",
                            kSecAttrGeneric as String: Data([9]),
                        ]) as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemAdd(
                    Self.genericPassword(
                        "s", "b", "2", extra: [kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock])
                        as CFDictionary, nil) == errSecSuccess)
            func accounts(_ extra: [String: Any]) -> [String] {
                var query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, kSecReturnAttributes as String: true,
                    kSecMatchLimit as String: kSecMatchLimitAll,
                ]
                query.merge(extra) { _, new in new }
                var result: AnyObject?
                guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return [] }
                return (result as? [[String: Any]] ?? []).compactMap { $0[kSecAttrAccount as String] as? String }
            }
            #expect(accounts([:]) == ["a", "b"])
            #expect(accounts([kSecAttrLabel as String: "L"]) == ["a"])
            #expect(accounts([kSecAttrLabel as String: "l"]) == [])
            #expect(accounts([kSecAttrComment as String: "C"]) == ["a"])
            #expect(accounts([kSecAttrComment as String: "C", kSecAttrAccount as String: "b"]) == [])
            #expect(accounts([kSecAttrGeneric as String: Data([9])]) == ["a"])
            #expect(accounts([kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock]) == ["b"])
            #expect(accounts([kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked]) == ["a"])
            #expect(accounts([kSecAttrAccessGroup as String: ""]) == ["a", "b"])
            #expect(accounts([kSecAttrAccessGroup as String: "other"]) == [])

            var result: AnyObject?
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword("s", "a", extra: [kSecReturnAttributes as String: true]) as CFDictionary,
                    &result) == errSecSuccess)
            let created = try #require((result as? [String: Any])?[kSecAttrCreationDate as String] as? Date)
            #expect(accounts([kSecAttrCreationDate as String: created]) == ["a"])
            #expect(accounts([kSecAttrModificationDate as String: created.addingTimeInterval(-3600)]) == [])
        }
    }

    @Test func copyIgnoresTheSecretInAQuery() throws {
        try Self.withVault { _ in
            #expect(SecItemAdd(Self.genericPassword("s", "a", "right") as CFDictionary, nil) == errSecSuccess)
            let (status, result) = Self.copy(
                Self.genericPassword("s", "a", "wrong", extra: [kSecReturnData as String: true]))
            #expect(status == errSecSuccess)
            #expect(result as? Data == Data("right".utf8))
        }
    }
}

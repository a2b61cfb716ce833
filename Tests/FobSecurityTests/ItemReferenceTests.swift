import FobStore
import Foundation
import Testing

@testable import FobSecurity

extension SecItemTests {
    /// `kSecReturnRef` answered `errSecUnimplemented`, so a query asking for
    /// data, attributes, a persistent reference and a reference at once
    /// failed. It now returns an opaque `SecKeychainItem` (alone, or under
    /// `v_Ref`) that `kSecValueRef` takes in later copy, update and delete
    /// queries, for generic and internet passwords.
    @Test func returnRefGivesAReferenceThatValueRefTakesLater() throws {
        try Self.withVault { _ in
            var result: AnyObject?
            let addAna = Self.genericPassword("svc", "ana", "s1", extra: [kSecReturnRef as String: true])
            #expect(SecItemAdd(addAna as CFDictionary, &result) == errSecSuccess)
            let added = try #require(result as? SecKeychainItem)
            #expect(SecItemAdd(Self.genericPassword("svc", "bo", "s2") as CFDictionary, nil) == errSecSuccess)

            result = nil
            let refOnly = Self.genericPassword("svc", "ana", extra: [kSecReturnRef as String: true])
            #expect(SecItemCopyMatching(refOnly as CFDictionary, &result) == errSecSuccess)
            let ref = try #require(result as? SecKeychainItem)
            #expect(ref == added)

            result = nil
            let everything = Self.genericPassword(
                "svc", "ana",
                extra: [
                    kSecReturnRef as String: true, kSecReturnData as String: true,
                    kSecReturnAttributes as String: true, kSecReturnPersistentRef as String: true,
                ])
            #expect(SecItemCopyMatching(everything as CFDictionary, &result) == errSecSuccess)
            let all = try #require(result as? [String: Any])
            #expect(all[kSecValueRef as String] as? SecKeychainItem == ref)
            #expect(all[kSecValueData as String] as? Data == Data("s1".utf8))
            #expect((all[kSecValuePersistentRef as String] as? Data)?.count == 20)
            #expect(all[kSecAttrAccount as String] as? String == "ana")

            // The reference finds its item, with or without kSecClass.
            result = nil
            let byRef: [String: Any] = [kSecValueRef as String: ref, kSecReturnData as String: true]
            #expect(SecItemCopyMatching(byRef as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("s1".utf8))
            let update: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: ref]
            let change: [String: Any] = [kSecValueData as String: Data("s3".utf8)]
            #expect(SecItemUpdate(update as CFDictionary, change as CFDictionary) == errSecSuccess)
            result = nil
            #expect(SecItemCopyMatching(byRef as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("s3".utf8))
            // A reference and a persistent reference of different items match nothing.
            let other = try #require(
                {
                    var r: AnyObject?
                    let q = Self.genericPassword("svc", "bo", extra: [kSecReturnPersistentRef as String: true])
                    _ = SecItemCopyMatching(q as CFDictionary, &r)
                    return r as? Data
                }())
            let both: [String: Any] = [kSecValueRef as String: ref, kSecValuePersistentRef as String: other]
            #expect(SecItemCopyMatching(both as CFDictionary, nil) == errSecItemNotFound)
            // Delete by reference removes that item only; then it finds nothing.
            #expect(SecItemDelete([kSecValueRef as String: ref] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byRef as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemCopyMatching(Self.genericPassword("svc", "bo") as CFDictionary, nil) == errSecSuccess)

            // Internet passwords too; a reference of another class finds nothing.
            let internet: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                kSecAttrAccount as String: "ana", kSecValueData as String: Data("pw".utf8),
                kSecReturnRef as String: true,
            ]
            result = nil
            #expect(SecItemAdd(internet as CFDictionary, &result) == errSecSuccess)
            let inet = try #require(result as? SecKeychainItem)
            #expect(inet != ref)
            let wrongClass: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: inet,
            ]
            #expect(SecItemCopyMatching(wrongClass as CFDictionary, nil) == errSecItemNotFound)
            result = nil
            let inetQuery: [String: Any] = [kSecValueRef as String: inet, kSecReturnAttributes as String: true]
            #expect(SecItemCopyMatching(inetQuery as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrServer as String] as? String == "example.com")
        }
    }
}

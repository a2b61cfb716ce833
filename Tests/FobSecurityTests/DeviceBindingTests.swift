import FobStore
import Foundation
import Testing

@testable import FobSecurity

extension SecItemTests {
    /// The `…ThisDeviceOnly` accessibility values came back as their plain
    /// counterparts. The value given is now stored and returned, a query
    /// by it matches it (and not the plain value), and an update changes it.
    @Test(arguments: [
        (kSecAttrAccessibleWhenUnlockedThisDeviceOnly, Accessibility.whenUnlocked),
        (kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, .afterFirstUnlock),
        (kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, .whenUnlocked),
        (kSecAttrAccessibleWhenUnlocked, .whenUnlocked),
        (kSecAttrAccessibleAfterFirstUnlock, .afterFirstUnlock),
    ])
    func accessibleValuesComeBackAsGiven(value: String, stored: Accessibility) throws {
        try Self.withVault { test in
            let add = Self.genericPassword("svc", "ana", "pw", extra: [kSecAttrAccessible as String: value])
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var result: AnyObject?
            let copy = Self.genericPassword("svc", "ana", extra: [kSecReturnAttributes as String: true])
            #expect(SecItemCopyMatching(copy as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccessible as String] as? String == value)
            // The class decides when it can be read; the record keeps the value.
            let item = try test.vault.item(service: "svc", account: "ana")
            #expect(item.accessible == stored)
            let same = Self.genericPassword("svc", "ana", extra: [kSecAttrAccessible as String: value])
            #expect(SecItemCopyMatching(same as CFDictionary, nil) == errSecSuccess)
            let other =
                value == kSecAttrAccessibleWhenUnlocked
                ? kSecAttrAccessibleWhenUnlockedThisDeviceOnly : kSecAttrAccessibleWhenUnlocked
            let plain = Self.genericPassword("svc", "ana", extra: [kSecAttrAccessible as String: other])
            #expect(SecItemCopyMatching(plain as CFDictionary, nil) == errSecItemNotFound)
            // An update to another value is returned as that one.
            let change: [String: Any] = [kSecAttrAccessible as String: other]
            #expect(
                SecItemUpdate(Self.genericPassword("svc", "ana") as CFDictionary, change as CFDictionary)
                    == errSecSuccess)
            result = nil
            #expect(SecItemCopyMatching(copy as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccessible as String] as? String == other)
        }
    }
}

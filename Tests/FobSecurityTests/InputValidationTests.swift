import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

extension SecItemTests {
    /// The status of adding, finding and deleting with `extra` merged into a valid dictionary.
    static func statuses(_ extra: [String: Any], service: String = "v") -> (
        add: OSStatus, copy: OSStatus, delete: OSStatus
    ) {
        let add = SecItemAdd(genericPassword(service, "a", "x", extra: extra) as CFDictionary, nil)
        var result: AnyObject?
        let copy = SecItemCopyMatching(genericPassword(service, "a", extra: extra) as CFDictionary, &result)
        let delete = SecItemDelete(genericPassword(service, "a", extra: extra) as CFDictionary)
        return (add, copy, delete)
    }

    @Test func unknownAndIllTypedKeysAreParamErrors() throws {
        try Self.withVault { test in
            let optionalAccount: String? = nil
            let cases: [(String, [String: Any])] = [
                ("unknown key", ["x_Unknown": "value"]),
                ("unknown 4-char key", ["zzzz": "value"]),
                ("account as Int", [kSecAttrAccount as String: 42]),
                ("service as Data", [kSecAttrService as String: Data("s".utf8)]),
                ("label as Bool", [kSecAttrLabel as String: true]),
                ("generic as String", [kSecAttrGeneric as String: "text"]),
                ("secret as String", [kSecValueData as String: "password"]),
                ("secret as bytes", [kSecValueData as String: [UInt8]([1, 2])]),
                ("nil value", [kSecAttrAccount as String: optionalAccount as Any]),
                ("unknown accessibility", [kSecAttrAccessible as String: "zz"]),
                ("accessible always", [kSecAttrAccessible as String: kSecAttrAccessibleAlways]),
                (
                    "accessible always this device",
                    [kSecAttrAccessible as String: kSecAttrAccessibleAlwaysThisDeviceOnly]
                ),
                ("return data as String", [kSecReturnData as String: "yes"]),
                ("date as String", [kSecAttrCreationDate as String: "2024-01-01"]),
                ("auth UI value", [kSecUseAuthenticationUI as String: "sometimes"]),
            ]
            for (name, extra) in cases {
                let got = Self.statuses(extra)
                #expect(got.add == errSecParam, "add: \(name)")
                #expect(got.copy == errSecParam, "copy: \(name)")
                #expect(got.delete == errSecParam, "delete: \(name)")
            }
            let stored = try test.vault.allItems()
            #expect(stored.isEmpty)
        }
    }

    @Test func classIsRequiredAndChecked() throws {
        try Self.withVault { _ in
            let noClass: [String: Any] = [kSecAttrAccount as String: "a", kSecValueData as String: Data("x".utf8)]
            #expect(SecItemAdd(noClass as CFDictionary, nil) == errSecParam)
            #expect(SecItemCopyMatching(noClass as CFDictionary, nil) == errSecParam)
            #expect(SecItemDelete(noClass as CFDictionary) == errSecParam)
            for bad: Any in ["gen", 1, Data("genp".utf8)] {
                let query: [String: Any] = [kSecClass as String: bad, kSecAttrAccount as String: "a"]
                #expect(SecItemAdd(query as CFDictionary, nil) == errSecParam)
                #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecParam)
            }
        }
    }

    @Test func unsupportedFeaturesAreRefused() throws {
        try Self.withVault { test in
            // An item reference (kSecValueRef) is for queries, and must be one.
            var result: AnyObject?
            #expect(Self.statuses([kSecValueRef as String: Data()]).add == errSecParam)
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword("v", "a", extra: [kSecValueRef as String: Data()]) as CFDictionary, &result)
                    == errSecParam)
            // A persistent reference is for queries, and must be one.
            #expect(Self.statuses([kSecValuePersistentRef as String: Data()]).copy == errSecParam)
            #expect(Self.statuses([kSecValuePersistentRef as String: Data()]).add == errSecParam)
            #expect(Self.statuses([kSecValuePersistentRef as String: "genp"]).copy == errSecParam)
            // Internet-password attributes on a generic password.
            for (key, value) in [
                (kSecAttrPort, 443 as Any), (kSecAttrProtocol, kSecAttrProtocolHTTPS as Any),
                (kSecAttrPath, "/" as Any),
                (kSecAttrSecurityDomain, "d" as Any),
                (kSecAttrAuthenticationType, kSecAttrAuthenticationTypeDefault as Any),
                (kSecAttrServer, "example.com" as Any),
            ] {
                let got = Self.statuses([key as String: value])
                #expect(got.add == errSecNoSuchAttr, "\(key)")
                #expect(got.copy == errSecNoSuchAttr, "\(key)")
            }
            // Values of the wrong type.
            for (key, value) in [
                (kSecAttrAccessControl, "x" as Any), (kSecAttrPort, "443" as Any), (kSecAttrType, true as Any),
                (kSecAttrIsInvisible, "yes" as Any), (kSecAttrCreator, "aCrt" as Any),
            ] {
                #expect(Self.statuses([key as String: value]).add == errSecParam, "\(key)")
            }
            // Certificates, keys and identities: none exist, none can be added.
            for itemClass in [kSecClassCertificate, kSecClassKey, kSecClassIdentity] {
                let query: [String: Any] = [kSecClass as String: itemClass, kSecValueData as String: Data([1])]
                #expect(SecItemAdd(query as CFDictionary, nil) == errSecUnimplemented)
                #expect(SecItemCopyMatching(query as CFDictionary, nil) == errSecItemNotFound)
                #expect(SecItemDelete([kSecClass as String: itemClass] as CFDictionary) == errSecItemNotFound)
                #expect(
                    SecItemUpdate(
                        [kSecClass as String: itemClass] as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary
                    ) == errSecItemNotFound)
            }
            // Dates are the store's to set.
            #expect(
                SecItemAdd(
                    Self.genericPassword("v", "a", "x", extra: [kSecAttrCreationDate as String: Date()])
                        as CFDictionary, nil) == errSecParam)
            // kSecMatchLimit is for finding.
            #expect(
                SecItemAdd(
                    Self.genericPassword("v", "a", "x", extra: [kSecMatchLimit as String: kSecMatchLimitOne])
                        as CFDictionary, nil) == errSecParam)
            let stored = try test.vault.allItems()
            #expect(stored.isEmpty)
        }
    }

    @Test func acceptedAndIgnoredKeys() throws {
        try Self.withVault { _ in
            let ignored: [String: Any] = [
                kSecAttrSynchronizable as String: false,
                kSecUseDataProtectionKeychain as String: true,
                kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail,
                kSecUseOperationPrompt as String: "Unlock to continue",
                kSecReturnRef as String: kCFBooleanFalse!,
            ]
            #expect(
                SecItemAdd(Self.genericPassword("v", "a", "x", extra: ignored) as CFDictionary, nil) == errSecSuccess)
            var query = Self.genericPassword("v", "a", extra: ignored)
            query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
            query[kSecReturnData as String] = NSNumber(value: true)
            var result: AnyObject?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("x".utf8))
            // kSecAttrSynchronizableAny is a query value only.
            #expect(
                SecItemAdd(
                    Self.genericPassword(
                        "v", "b", "x", extra: [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny])
                        as CFDictionary, nil) == errSecParam)
        }
    }

    @Test func accessibilityValuesMapToTheStore() throws {
        try Self.withVault { test in
            let mapping: [(String, String, Accessibility)] = [
                (kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleWhenUnlocked, .whenUnlocked),
                (kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAfterFirstUnlock, .afterFirstUnlock),
                // …ThisDeviceOnly values come back as given; the class decides the rest.
                (
                    kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                    .whenUnlocked
                ),
                (
                    kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
                    .afterFirstUnlock
                ),
                (
                    kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly,
                    .whenUnlocked
                ),
            ]
            for (index, (given, returned, stored)) in mapping.enumerated() {
                let account = "acct\(index)"
                #expect(
                    SecItemAdd(
                        Self.genericPassword("acc", account, "x", extra: [kSecAttrAccessible as String: given])
                            as CFDictionary, nil) == errSecSuccess)
                #expect(Self.attributes("acc", account)?[kSecAttrAccessible as String] as? String == returned)
                let item = try test.vault.item(service: "acc", account: account)
                #expect(item.accessible == stored)
            }
            // The default is "when unlocked".
            #expect(SecItemAdd(Self.genericPassword("acc", "default", "x") as CFDictionary, nil) == errSecSuccess)
            #expect(
                Self.attributes("acc", "default")?[kSecAttrAccessible as String] as? String
                    == kSecAttrAccessibleWhenUnlocked as String)
        }
    }

    @Test func internetPasswordsUseTheServerAttribute() throws {
        try Self.withVault { test in
            let inet: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword,
                kSecAttrServer as String: "example.com",
                kSecAttrAccount as String: "ana",
                kSecValueData as String: Data("web".utf8),
            ]
            #expect(SecItemAdd(inet as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(inet as CFDictionary, nil) == errSecDuplicateItem)
            // A generic password with the same names is another item.
            #expect(SecItemAdd(Self.genericPassword("example.com", "ana", "app") as CFDictionary, nil) == errSecSuccess)

            var result: AnyObject?
            let query: [String: Any] = [
                kSecClass as String: kSecClassInternetPassword,
                kSecAttrServer as String: "example.com",
                kSecReturnAttributes as String: true,
                kSecReturnData as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            let item = try #require(result as? [String: Any])
            #expect(item[kSecClass as String] as? String == kSecClassInternetPassword as String)
            #expect(item[kSecAttrServer as String] as? String == "example.com")
            #expect(item[kSecAttrService as String] == nil)
            #expect(item[kSecValueData as String] as? Data == Data("web".utf8))
            #expect(Self.secret("example.com", "ana") == Data("app".utf8))

            let stored = try test.vault.items(matching: ItemQuery(itemClass: .internetPassword))
            #expect(stored.map(\.service) == ["example.com"])
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassInternetPassword, kSecAttrService as String: "example.com"]
                        as CFDictionary, nil) == errSecNoSuchAttr)
            #expect(SecItemDelete([kSecClass as String: kSecClassInternetPassword] as CFDictionary) == errSecSuccess)
            #expect(Self.secret("example.com", "ana") == Data("app".utf8))
        }
    }

    @Test func oversizedSecretIsAParamError() throws {
        try Self.withVault { _ in
            let big = Data(count: Item.maxSecretBytes + 1)
            #expect(
                SecItemAdd(Self.genericPassword("v", "a", extra: [kSecValueData as String: big]) as CFDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemAdd(
                    Self.genericPassword("v", "a", extra: [kSecValueData as String: Data(count: Item.maxSecretBytes)])
                        as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("v", "a") as CFDictionary, [kSecValueData as String: big] as CFDictionary)
                    == errSecParam)
        }
    }

    @Test func keyOrderDoesNotChangeTheStatus() throws {
        // Two faults of different kinds: the same status every time, whatever the hashing order.
        try Self.withVault { _ in
            var seen = Set<OSStatus>()
            for index in 0..<20 {
                var query = Self.genericPassword("v", "a\(index)", "x")
                query[kSecAttrDescription as String] = "d"
                query["bogus\(index)"] = 1
                seen.insert(SecItemAdd(query as CFDictionary, nil))
            }
            #expect(seen.count == 1)
        }
    }
}

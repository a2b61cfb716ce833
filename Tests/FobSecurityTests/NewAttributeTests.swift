import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

/// Internet passwords, the remaining attributes, synchronizable items,
/// persistent references and access control through the SecItem calls.
extension SecItemTests {
    static func internetPassword(
        _ server: String = "example.com", _ account: String = "ana", _ secret: String? = nil,
        extra: [String: Any] = [:]
    ) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassInternetPassword,
            kSecAttrServer as String: server,
            kSecAttrAccount as String: account,
        ]
        if let secret { query[kSecValueData as String] = Data(secret.utf8) }
        return query.merging(extra) { _, new in new }
    }

    // MARK: - Internet passwords

    @Test func internetPrimaryKeyIsAppleWhole() throws {
        try Self.withVault { (test) throws in
            let base: [String: Any] = [
                kSecAttrProtocol as String: kSecAttrProtocolHTTPS, kSecAttrPort as String: 443,
                kSecAttrPath as String: "/", kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeDefault,
                kSecAttrSecurityDomain as String: "realm",
            ]
            #expect(
                SecItemAdd(Self.internetPassword("example.com", "ana", "1", extra: base) as CFDictionary, nil)
                    == errSecSuccess)
            #expect(
                SecItemAdd(Self.internetPassword("example.com", "ana", "1", extra: base) as CFDictionary, nil)
                    == errSecDuplicateItem)
            // Changing any one attribute of the key makes another item.
            let variants: [(String, Any)] = [
                (kSecAttrProtocol as String, kSecAttrProtocolHTTP), (kSecAttrPort as String, NSNumber(value: 8443)),
                (kSecAttrPath as String, "/admin"),
                (kSecAttrAuthenticationType as String, kSecAttrAuthenticationTypeHTTPBasic),
                (kSecAttrSecurityDomain as String, "other"), (kSecAttrAccessGroup as String, "team"),
                (kSecAttrSynchronizable as String, true),
            ]
            for (key, value) in variants {
                var attributes = base
                attributes[key] = value
                #expect(
                    SecItemAdd(Self.internetPassword("example.com", "ana", key, extra: attributes) as CFDictionary, nil)
                        == errSecSuccess, "\(key)")
            }
            // Label, comment and the other attributes are not part of the key.
            var labelled = base
            labelled[kSecAttrLabel as String] = "x"
            #expect(
                SecItemAdd(Self.internetPassword("example.com", "ana", "2", extra: labelled) as CFDictionary, nil)
                    == errSecDuplicateItem)
            #expect(try test.vault.allItems().count == 8)

            // Partial queries match on what they give.
            var result: AnyObject?
            var query = Self.internetPassword(
                "example.com", "ana",
                extra: [
                    kSecAttrPort as String: 443, kSecMatchLimit as String: kSecMatchLimitAll,
                    kSecReturnData as String: true,
                ])
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [Data])?.count == 6)
            query[kSecAttrPath as String] = "/admin"
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? [Data] == [Data(kSecAttrPath.utf8)])
            // Port range and type.
            #expect(
                SecItemAdd(
                    Self.internetPassword("p", "a", "x", extra: [kSecAttrPort as String: 70_000]) as CFDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemAdd(
                    Self.internetPassword("p", "a", "x", extra: [kSecAttrPort as String: -1]) as CFDictionary, nil)
                    == errSecParam)
            #expect(
                SecItemAdd(
                    Self.internetPassword("p", "a", "x", extra: [kSecAttrPort as String: true]) as CFDictionary, nil)
                    == errSecParam)
        }
    }

    @Test func internetAttributesComeBackWithApplesTypes() throws {
        try Self.withVault { (_) throws in
            #expect(SecItemAdd(Self.internetPassword("example.com", "ana", "pw") as CFDictionary, nil) == errSecSuccess)
            var result: AnyObject?
            #expect(
                SecItemCopyMatching(
                    Self.internetPassword(extra: [kSecReturnAttributes as String: true]) as CFDictionary, &result)
                    == errSecSuccess)
            let bare = try #require(result as? [String: Any])
            #expect(bare[kSecAttrPort as String] as? Int == 0)
            #expect(bare[kSecAttrPath as String] as? String == "")
            #expect(bare[kSecAttrSecurityDomain as String] as? String == "")
            #expect(bare[kSecAttrProtocol as String] == nil)
            #expect(bare[kSecAttrSynchronizable as String] as? Bool == false)
            // A generic password has none of them.
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, nil) == errSecSuccess)
            let generic = try #require(Self.attributes("s", "a"))
            #expect(generic[kSecAttrPort as String] == nil && generic[kSecAttrPath as String] == nil)
        }
    }

    // MARK: - Description, type, creator, invisible, negative

    @Test func remainingAttributesRoundTripMatchAndUpdate() throws {
        try Self.withVault { (test) throws in
            let extra: [String: Any] = [
                kSecAttrDescription as String: "application password",
                kSecAttrType as String: NSNumber(value: 0x6170_706C as UInt32),
                kSecAttrCreator as String: 0x6143_7274,
                kSecAttrIsInvisible as String: true,
                kSecAttrIsNegative as String: kCFBooleanTrue!,
            ]
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x", extra: extra) as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(Self.genericPassword("s", "b", "y") as CFDictionary, nil) == errSecSuccess)
            let attributes = try #require(Self.attributes("s", "a"))
            #expect(attributes[kSecAttrDescription as String] as? String == "application password")
            #expect((attributes[kSecAttrType as String] as? NSNumber)?.uint32Value == 0x6170_706C)
            #expect((attributes[kSecAttrCreator as String] as? NSNumber)?.uint32Value == 0x6143_7274)
            #expect(attributes[kSecAttrIsInvisible as String] as? Bool == true)
            #expect(attributes[kSecAttrIsNegative as String] as? Bool == true)
            let stored = try test.vault.item(service: "s", account: "a")
            #expect(
                stored.itemDescription == "application password" && stored.itemType == 0x6170_706C && stored.isInvisible
            )

            // Each matches.
            for (key, value) in extra {
                var result: AnyObject?
                let query: [String: Any] = [
                    kSecClass as String: kSecClassGenericPassword, key: value,
                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true,
                ]
                #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, "\(key)")
                #expect(
                    (result as? [[String: Any]])?.compactMap { $0[kSecAttrAccount as String] as? String } == ["a"],
                    "\(key)")
            }
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrIsInvisible as String: false,
                        kSecAttrAccount as String: "a",
                    ] as CFDictionary, nil) == errSecItemNotFound)
            // Update sets them, on every match.
            #expect(
                SecItemUpdate(
                    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s"] as CFDictionary,
                    [kSecAttrDescription as String: "changed", kSecAttrIsInvisible as String: false] as CFDictionary)
                    == errSecSuccess)
            #expect(try test.vault.allItems().map(\.itemDescription) == ["changed", "changed"])
            #expect(try test.vault.allItems().map(\.isInvisible) == [false, false])
        }
    }

    // MARK: - Synchronizable

    @Test func synchronizableItemsAreKeptAndMatchedAsApplesKeychainDoes() throws {
        try Self.withVault { (test) throws in
            let synced = [kSecAttrSynchronizable as String: true]
            #expect(
                SecItemAdd(Self.genericPassword("s", "a", "synced", extra: synced) as CFDictionary, nil)
                    == errSecSuccess)
            #expect(try test.vault.item(service: "s", account: "a").synchronizable)
            // Without kSecAttrSynchronizable a query sees only items stored with false.
            #expect(SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemDelete(Self.genericPassword("s", "a") as CFDictionary) == errSecItemNotFound)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary)
                    == errSecItemNotFound)
            // A local item with the same names is another item.
            #expect(SecItemAdd(Self.genericPassword("s", "a", "local") as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemAdd(Self.genericPassword("s", "a", "again", extra: synced) as CFDictionary, nil)
                    == errSecDuplicateItem)
            #expect(Self.secret("s", "a") == Data("local".utf8))
            var result: AnyObject?
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword(
                        "s", "a", extra: [kSecAttrSynchronizable as String: true, kSecReturnData as String: true])
                        as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("synced".utf8))
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword(
                        "s", "a",
                        extra: [
                            kSecAttrSynchronizable as String: kSecAttrSynchronizableAny,
                            kSecMatchLimit as String: kSecMatchLimitAll,
                            kSecReturnData as String: true,
                        ]) as CFDictionary, &result) == errSecSuccess)
            #expect(Set(result as? [Data] ?? []) == [Data("synced".utf8), Data("local".utf8)])
            // Any is a query value only; update may move an item between the two.
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny] as CFDictionary) == errSecParam)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrSynchronizable as String: true] as CFDictionary) == errSecDuplicateItem)
            #expect(
                SecItemDelete(
                    Self.genericPassword("s", "a", extra: [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny])
                        as CFDictionary) == errSecSuccess)
            #expect(try test.vault.allItems().isEmpty)
        }
    }

    // MARK: - Persistent references

    @Test func persistentReferencesFindTheirItemForItsLife() throws {
        try Self.withVault { (test) throws in
            var result: AnyObject?
            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "a", "x", extra: [kSecReturnPersistentRef as String: true])
                        as CFDictionary, &result) == errSecSuccess)
            let reference = try #require(result as? Data)
            #expect(reference.count == 20 && reference.prefix(4) == Data("genp".utf8))
            #expect(SecItemAdd(Self.genericPassword("s", "b", "y") as CFDictionary, nil) == errSecSuccess)

            // Alone it is the result; with data or attributes, a dictionary.
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword("s", "a", extra: [kSecReturnPersistentRef as String: true]) as CFDictionary,
                    &result) == errSecSuccess)
            #expect(result as? Data == reference)
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword(
                        "s", "a", extra: [kSecReturnPersistentRef as String: true, kSecReturnData as String: true])
                        as CFDictionary, &result) == errSecSuccess)
            let both = try #require(result as? [String: Any])
            #expect(both[kSecValuePersistentRef as String] as? Data == reference)
            #expect(both[kSecValueData as String] as? Data == Data("x".utf8))
            #expect(both[kSecAttrAccount as String] == nil)

            // It finds the item without kSecClass, through renames, and not after deletion.
            let byReference: [String: Any] = [
                kSecValuePersistentRef as String: reference, kSecReturnAttributes as String: true,
            ]
            #expect(
                SecItemUpdate(
                    [kSecValuePersistentRef as String: reference] as CFDictionary,
                    [kSecAttrAccount as String: "renamed"] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byReference as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [String: Any])?[kSecAttrAccount as String] as? String == "renamed")
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassInternetPassword, kSecValuePersistentRef as String: reference]
                        as CFDictionary, nil) == errSecItemNotFound)
            #expect(SecItemDelete([kSecValuePersistentRef as String: reference] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching(byReference as CFDictionary, nil) == errSecItemNotFound)
            #expect(try test.vault.allItems().map(\.account) == ["b"])
        }
    }

    @Test func persistentReferencesOfSeveralItemsComeAsAnArray() throws {
        try Self.withVault { (_) throws in
            Self.addSample()
            var result: AnyObject?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s",
                        kSecReturnPersistentRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
                    ] as CFDictionary, &result) == errSecSuccess)
            let references = try #require(result as? [Data])
            #expect(references.count == 3 && Set(references).count == 3)
        }
    }

    // MARK: - Access control

    @Test func accessControlIsStoredWhenFobCanHonourIt() throws {
        try Self.withVault { (test) throws in
            let control = try #require(
                SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [], nil))
            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "a", "x", extra: [kSecAttrAccessControl as String: control])
                        as CFDictionary, nil) == errSecSuccess)
            let item = try test.vault.item(service: "s", account: "a")
            #expect(item.accessible == .afterFirstUnlock && item.accessControlFlags == 0)
            let attributes = try #require(Self.attributes("s", "a"))
            #expect(attributes[kSecAttrAccessControl as String] as? SecAccessControl == control)
            #expect(attributes[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlock)
            // Matched by equal access control.
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword("s", "a", extra: [kSecAttrAccessControl as String: control]) as CFDictionary,
                    nil) == errSecSuccess)
            let other = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil))
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword("s", "a", extra: [kSecAttrAccessControl as String: other]) as CFDictionary, nil
                ) == errSecItemNotFound)
            // Update replaces it.
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrAccessControl as String: other] as CFDictionary) == errSecSuccess)
            #expect(try test.vault.item(service: "s", account: "a").accessible == .whenUnlocked)
        }
    }

    @Test func accessControlNeedingAuthenticationIsRefused() throws {
        try Self.withVault { (test) throws in
            for flags: SecAccessControlCreateFlags in [
                .userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .watch,
                .applicationPassword, [.biometryAny, .or, .devicePasscode],
            ] {
                let control = try #require(
                    SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, flags, nil))
                #expect(
                    SecItemAdd(
                        Self.genericPassword("s", "a", "x", extra: [kSecAttrAccessControl as String: control])
                            as CFDictionary, nil) == errSecAuthFailed, "\(flags)")
            }
            let keyOnly = try #require(
                SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .privateKeyUsage, nil))
            #expect(
                SecItemAdd(
                    Self.genericPassword("s", "a", "x", extra: [kSecAttrAccessControl as String: keyOnly])
                        as CFDictionary, nil) == errSecParam)
            let plain = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil))
            #expect(
                SecItemAdd(
                    Self.genericPassword(
                        "s", "a", "x",
                        extra: [
                            kSecAttrAccessControl as String: plain,
                            kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
                        ]) as CFDictionary, nil) == errSecParam)
            #expect(try test.vault.allItems().isEmpty)
            // Nor can an update add such a constraint.
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, nil) == errSecSuccess)
            let presence = try #require(
                SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary,
                    [kSecAttrAccessControl as String: presence] as CFDictionary) == errSecAuthFailed)
            #expect(try test.vault.item(service: "s", account: "a").accessControlFlags == nil)
        }
    }

    @Test func authenticationKeysAreAcceptedWithoutEffect() throws {
        try Self.withVault { (_) throws in
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, nil) == errSecSuccess)
            for ui in [kSecUseAuthenticationUIAllow, kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip] {
                let extra: [String: Any] = [
                    kSecUseAuthenticationUI as String: ui, kSecUseAuthenticationContext as String: NSObject(),
                    kSecUseOperationPrompt as String: "Authenticate", kSecUseNoAuthenticationUI as String: true,
                    kSecUseDataProtectionKeychain as String: true, kSecReturnData as String: true,
                ]
                var result: AnyObject?
                #expect(
                    SecItemCopyMatching(Self.genericPassword("s", "a", extra: extra) as CFDictionary, &result)
                        == errSecSuccess)
                #expect(result as? Data == Data("x".utf8))
            }
        }
    }
}

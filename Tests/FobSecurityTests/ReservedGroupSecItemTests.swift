import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

extension SecItemTests {
    /// The sync state (access group `fob.sync`) is not the app's: a query
    /// for every item leaves it out, and a delete of every item keeps it.
    @Test func theSyncStateIsNotMatchedByAQueryForEverything() throws {
        try Self.withVault { (test) throws in
            try test.vault.applyImport([
                .add(
                    Item(
                        service: "fob-sync", account: "state", accessGroup: "fob.sync", kind: .note, secret: .text("s"))
                )
            ])
            #expect(SecItemAdd(Self.genericPassword("mail", "ana", "1") as CFDictionary, nil) == errSecSuccess)
            let (status, result) = Self.copy([
                kSecClass as String: kSecClassGenericPassword, kSecMatchLimit as String: kSecMatchLimitAll,
                kSecReturnAttributes as String: true,
            ])
            #expect(status == errSecSuccess)
            let found = try #require(result as? [[String: Any]])
            #expect(found.map { $0[kSecAttrService as String] as? String } == ["mail"])
            #expect(SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecSuccess)
            #expect(
                SecItemDelete([kSecClass as String: kSecClassGenericPassword] as CFDictionary) == errSecItemNotFound)
            #expect(try test.vault.item(service: "fob-sync", account: "state", accessGroup: "fob.sync").secret != nil)
        }
    }

    /// SecItemAdd and SecItemUpdate into the reserved group are errSecParam.
    @Test func addingToTheReservedGroupIsErrSecParam() throws {
        try Self.withVault { (test) throws in
            let group = [kSecAttrAccessGroup as String: "fob.sync"]
            #expect(
                SecItemAdd(Self.genericPassword("mail", "ana", "1", extra: group) as CFDictionary, nil) == errSecParam)
            #expect(SecItemAdd(Self.genericPassword("mail", "ana", "1") as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemUpdate(Self.genericPassword("mail", "ana") as CFDictionary, group as CFDictionary)
                    == errSecParam)
            #expect(try test.vault.item(service: "mail", account: "ana").accessGroup == "")
        }
    }
}

import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

extension SecItemTests {
    @Test func olderPointerAndDictionaryPatternsCompileAndWork() throws {
        try Self.withVault { _ in
            let data = "secret".data(using: .utf8)!
            let query =
                [
                    kSecClass as String: kSecClassGenericPassword as String,
                    kSecAttrAccount as String: "key",
                    kSecValueData as String: data,
                ] as [String: Any]
            #expect(SecItemAdd(query as CFDictionary, nil) == noErr)

            var result: AnyObject?
            let read: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "key",
                kSecReturnData as String: kCFBooleanTrue as Any, kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            let status = withUnsafeMutablePointer(to: &result) {
                SecItemCopyMatching(read as CFDictionary, UnsafeMutablePointer($0))
            }
            #expect(status == errSecSuccess)
            #expect((result as? Data).flatMap { String(data: $0, encoding: .utf8) } == "secret")

            // A query kept as an NSDictionary.
            let dictionary: NSDictionary = [kSecClass: kSecClassGenericPassword, kSecAttrAccount: "key"]
            let asSwift = try #require(dictionary as? [String: Any])
            #expect(SecItemCopyMatching(asSwift as CFDictionary, nil) == errSecSuccess)

            // Messages for logs.
            let message = SecCopyErrorMessageString(SecItemAdd(query as CFDictionary, nil), nil) as String? ?? ""
            #expect(message == "The specified item already exists in the keychain.")
        }
    }

    @Test func fobKindMarksTokensForLogout() throws {
        try Self.withVault { test in
            #expect(
                SecItemAdd(
                    Self.genericPassword("api", "access", "t", extra: [kFobAttrKind as String: kFobKindToken])
                        as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(Self.genericPassword("api", "password", "p") as CFDictionary, nil) == errSecSuccess)
            let access = try test.vault.item(service: "api", account: "access")
            let password = try test.vault.item(service: "api", account: "password")
            #expect(access.kind == .token)
            #expect(password.kind == .password)
            #expect(
                Self.attributes("api", "password")?[kFobAttrKind as String] as? String == kFobKindPassword as String)

            var result: AnyObject?
            let tokens: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kFobAttrKind as String: kFobKindToken,
                kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll,
            ]
            #expect(SecItemCopyMatching(tokens as CFDictionary, &result) == errSecSuccess)
            #expect((result as? [[String: Any]])?.compactMap { $0[kSecAttrAccount as String] as? String } == ["access"])

            #expect(
                SecItemUpdate(
                    Self.genericPassword("api", "password") as CFDictionary,
                    [kFobAttrKind as String: kFobKindNote] as CFDictionary) == errSecSuccess)
            let note = try test.vault.item(service: "api", account: "password")
            #expect(note.kind == .note)
            #expect(Self.statuses([kFobAttrKind as String: "secret-ish"]).add == errSecParam)
        }
    }
}

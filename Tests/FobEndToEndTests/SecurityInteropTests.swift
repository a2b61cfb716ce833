import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

/// Items written through FobSecurity's `SecItem…` functions are seen by the
/// `fob` command line, and the other way round, on one vault file.
@Suite struct SecurityInteropTests {
    @Test func secItemAndTheCommandLineShareItems() throws {
        let directory = TemporaryDirectory()
        let vault = directory.file("vault.db").path
        let passwordFile = directory.file("password").path
        try Data("interop pass\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        let global = ["--vault", vault, "--password-file", passwordFile]
        func fob(_ arguments: [String], input: String = "") throws -> ProcessResult {
            try FobProcess.run(global + arguments, input: input)
        }

        let created = try fob(["init", "--kdf", "interactive"])
        try #require(created.status == 0, "fob init: \(created.stderrText)")

        try SharedSettingLock.secItemVault.withLock {
            FobKeychain.configure(environment: ["FOB_VAULT": vault, "FOB_PASSWORD_FILE": passwordFile])
            defer { FobKeychain.reset() }

            // SecItemAdd → fob get.
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "mail",
                kSecAttrAccount as String: "ana",
                kSecAttrLabel as String: "Work mail",
                kSecValueData as String: Data("from SecItemAdd".utf8),
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var got = try fob(["get", "mail", "ana"])
            #expect(got.status == 0)
            #expect(got.stdoutText == "from SecItemAdd\n")
            let json = try fob(["get", "mail", "ana", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any]
            #expect(object?["label"] as? String == "Work mail")
            #expect(object?["secret"] as? String == "from SecItemAdd")

            // fob add → SecItemCopyMatching.
            let added = try fob(["add", "chat", "bob"], input: "from fob add\n")
            #expect(added.status == 0, "fob add: \(added.stderrText)")
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "chat",
                kSecAttrAccount as String: "bob",
                kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            var result: AnyObject?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("from fob add".utf8))

            // A duplicate either way.
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "chat",
                        kSecAttrAccount as String: "bob", kSecValueData as String: Data("x".utf8),
                    ] as CFDictionary, nil) == errSecDuplicateItem)
            #expect(try fob(["add", "mail", "ana"], input: "x\n").status == 45)

            // SecItemUpdate → fob get; fob update → SecItemCopyMatching.
            let mail: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "mail", kSecAttrAccount as String: "ana",
            ]
            #expect(
                SecItemUpdate(
                    mail as CFDictionary, [kSecValueData as String: Data("updated by SecItem".utf8)] as CFDictionary)
                    == errSecSuccess)
            got = try fob(["get", "mail", "ana"])
            #expect(got.stdoutText == "updated by SecItem\n")
            #expect(try fob(["update", "chat", "bob"], input: "updated by fob\n").status == 0)
            result = nil
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("updated by fob".utf8))

            // fob rm → errSecItemNotFound; SecItemDelete → fob get exits 44.
            #expect(try fob(["rm", "chat", "bob"]).status == 0)
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecItemNotFound)
            #expect(SecItemDelete(mail as CFDictionary) == errSecSuccess)
            got = try fob(["get", "mail", "ana"])
            #expect(got.status == 44)
            #expect(got.stderrText.contains("errSecItemNotFound"))
        }
    }
}

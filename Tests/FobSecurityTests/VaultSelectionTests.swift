import FobSecurity
import FobStore
import FobTestSupport
import Foundation
import Testing

extension SecItemTests {
    /// A vault file and a password file in a temporary directory.
    struct VaultFiles {
        let test: TestVault
        let passwordFile: URL

        init(passwordFileContents: String = "correct horse\n") throws {
            test = try TestVault(password: "correct horse")
            test.vault.lock()
            passwordFile = test.directory.file("password")
            try Data(passwordFileContents.utf8).write(to: passwordFile)
        }

        var environment: [String: String] {
            ["FOB_VAULT": test.vault.url.path, "FOB_PASSWORD_FILE": passwordFile.path]
        }
    }

    /// Runs `body` after configuring `environment`, then restores the default.
    static func withEnvironment<R>(_ environment: [String: String], _ body: () throws -> R) rethrows -> R {
        try SharedSettingLock.secItemVault.withLock {
            FobKeychain.configure(environment: environment)
            defer { FobKeychain.reset() }
            return try body()
        }
    }

    @Test func opensTheVaultNamedByTheEnvironment() throws {
        let files = try VaultFiles()
        try files.test.vault.unlock(password: files.test.password)
        try files.test.vault.add(Item(service: "cli", account: "ana", secret: .text("from the store")))
        files.test.vault.lock()
        Self.withEnvironment(files.environment) {
            #expect(Self.secret("cli", "ana") == Data("from the store".utf8))
            #expect(
                SecItemAdd(Self.genericPassword("lib", "bob", "from SecItem") as CFDictionary, nil) == errSecSuccess)
        }
        // Another connection sees the item the library wrote.
        let reopened = try Vault(url: files.test.vault.url)
        try reopened.unlock(password: files.test.password)
        #expect(try reopened.item(service: "lib", account: "bob").secret == .text("from SecItem"))
    }

    @Test func passwordFileLineEndings() throws {
        for contents in ["correct horse", "correct horse\n", "correct horse\r\n", "correct horse\nsecond line\n"] {
            let files = try VaultFiles(passwordFileContents: contents)
            Self.withEnvironment(files.environment) {
                #expect(
                    SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecItemNotFound,
                    "password file \(contents.debugDescription)")
            }
        }
    }

    @Test func defaultVaultPathFollowsXDGDataHome() throws {
        let files = try VaultFiles()
        let home = TemporaryDirectory()
        let dataHome = home.file("data")
        _ = try Vault.create(
            at: dataHome.appendingPathComponent("fob/vault.db"), password: files.test.password, kdf: .testing)
        let environment = [
            "XDG_DATA_HOME": dataHome.path, "HOME": home.url.path, "FOB_PASSWORD_FILE": files.passwordFile.path,
        ]
        Self.withEnvironment(environment) {
            #expect(SecItemAdd(Self.genericPassword("xdg", "a", "x") as CFDictionary, nil) == errSecSuccess)
        }
        #expect(SecItemTests.itemCount(at: dataHome.appendingPathComponent("fob/vault.db")) == 1)
    }

    static func itemCount(at url: URL) -> Int? {
        try? Vault(url: url).count()
    }

    @Test func withoutAPasswordFileInteractionIsNotAllowed() throws {
        let files = try VaultFiles()
        for environment in [
            [:], ["FOB_VAULT": files.test.vault.url.path],
            ["FOB_VAULT": files.test.vault.url.path, "FOB_PASSWORD_FILE": ""],
            ["FOB_VAULT": files.test.vault.url.path, "FOB_PASSWORD_FILE": "-"],
            ["FOB_VAULT": files.test.vault.url.path, "FOB_PASSWORD_FILE": files.test.directory.file("missing").path],
        ] {
            Self.withEnvironment(environment) {
                #expect(
                    SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, nil) == errSecInteractionNotAllowed,
                    "\(environment)")
                #expect(
                    SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil)
                        == errSecInteractionNotAllowed)
                #expect(
                    SecItemUpdate(
                        Self.genericPassword("s", "a") as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary)
                        == errSecInteractionNotAllowed)
                #expect(SecItemDelete(Self.genericPassword("s", "a") as CFDictionary) == errSecInteractionNotAllowed)
            }
        }
    }

    @Test func wrongPasswordIsAuthFailedAndRetried() throws {
        let files = try VaultFiles(passwordFileContents: "wrong horse\n")
        try Self.withEnvironment(files.environment) {
            #expect(SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecAuthFailed)
            // The next call tries again, so fixing the file is enough.
            try Data("correct horse\n".utf8).write(to: files.passwordFile)
            #expect(SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecItemNotFound)
        }
    }

    @Test func missingOrForeignVaultFiles() throws {
        let files = try VaultFiles()
        var environment = files.environment
        environment["FOB_VAULT"] = files.test.directory.file("absent.db").path
        Self.withEnvironment(environment) {
            #expect(SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecNoSuchKeychain)
        }
        let foreign = files.test.directory.file("foreign.db")
        try Data(repeating: 0x41, count: 4096).write(to: foreign)
        environment["FOB_VAULT"] = foreign.path
        Self.withEnvironment(environment) {
            let status = SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil)
            #expect(status == errSecDecode)
        }
    }

    @Test func aLockedConfiguredVaultAllowsNoInteraction() throws {
        let test = try TestVault()
        try SharedSettingLock.secItemVault.withLock {
            FobKeychain.configure(vault: test.vault)
            defer { FobKeychain.reset() }
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, nil) == errSecSuccess)
            test.vault.lock()
            var result: AnyObject?
            #expect(
                SecItemCopyMatching(
                    Self.genericPassword("s", "a", extra: [kSecReturnData as String: true]) as CFDictionary, &result)
                    == errSecInteractionNotAllowed)
            #expect(result == nil)
            #expect(SecItemAdd(Self.genericPassword("s", "b", "x") as CFDictionary, nil) == errSecInteractionNotAllowed)
            #expect(
                SecItemUpdate(
                    Self.genericPassword("s", "a") as CFDictionary, [kSecValueData as String: Data()] as CFDictionary)
                    == errSecInteractionNotAllowed)
            #expect(SecItemDelete(Self.genericPassword("s", "a") as CFDictionary) == errSecInteractionNotAllowed)
            try test.vault.unlock(password: test.password)
            #expect(Self.secret("s", "a") == Data("x".utf8))
        }
    }

    @Test func resetForgetsTheConfiguredVault() throws {
        let test = try TestVault()
        SharedSettingLock.secItemVault.withLock {
            FobKeychain.configure(vault: test.vault)
            #expect(SecItemAdd(Self.genericPassword("s", "a", "x") as CFDictionary, nil) == errSecSuccess)
            FobKeychain.configure(environment: [:])
            #expect(
                SecItemCopyMatching(Self.genericPassword("s", "a") as CFDictionary, nil) == errSecInteractionNotAllowed)
            FobKeychain.reset()
            // The vault given to configure(vault:) is not locked by the library.
            #expect(!test.vault.isLocked)
        }
    }
}

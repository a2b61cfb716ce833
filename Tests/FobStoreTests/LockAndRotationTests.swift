import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobStore

/// Accessibility classes under a partial lock, the checks an agent needs,
/// and the vault-key rotation of `passwd`.
@Suite struct PartialLockTests {
    private func vaultWithBothClasses() throws -> TestVault {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "afu", accessible: .afterFirstUnlock, secret: .text("kept")))
        try t.vault.add(Item(service: "s", account: "wu", secret: .text("dropped")))
        return t
    }

    @Test func aPartialLockServesOnlyAfterFirstUnlockItems() throws {
        let t = try vaultWithBothClasses()
        t.vault.lock(keepingAfterFirstUnlock: true)
        #expect(t.vault.lockLevel == .afterFirstUnlockOnly)
        #expect(!t.vault.isLocked)
        #expect(t.vault.keys?.vault == nil)
        #expect(t.vault.keys?.whenUnlocked == nil)
        #expect(try t.vault.item(service: "s", account: "afu").secret?.unsafeString == "kept")
        let refused = KeychainError.interactionNotAllowed(
            "the vault is locked: service \"s\", account \"wu\" is accessible only when unlocked")
        #expect(throws: refused) { try t.vault.item(service: "s", account: "wu") }
        #expect(try t.vault.allItems().map(\.account) == ["afu"])
        try t.vault.save(service: "s", account: "afu", secret: .text("changed"))
        try t.vault.add(Item(service: "s", account: "afu2", accessible: .afterFirstUnlock, secret: .text("2")))
        #expect(
            thrownKeychainError { try t.vault.add(Item(service: "s", account: "wu2", secret: .text("3"))) }?.statusName
                == "errSecInteractionNotAllowed")
        #expect(
            thrownKeychainError { try t.vault.save(service: "s", account: "wu", secret: .text("x")) }?.statusName
                == "errSecInteractionNotAllowed")
        #expect(
            thrownKeychainError { try t.vault.changePassword(to: .text("new")) }?.statusName
                == "errSecInteractionNotAllowed")
        #expect(try t.vault.delete(matching: ItemQuery(service: "s")) == 2)
        t.vault.lock()
        #expect(t.vault.lockLevel == .locked)
        try t.vault.unlock(password: t.password)
        #expect(t.vault.lockLevel == .unlocked)
        #expect(try t.vault.allItems().map(\.account) == ["wu"])
        #expect(try t.vault.item(service: "s", account: "wu").secret?.unsafeString == "dropped")
    }

    @Test func aPartiallyLockedVaultStillChecksTheCommitment() throws {
        let t = try vaultWithBothClasses()
        let old = t.directory.file("old.db")
        try RawVault.copy(t.vault.url, to: old)
        try t.vault.save(service: "s", account: "afu", secret: .text("newer"))
        t.vault.lock(keepingAfterFirstUnlock: true)
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1 WHERE id = 1", [RawVault.rows(old)[0].record]))
        expectDecode { _ = try t.vault.item(service: "s", account: "afu") }
    }

    @Test func theTwoClassesAreSealedUnderDifferentKeys() throws {
        let t = try vaultWithBothClasses()
        let keys = try #require(t.vault.keys)
        let rows = RawVault.rows(t.vault.url)
        var afuOnly = keys
        afuOnly.whenUnlocked = nil
        func open(_ row: (id: Int64, lookup: [UInt8], record: [UInt8])) throws -> Item? {
            try row.record.withUnsafeBytes { record in
                try row.lookup.withUnsafeBytes { lookup in
                    try t.vault.openRecord(record, lookup: lookup, keys: afuOnly, withSecret: false)
                }
            }
        }
        #expect(try open(rows[0])?.account == "afu")
        #expect(try open(rows[1]) == nil)
    }

    @Test func aReplacedFileIsNoticedAndLocks() throws {
        let t = try vaultWithBothClasses()
        #expect(!t.vault.fileIdentityChanged())
        try t.vault.revalidate()
        let copy = t.directory.file("copy.db")
        try RawVault.copy(t.vault.url, to: copy)
        #expect(rename(copy.path, t.vault.url.path) == 0)
        #expect(t.vault.fileIdentityChanged())
        #expect(throws: KeychainError.interactionNotAllowed("the vault file was replaced; unlock again")) {
            try t.vault.revalidate()
        }
        #expect(t.vault.isLocked)
        #expect(!t.vault.fileIdentityChanged())
    }

    @Test func aPasswordChangeByAnotherProcessLocks() throws {
        let t = try vaultWithBothClasses()
        let other = try Vault(url: t.vault.url)
        try other.unlock(password: t.password)
        try other.changePassword(to: .text("elsewhere"))
        #expect(thrownKeychainError { try t.vault.revalidate() }?.statusName == "errSecInteractionNotAllowed")
        #expect(t.vault.isLocked)
        #expect(throws: KeychainError.authFailed) { try t.vault.unlock(password: t.password) }
        try t.vault.unlock(password: .text("elsewhere"))
        #expect(try t.vault.allItems().count == 2)
    }
}

@Suite struct RotationTests {
    @Test func passwdRotatesTheVaultKeyAndRewritesEveryRow() throws {
        let t = try TestVault()
        for i in 0..<20 {
            try t.vault.add(
                Item(
                    service: "s", account: "a\(i)", accessible: i % 3 == 0 ? .afterFirstUnlock : .whenUnlocked,
                    secret: .text("\(i)")))
        }
        let old = t.directory.file("old.db")
        try RawVault.copy(t.vault.url, to: old)
        let before = RawVault.rows(t.vault.url)
        try t.vault.changePassword(to: .text("new password"))
        let after = RawVault.rows(t.vault.url)
        #expect(after.count == before.count)
        for (a, b) in zip(before, after) {
            #expect(a.lookup != b.lookup)
            #expect(a.record != b.record)
        }
        // Items written after the change cannot be opened with the old copy and the old password.
        try t.vault.add(Item(service: "later", account: "x", secret: .text("later")))
        let later = try #require(RawVault.rows(t.vault.url).last)
        let oldVault = try Vault(url: old)
        try oldVault.unlock(password: t.password)
        let oldKeys = try #require(oldVault.keys)
        #expect(
            thrownKeychainError {
                try later.record.withUnsafeBytes { r in
                    try later.lookup.withUnsafeBytes { l in
                        _ = try oldVault.openRecord(r, lookup: l, keys: oldKeys, withSecret: true)
                    }
                }
            }?.statusName == "errSecDecode")
        let v = try Vault(url: t.vault.url)
        #expect(throws: KeychainError.authFailed) { try v.unlock(password: t.password) }
        try v.unlock(password: .text("new password"))
        #expect(try v.allItems().count == 21)
        #expect(try v.item(service: "s", account: "a3").accessible == .afterFirstUnlock)
        #expect(try v.item(service: "s", account: "a4").secret?.unsafeString == "4")
        #expect(try Vault.verify(at: t.vault.url, password: .text("new password")).isSound)
    }

    @Test func passwdKeepsTheAuthenticatedKDFSettingsNotThoseInTheFileNow() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        #expect(RawVault.execute(t.vault.url, "UPDATE meta SET value = CAST('3' AS BLOB) WHERE name = 'opslimit';"))
        #expect(RawVault.execute(t.vault.url, "UPDATE meta SET value = CAST('16384' AS BLOB) WHERE name = 'memlimit';"))
        try t.vault.changePassword(to: .text("new"))
        let v = try Vault(url: t.vault.url)
        #expect(try v.kdfParameters() == .testing)
        try v.unlock(password: .text("new"))
        #expect(try v.item(service: "s", account: "a").secret?.unsafeString == "1")
    }

    @Test(arguments: [
        ("memlimit", "4398046510080"), ("memlimit", "4294967297"), ("opslimit", "4294967295"), ("opslimit", "33"),
        ("memlimit", "99999999999999999999999"), ("opslimit", "0"),
    ])
    func kdfSettingsOutsideTheLimitsAreRefusedAtOnce(name: String, value: String) throws {
        let t = try TestVault()
        #expect(
            RawVault.execute(t.vault.url, "UPDATE meta SET value = CAST('\(value)' AS BLOB) WHERE name = '\(name)';"))
        let start = Date()
        expectDecode { _ = try Vault(url: t.vault.url) }
        #expect(Date().timeIntervalSince(start) < 1)
    }

    @Test func kdfSettingsAboveTheCapAreParamOnCreateAndPasswd() throws {
        let dir = TemporaryDirectory()
        let huge = KDFParameters(opslimit: 1, memlimit: KDFParameters.maxMemlimit + 1)
        #expect(throws: KeychainError.param("KDF limits out of range")) {
            _ = try Vault.create(at: dir.file("a.db"), password: .text("pw"), kdf: huge)
        }
        let t = try TestVault()
        #expect(throws: KeychainError.param("KDF limits out of range")) {
            try t.vault.changePassword(
                to: .text("x"), kdf: KDFParameters(opslimit: KDFParameters.maxOpslimit + 1, memlimit: 8192))
        }
        #expect(KDFParameters(.sensitive).isValid)
    }
}

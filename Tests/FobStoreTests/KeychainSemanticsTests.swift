import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// The Keychain operations (add, copy matching, update, delete, save; docs/vault-format.md), one behaviour per test.
@Suite struct KeychainSemanticsTests {
    @Test func accessibilityIsNotPartOfThePrimaryKey() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", accessible: .whenUnlocked, secret: .text("1")))
        #expect(
            thrownKeychainError {
                try t.vault.add(Item(service: "s", account: "a", accessible: .afterFirstUnlock, secret: .text("2")))
            }?.statusName == "errSecDuplicateItem")
    }

    @Test func accessibilityNarrowsOnlyWhenNamed() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", accessible: .afterFirstUnlock, secret: .text("1")))
        #expect(try t.vault.items(matching: ItemQuery(service: "s")).count == 1)
        #expect(try t.vault.items(matching: ItemQuery(service: "s", accessible: .afterFirstUnlock)).count == 1)
        #expect(throws: KeychainError.itemNotFound("service \"s\"")) {
            try t.vault.items(matching: ItemQuery(service: "s", accessible: .whenUnlocked))
        }
    }

    @Test func accessGroupIsPartOfThePrimaryKey() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        try t.vault.add(Item(service: "s", account: "a", accessGroup: "team.shared", secret: .text("2")))
        #expect(try t.vault.items(matching: ItemQuery(service: "s", account: "a")).count == 2)
        #expect(try t.vault.item(service: "s", account: "a", accessGroup: "team.shared").secret?.unsafeString == "2")
        #expect(try t.vault.item(service: "s", account: "a").secret?.unsafeString == "1")
    }

    @Test func emptyServiceIsAValueNotAWildcard() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "", account: "a", secret: .text("empty")))
        try t.vault.add(Item(service: "mail", account: "a", secret: .text("mail")))
        let found = try t.vault.items(matching: ItemQuery(service: "", account: "a"), withSecrets: true)
        #expect(found.count == 1)
        #expect(found.first?.secret?.unsafeString == "empty")
    }

    @Test func namesCompareByteForByte() throws {
        let t = try TestVault()
        // "é" precomposed and decomposed are two different services, as in the Keychain.
        try t.vault.add(Item(service: "caf\u{E9}", account: "a", secret: .text("nfc")))
        try t.vault.add(Item(service: "cafe\u{301}", account: "a", secret: .text("nfd")))
        #expect(try t.vault.item(service: "cafe\u{301}", account: "a").secret?.unsafeString == "nfd")
        #expect(try t.vault.items(matching: ItemQuery(service: "caf\u{E9}")).count == 1)
    }

    @Test func copyMatchingLimitOneAndAllAreSorted() throws {
        let t = try TestVault()
        for account in ["zoe", "ana", "bo"] {
            try t.vault.add(Item(service: "mail", account: account, secret: .text(account)))
        }
        let all = try t.vault.items(matching: ItemQuery(service: "mail"))
        #expect(all.map(\.account) == ["ana", "bo", "zoe"])
        #expect(all.allSatisfy { $0.secret == nil })
        let one = try t.vault.items(matching: ItemQuery(service: "mail"), limit: .one, withSecrets: true)
        #expect(one.count == 1)
        #expect(one[0].secret?.unsafeString == "ana")
    }

    @Test func updateChangesEveryMatch() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "api", account: "a", kind: .token, secret: .text("1")))
        try t.vault.add(Item(service: "api", account: "b", kind: .token, secret: .text("2")))
        try t.vault.add(Item(service: "web", account: "c", secret: .text("3")))
        let n = try t.vault.update(matching: ItemQuery(service: "api"), with: ItemChanges(label: "rotated"))
        #expect(n == 2)
        #expect(try t.vault.items(matching: ItemQuery(label: "rotated")).map(\.account) == ["a", "b"])
        #expect(try t.vault.item(service: "api", account: "a").secret?.unsafeString == "1")
    }

    @Test func updateOfNothingIsItemNotFound() throws {
        let t = try TestVault()
        #expect(throws: KeychainError.itemNotFound("service \"none\"")) {
            try t.vault.update(matching: ItemQuery(service: "none"), with: ItemChanges(label: "x"))
        }
    }

    @Test func updateIntoAnExistingKeyIsDuplicateAndChangesNothing() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        try t.vault.add(Item(service: "s", account: "b", secret: .text("2")))
        #expect(throws: KeychainError.duplicateItem("service \"s\", account \"b\"")) {
            try t.vault.update(matching: .key(service: "s", account: "a"), with: ItemChanges(account: "b"))
        }
        #expect(try t.vault.item(service: "s", account: "a").secret?.unsafeString == "1")
        #expect(try t.vault.item(service: "s", account: "b").secret?.unsafeString == "2")
    }

    @Test func updateCanRenameAnItem() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "old", secret: .text("1")))
        try t.vault.update(matching: .key(service: "s", account: "old"), with: ItemChanges(account: "new"))
        #expect(try t.vault.item(service: "s", account: "new").secret?.unsafeString == "1")
        #expect(
            thrownKeychainError { try t.vault.item(service: "s", account: "old") }?.statusName == "errSecItemNotFound")
    }

    @Test func deleteRemovesEveryMatch() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "api", account: "a", kind: .token, secret: .text("1")))
        try t.vault.add(Item(service: "api", account: "b", kind: .oauth, secret: .text("2")))
        try t.vault.add(Item(service: "api", account: "c", secret: .text("3")))
        #expect(try t.vault.delete(matching: ItemQuery(kind: .token)) == 1)
        #expect(try t.vault.delete(matching: ItemQuery(service: "api")) == 2)
        #expect(try t.vault.allItems().isEmpty)
        #expect(throws: KeychainError.itemNotFound("service \"api\"")) {
            try t.vault.delete(matching: ItemQuery(service: "api"))
        }
    }

    @Test func saveKeepsAttributesNotGivenAndTheCreationDate() throws {
        let clock = ManualClock(Date(timeIntervalSince1970: 1_000))
        let dir = TemporaryDirectory()
        let vault = try Vault.create(at: dir.file("v.db"), password: .text("pw"), kdf: .testing, now: { clock.now })
        try vault.add(Item(service: "s", account: "a", label: "Work", kind: .token, secret: .text("1")))
        clock.now = Date(timeIntervalSince1970: 2_000)
        #expect(try vault.save(service: "s", account: "a", secret: .text("2")) == .updated)
        let item = try vault.item(service: "s", account: "a")
        #expect(item.kind == .token)
        #expect(item.label == "Work")
        #expect(item.created == Date(timeIntervalSince1970: 1_000))
        #expect(item.modified == Date(timeIntervalSince1970: 2_000))
        #expect(item.secret?.unsafeString == "2")
    }

    @Test func saveOfANewItemUsesTheGivenAttributes() throws {
        let t = try TestVault()
        try t.vault.save(
            service: "s", account: "a", secret: .text("t"), attributes: ItemChanges(label: "L", kind: .token))
        let item = try t.vault.item(service: "s", account: "a")
        #expect(item.kind == .token)
        #expect(item.label == "L")
    }

    @Test func aSecretOverOneMebibyteIsRefusedAndOneMebibyteIsKept() throws {
        let t = try TestVault()
        let max = SecretBytes([UInt8](repeating: 0xA5, count: Item.maxSecretBytes))
        try t.vault.add(Item(service: "s", account: "max", secret: max))
        #expect(try t.vault.item(service: "s", account: "max").secret == max)
        #expect(throws: KeychainError.param("secret larger than 1 MiB (1048576 bytes)")) {
            try t.vault.add(
                Item(
                    service: "s", account: "big",
                    secret: SecretBytes([UInt8](repeating: 1, count: Item.maxSecretBytes + 1))))
        }
    }

    @Test func arbitraryBytesComeBackExactly() throws {
        let t = try TestVault()
        let bytes = SecretBytes((0...255).map { UInt8($0) } + [0, 0, 0xFF])
        try t.vault.add(Item(service: "bin", account: "a", secret: bytes))
        #expect(try t.vault.item(service: "bin", account: "a").secret == bytes)
    }

    @Test func lockedVaultRefusesEveryOperation() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        t.vault.lock()
        let locked = KeychainError.interactionNotAllowed("the vault is locked")
        #expect(throws: locked) { try t.vault.item(service: "s", account: "a") }
        #expect(throws: locked) { try t.vault.add(Item(service: "s", account: "b", secret: .text("1"))) }
        #expect(throws: locked) { try t.vault.delete(matching: ItemQuery()) }
        #expect(throws: locked) { try t.vault.save(service: "s", account: "a", secret: .text("2")) }
        #expect(throws: locked) { try t.vault.update(matching: ItemQuery(), with: ItemChanges(label: "x")) }
        #expect(try t.vault.count() == 1)
    }

    @Test func anotherConnectionsCommitChangesTheDataVersion() throws {
        let t = try TestVault()
        let other = try Vault(url: t.vault.url)
        try other.unlock(password: t.password)
        let before = try t.vault.dataVersion()
        #expect(try t.vault.dataVersion() == before)
        try other.add(Item(service: "s", account: "a", secret: .text("1")))
        #expect(try t.vault.dataVersion() != before)
        #expect(try t.vault.allItems().map(\.account) == ["a"])
    }
}

/// A clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Date
    init(_ start: Date) { value = start }
    var now: Date {
        get {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
        set {
            lock.lock()
            value = newValue
            lock.unlock()
        }
    }
}

@Suite struct MessageTests {
    @Test func controlCharactersInNamesAreEscapedInMessages() {
        let error = KeychainError.itemNotFound(describeKey(service: "mail\u{1B}[2J", account: "a\u{9B}b\tc"))
        #expect(
            error.description
                == "item not found: service \"mail\\u{1B}[2J\", account \"a\\u{9B}b\\u{9}c\" (errSecItemNotFound)")
        #expect(displaySafe("café 密码 🔑") == "café 密码 🔑")
    }
}

import FobTestSupport
import Foundation
import Testing

@testable import FobStore

@Suite struct VaultTests {
    @Test func addThenGetReturnsTheSameBytes() throws {
        let t = try TestVault()
        for (i, secret) in ["", "  pw  ", "l1\nl2\n", String(repeating: "x", count: 4000), "é🔑"].enumerated() {
            try t.vault.add(Item(service: "svc", account: "a\(i)", secret: .text(secret)))
            let got = try t.vault.item(service: "svc", account: "a\(i)")
            #expect(got.secret?.unsafeString == secret)
        }
    }

    @Test func duplicateAddIsDuplicateItem() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "mail", account: "ana", secret: .text("1")))
        #expect(throws: KeychainError.duplicateItem("service \"mail\", account \"ana\"")) {
            try t.vault.add(Item(service: "mail", account: "ana", accessible: .afterFirstUnlock, secret: .text("2")))
        }
        #expect(try t.vault.item(service: "mail", account: "ana").secret?.unsafeString == "1")
    }

    @Test func missingItemIsItemNotFound() throws {
        let t = try TestVault()
        #expect(throws: KeychainError.itemNotFound("service \"x\", account \"y\"")) {
            try t.vault.item(service: "x", account: "y")
        }
        #expect(
            thrownKeychainError { try t.vault.delete(matching: .key(service: "x", account: "y")) }?.statusName
                == "errSecItemNotFound")
    }

    @Test func reopenWithPasswordAndWrongPassword() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("v")))
        let again = try Vault(url: t.vault.url)
        #expect(again.isLocked)
        #expect(throws: KeychainError.interactionNotAllowed("the vault is locked")) { try again.allItems() }
        #expect(throws: KeychainError.authFailed) { try again.unlock(password: .text("wrong")) }
        try again.unlock(password: t.password)
        #expect(try again.item(service: "s", account: "a").secret?.unsafeString == "v")
    }

    @Test func saveAddsThenUpdates() throws {
        let t = try TestVault()
        #expect(try t.vault.save(service: "s", account: "a", secret: .text("1")) == .added)
        #expect(try t.vault.save(service: "s", account: "a", secret: .text("2")) == .updated)
        #expect(try t.vault.allItems().count == 1)
        #expect(try t.vault.item(service: "s", account: "a").secret?.unsafeString == "2")
    }
}

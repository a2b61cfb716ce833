import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// Fob's own records (the sync state in `fob.sync`) stay in the vault but
/// out of every query that does not name their access group.
@Suite struct ReservedAccessGroupTests {
    static func vaultWithState() throws -> TestVault {
        let t = try TestVault()
        try t.vault.add(Item(service: "mail", account: "ana", secret: .text("1")))
        // Only sync writes there, through an import's transaction.
        try t.vault.applyImport([
            .add(Item(service: "fob-sync", account: "state", accessGroup: "fob.sync", kind: .note, secret: .text("s")))
        ])
        return t
    }

    @Test func listingsAndSearchesLeaveTheReservedGroupOut() throws {
        let t = try Self.vaultWithState()
        #expect(try t.vault.allItems().map(\.service) == ["mail"])
        #expect(try t.vault.allItemsWithSecrets().map(\.service) == ["mail"])
        #expect(throws: KeychainError.itemNotFound("service \"fob-sync\"")) {
            try t.vault.items(matching: ItemQuery(itemClass: nil, service: "fob-sync"))
        }
        #expect(throws: KeychainError.itemNotFound("service \"fob-sync\", account \"state\"")) {
            try t.vault.item(service: "fob-sync", account: "state")
        }
        // Named by its group, it is there, with its secret.
        let state = try t.vault.item(service: "fob-sync", account: "state", accessGroup: "fob.sync")
        #expect(state.secret?.unsafeString == "s")
        #expect(try t.vault.count() == 2)
    }

    @Test func wipesAndBulkDeletesKeepItAndTheVaultStaysWhole() throws {
        let t = try Self.vaultWithState()
        #expect(try t.vault.deleteItems { _ in true }.map(\.service) == ["mail"])
        #expect(throws: KeychainError.itemNotFound("any item")) {
            try t.vault.delete(matching: ItemQuery(itemClass: nil))
        }
        #expect(try t.vault.item(service: "fob-sync", account: "state", accessGroup: "fob.sync").secret != nil)
        let url = t.vault.url
        t.vault.lock()
        let report = try Vault.verify(at: url, password: t.password)
        #expect(report.isSound, "\(report)")
    }

    @Test func aBackupCarriesIt() throws {
        let t = try Self.vaultWithState()
        let copy = t.directory.file("copy.db")
        try t.vault.backup(to: copy)
        let other = try Vault(url: copy)
        try other.unlock(password: t.password)
        #expect(try other.item(service: "fob-sync", account: "state", accessGroup: "fob.sync").secret != nil)
        #expect(try other.allItems().map(\.service) == ["mail"])
    }

    /// Only sync writes the reserved group: an add, a save or an update
    /// into it is errSecParam (exit 2) and changes nothing.
    @Test func addSaveAndUpdateIntoTheReservedGroupAreRefused() throws {
        let t = try Self.vaultWithState()
        let refused = KeychainError.param(
            "the access group \"fob.sync\" is reserved for Fob's own records (sync's state)")
        #expect(refused.exitStatus == 2)
        #expect(throws: refused) {
            try t.vault.add(Item(service: "x", account: "y", accessGroup: "fob.sync", secret: .text("1")))
        }
        #expect(throws: refused) {
            try t.vault.add(contentsOf: [
                Item(service: "z", account: "y", secret: .text("1")),
                Item(service: "x", account: "y", accessGroup: "fob.sync", secret: .text("1")),
            ])
        }
        #expect(throws: refused) {
            try t.vault.save(service: "fob-sync", account: "state", accessGroup: "fob.sync", secret: .text("over"))
        }
        var changes = ItemChanges()
        changes.accessGroup = "fob.sync"
        #expect(throws: refused) {
            try t.vault.update(matching: .key(service: "mail", account: "ana", accessGroup: ""), with: changes)
        }
        #expect(try t.vault.count() == 2)
        #expect(
            try t.vault.item(service: "fob-sync", account: "state", accessGroup: "fob.sync").secret?.unsafeString == "s"
        )
        #expect(try t.vault.item(service: "mail", account: "ana").accessGroup == "")
    }
}

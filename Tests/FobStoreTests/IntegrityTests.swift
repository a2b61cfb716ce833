import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// The whole-vault commitment and the exact schema: what an attacker with
/// the file (and no key) can do to it is errSecDecode, never data.
@Suite struct IntegrityTests {
    private func reopened(_ t: TestVault) throws -> Vault {
        let v = try Vault(url: t.vault.url)
        try v.unlock(password: t.password)
        return v
    }

    @Test func rollbackOfOneRecordFromAnOlderCopyIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "mail", account: "ana", secret: .text("old")))
        try t.vault.add(Item(service: "web", account: "bo", secret: .text("other")))
        let old = t.directory.file("old.db")
        try RawVault.copy(t.vault.url, to: old)
        try t.vault.save(service: "mail", account: "ana", secret: .text("new"))
        let oldRow = RawVault.rows(old)[0]
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1 WHERE id = 1", [oldRow.record]))
        // The vault that is already unlocked sees another connection's commit and verifies again.
        expectDecode { _ = try t.vault.item(service: "mail", account: "ana") }
        expectDecode { _ = try t.vault.item(service: "web", account: "bo") }
        expectDecode { _ = try t.vault.allItems() }
        expectDecode { try t.vault.save(service: "web", account: "bo", secret: .text("x")) }
        expectDecode { _ = try reopened(t) }
        #expect(try Vault(url: t.vault.url).isLocked)
    }

    @Test func aDeletedItemBroughtBackIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "kept", secret: .text("1")))
        try t.vault.add(Item(service: "s", account: "gone", secret: .text("2")))
        let row = RawVault.rows(t.vault.url)[1]
        try t.vault.delete(matching: .key(service: "s", account: "gone"))
        #expect(
            RawVault.run(
                t.vault.url, "INSERT INTO items(id, lookup, record) VALUES (2, ?1, ?2)", [row.lookup, row.record]))
        expectDecode { _ = try t.vault.item(service: "s", account: "gone") }
        expectDecode { _ = try reopened(t) }
    }

    @Test func aRowDeletedOutsideFobIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        try t.vault.add(Item(service: "s", account: "b", secret: .text("2")))
        #expect(RawVault.execute(t.vault.url, "DELETE FROM items WHERE id = 2"))
        expectDecode { _ = try t.vault.item(service: "s", account: "b") }
        expectDecode { _ = try t.vault.item(service: "s", account: "a") }
        expectDecode { _ = try reopened(t) }
    }

    @Test func aRecordFromTheWALOfAnEarlierWriteIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("first")))
        let first = RawVault.rows(t.vault.url)[0].record
        try t.vault.update(matching: .key(service: "s", account: "a"), with: ItemChanges(secret: .text("second")))
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1", [first]))
        expectDecode { _ = try t.vault.item(service: "s", account: "a") }
    }

    /// A trigger that reverts every update makes writes report success while
    /// nothing changes; it is refused on open, and a running vault notices it
    /// before its next write.
    @Test func aPlantedTriggerIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("kept")))
        #expect(
            RawVault.execute(
                t.vault.url,
                """
                CREATE TRIGGER revert AFTER UPDATE ON items BEGIN UPDATE items SET record = OLD.record WHERE id = NEW.id; END;
                """))
        expectDecode { try t.vault.save(service: "s", account: "a", secret: .text("changed")) }
        expectDecode { _ = try t.vault.item(service: "s", account: "a") }
        expectDecode { _ = try Vault(url: t.vault.url) }
    }

    /// Triggers planted through the vault's own connection (so no other
    /// commit announces them): each write reads its row back before
    /// committing and refuses a write the file did not keep.
    @Test(arguments: [
        "CREATE TRIGGER t AFTER UPDATE ON items BEGIN UPDATE items SET record = OLD.record WHERE id = NEW.id; END;",
        "CREATE TRIGGER t BEFORE DELETE ON items BEGIN SELECT RAISE(IGNORE); END;",
        "CREATE TRIGGER t AFTER INSERT ON items BEGIN DELETE FROM items WHERE id = NEW.id; END;",
    ])
    func aWriteTheFileDoesNotKeepIsRefusedBeforeCommit(trigger: String) throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("kept")))
        try t.vault.db.execute(trigger)
        expectDecode(Comment(rawValue: trigger)) {
            if trigger.contains("UPDATE") { try t.vault.save(service: "s", account: "a", secret: .text("changed")) }
            if trigger.contains("DELETE ON") { try t.vault.delete(matching: .key(service: "s", account: "a")) }
            if trigger.contains("INSERT") { try t.vault.add(Item(service: "s", account: "b", secret: .text("new"))) }
        }
        try t.vault.db.execute("DROP TRIGGER t")
        #expect(try t.vault.item(service: "s", account: "a").secret?.unsafeString == "kept")
        #expect(try t.vault.allItems().map(\.account) == ["a"])
    }

    @Test(arguments: [
        "CREATE VIEW v AS SELECT * FROM items;",
        "CREATE TABLE extra(x);",
        "CREATE INDEX by_record ON items(record);",
        "CREATE TRIGGER keep BEFORE DELETE ON items BEGIN SELECT RAISE(IGNORE); END;",
        """
        CREATE TABLE items2(id INTEGER PRIMARY KEY, lookup BLOB NOT NULL, record BLOB NOT NULL);
        INSERT INTO items2 SELECT * FROM items; DROP TABLE items; ALTER TABLE items2 RENAME TO items;
        """,
        "ALTER TABLE items ADD COLUMN note TEXT;",
    ])
    func anyOtherSchemaIsDecode(sql: String) throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        #expect(RawVault.execute(t.vault.url, sql))
        expectDecode(Comment(rawValue: sql)) { _ = try Vault(url: t.vault.url) }
        expectDecode(Comment(rawValue: sql)) { _ = try t.vault.allItems() }
        let report = try Vault.verify(at: t.vault.url, password: t.password)
        #expect(!report.schemaProblems.isEmpty, "\(sql)")
        #expect(!report.isSound)
    }

    @Test func aDroppedUniqueIndexIsNamed() throws {
        let t = try TestVault()
        #expect(
            RawVault.execute(
                t.vault.url,
                """
                CREATE TABLE items2(id INTEGER PRIMARY KEY, lookup BLOB NOT NULL, record BLOB NOT NULL);
                DROP TABLE items; ALTER TABLE items2 RENAME TO items;
                """))
        let report = try Vault.verify(at: t.vault.url, password: t.password)
        #expect(
            report.schemaProblems.contains("missing index \"sqlite_autoindex_items_1\""), "\(report.schemaProblems)")
    }

    @Test func aFormatLabelSetBackToOneIsDecodeNotAWrongPassword() throws {
        let t = try TestVault()
        #expect(RawVault.execute(t.vault.url, "PRAGMA user_version=1;"))
        let v = try Vault(url: t.vault.url)
        expectDecode { try v.unlock(password: t.password) }
    }

    /// The whole item set and its commitment put back from an older copy
    /// cannot be told from a genuine older vault, but a vault in use has seen
    /// a later write counter and refuses it.
    @Test func theWholeVaultPutBackWhileInUseIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("old")))
        let old = t.directory.file("old.db")
        try RawVault.copy(t.vault.url, to: old)
        let oldRows = RawVault.rows(old)
        var oldIntegrity: [UInt8] = []
        let oldVault = try Vault(url: old)
        try oldVault.unlock(password: t.password)
        oldIntegrity = try #require(oldVault.unlockedMeta?.integrity)
        try t.vault.save(service: "s", account: "a", secret: .text("new"))
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1 WHERE id = 1", [oldRows[0].record]))
        #expect(RawVault.run(t.vault.url, "UPDATE meta SET value = ?1 WHERE name = 'integrity'", [oldIntegrity]))
        expectDecode { _ = try t.vault.item(service: "s", account: "a") }
        // A process that opens the file afresh cannot know (see docs/threat-model.md).
        #expect(try reopened(t).item(service: "s", account: "a").secret?.unsafeString == "old")
    }

    @Test func aMissingOrForgedCommitmentIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        let copy = t.directory.file("copy.db")
        try RawVault.copy(t.vault.url, to: copy)
        #expect(RawVault.execute(copy, "DELETE FROM meta WHERE name = 'integrity';"))
        expectDecode { _ = try Vault(url: copy) }
        try RawVault.copy(t.vault.url, to: copy)
        #expect(
            RawVault.run(
                copy, "UPDATE meta SET value = ?1 WHERE name = 'integrity'", [[UInt8](repeating: 0, count: 48)]))
        let v = try Vault(url: copy)
        expectDecode { try v.unlock(password: t.password) }
        #expect(v.isLocked)
    }

    @Test func writesByAnotherConnectionAreAcceptedAndCounted() throws {
        let t = try TestVault()
        let other = try reopened(t)
        let before = try #require(t.vault.writeCounter)
        try other.add(Item(service: "s", account: "a", secret: .text("1")))
        try other.save(service: "s", account: "a", secret: .text("2"))
        #expect(try t.vault.item(service: "s", account: "a").secret?.unsafeString == "2")
        #expect(t.vault.writeCounter == before + 2)
        try t.vault.delete(matching: .key(service: "s", account: "a"))
        #expect(throws: KeychainError.itemNotFound("service \"s\", account \"a\"")) {
            try other.item(service: "s", account: "a")
        }
        #expect(other.writeCounter == before + 3)
    }

    @Test func aFailedWriteLeavesTheCommitmentAsItWas() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        #expect(throws: KeychainError.duplicateItem("service \"s\", account \"a\"")) {
            try t.vault.add(contentsOf: [
                Item(service: "s", account: "b", secret: .text("2")),
                Item(service: "s", account: "a", secret: .text("3")),
            ])
        }
        #expect(try t.vault.allItems().map(\.account) == ["a"])
        try t.vault.add(Item(service: "s", account: "b", secret: .text("2")))
        #expect(try reopened(t).allItems().map(\.account) == ["a", "b"])
    }

    @Test func verifyReportsASoundVault() throws {
        let t = try TestVault()
        for i in 0..<5 { try t.vault.add(Item(service: "s", account: "a\(i)", secret: .text("\(i)"))) }
        let report = try Vault.verify(at: t.vault.url, password: t.password)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.itemCount == 5)
        #expect(report.commitmentVerified == true)
        #expect(report.writeCounter == 5)
        #expect(throws: KeychainError.authFailed) { _ = try Vault.verify(at: t.vault.url, password: .text("wrong")) }
    }

    @Test func verifyNamesADamagedRecordByRowAndARollbackAsAWhole() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        try t.vault.add(Item(service: "s", account: "b", secret: .text("2")))
        let rows = RawVault.rows(t.vault.url)
        var damaged = rows[1].record
        damaged[30] ^= 1
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1 WHERE id = 2", [damaged]))
        let report = try Vault.verify(at: t.vault.url, password: t.password)
        #expect(report.damagedItems.count == 1)
        #expect(report.damagedItems.first?.rowID == 2)
        #expect(report.damagedItems.first?.name == nil)
        #expect(
            report.damagedItems.first?.lookupPrefix
                == rows[1].lookup.prefix(4).map { String(format: "%02x", $0) }.joined())
        #expect(report.commitmentVerified == false)
        // Put back, the record is sound again.
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1 WHERE id = 2", [rows[1].record]))
        #expect(try Vault.verify(at: t.vault.url, password: t.password).isSound)
        // A genuine but older record authenticates: only the commitment tells.
        let other = try Vault(url: t.vault.url)
        try other.unlock(password: t.password)
        try other.save(service: "s", account: "b", secret: .text("newer"))
        #expect(RawVault.run(t.vault.url, "UPDATE items SET record = ?1 WHERE id = 2", [rows[1].record]))
        let rolledBack = try Vault.verify(at: t.vault.url, password: t.password)
        #expect(rolledBack.damagedItems.isEmpty)
        #expect(rolledBack.commitmentVerified == false)
        #expect(rolledBack.problems == ["whole vault: \(Vault.commitmentMismatchText)"])
    }

    @Test func sizesFromTheFileAreBoundedBeforeAnyAllocation() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        let copy = t.directory.file("copy.db")
        try RawVault.copy(t.vault.url, to: copy)
        #expect(RawVault.execute(copy, "UPDATE items SET record = zeroblob(\(Vault.maxRecordBytes + 1));"))
        let v = try Vault(url: copy)
        expectDecode { try v.unlock(password: t.password) }
        let report = try Vault.verify(at: copy, password: t.password)
        #expect(report.damagedItems.first?.problem == "record of \(Vault.maxRecordBytes + 1) bytes is out of bounds")
        try RawVault.copy(t.vault.url, to: copy)
        #expect(RawVault.execute(copy, "UPDATE meta SET value = zeroblob(100000000) WHERE name = 'vault_key';"))
        expectDecode { _ = try Vault(url: copy) }
        try RawVault.copy(t.vault.url, to: copy)
        #expect(RawVault.execute(copy, "UPDATE items SET lookup = x'00';"))
        expectDecode { try Vault(url: copy).unlock(password: t.password) }
    }

    @Test func attributesOverTheirLimitAreParam() throws {
        let t = try TestVault()
        let longLabel = String(repeating: "x", count: Item.maxTextBytes + 1)
        #expect(throws: KeychainError.param("the label is longer than \(Item.maxTextBytes) bytes")) {
            try t.vault.add(Item(service: "s", account: "a", label: longLabel, secret: .text("1")))
        }
        // Each attribute within its own limit, but together over 1 MiB.
        let notes = String(repeating: "n", count: Item.maxNotesBytes)
        #expect(throws: KeychainError.param("item attributes larger than 1 MiB (1048576 bytes) in all")) {
            try t.vault.save(
                service: "s", account: "b", secret: .text("1"), attributes: ItemChanges(label: "l", comment: notes))
        }
        #expect(try t.vault.allItems().isEmpty)
    }
}

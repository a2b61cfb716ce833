import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// Per-item revisions (format 3): every write of an item adds one, and a
/// conditional write succeeds only at the revision its writer read.
@Suite struct RevisionTests {
    private func revision(_ vault: Vault, _ service: String = "s", _ account: String = "a") throws -> UInt64 {
        try vault.item(service: service, account: account).revision
    }

    @Test func anAddIsRevisionOneAndEveryWriteAddsOne() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        #expect(try revision(t.vault) == 1)
        try t.vault.update(matching: .key(service: "s", account: "a"), with: ItemChanges(secret: .text("two")))
        #expect(try revision(t.vault) == 2)
        try t.vault.save(service: "s", account: "a", secret: .text("three"))
        #expect(try revision(t.vault) == 3)
        try t.vault.update(matching: .key(service: "s", account: "a"), with: ItemChanges(service: "t"))
        #expect(try revision(t.vault, "t") == 4)
        #expect(try t.vault.allItems().map(\.revision) == [4])
        try t.vault.save(service: "new", account: "a", secret: .text("n"))
        #expect(try revision(t.vault, "new") == 1)
        var given = Item(service: "x", account: "1", secret: .text("x"))
        given.revision = 9
        try t.vault.add(contentsOf: [given])
        #expect(try revision(t.vault, "x", "1") == 1, "the store sets the revision, not the caller")
    }

    @Test func aStaleConditionalUpdateChangesNothingAndTheCurrentOneSucceeds() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        try t.vault.save(service: "s", account: "a", secret: .text("two"))
        var stale = ItemChanges(label: .some("L"), secret: .text("lost"))
        stale.expectedRevision = 1
        let error = #expect(throws: KeychainError.self) {
            try t.vault.update(matching: .key(service: "s", account: "a"), with: stale)
        }
        #expect(error == .revisionMismatch("service \"s\", account \"a\"", expected: 1, current: 2))
        #expect(error?.exitStatus == 40)
        #expect(
            error?.description
                == "item changed since revision 1 was read: service \"s\", account \"a\", now revision 2 (errSecInvalidItemRef)"
        )
        let kept = try t.vault.item(service: "s", account: "a")
        #expect(kept.secret == .text("two") && kept.label == nil && kept.revision == 2)
        var current = ItemChanges(secret: .text("three"))
        current.expectedRevision = 2
        try t.vault.update(matching: .key(service: "s", account: "a"), with: current)
        #expect(try t.vault.item(service: "s", account: "a").secret == .text("three"))
        #expect(try revision(t.vault) == 3)
    }

    @Test func aConditionalDeleteNeedsTheCurrentRevision() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        try t.vault.save(service: "s", account: "a", secret: .text("two"))
        var query = ItemQuery.key(service: "s", account: "a")
        query.expectedRevision = 1
        #expect(throws: KeychainError.revisionMismatch("service \"s\", account \"a\"", expected: 1, current: 2)) {
            try t.vault.delete(matching: query)
        }
        #expect(try revision(t.vault) == 2)
        query.expectedRevision = 2
        #expect(try t.vault.delete(matching: query) == 1)
        #expect(throws: KeychainError.itemNotFound("service \"s\", account \"a\"")) {
            try t.vault.delete(matching: query)
        }
    }

    @Test func aConditionalSaveNeedsTheRevisionOrZeroForANewItem() throws {
        let t = try TestVault()
        var onlyNew = ItemChanges()
        onlyNew.expectedRevision = 0
        #expect(try t.vault.save(service: "s", account: "a", secret: .text("one"), attributes: onlyNew) == .added)
        #expect(throws: KeychainError.revisionMismatch("service \"s\", account \"a\"", expected: 0, current: 1)) {
            try t.vault.save(service: "s", account: "a", secret: .text("two"), attributes: onlyNew)
        }
        var stale = ItemChanges()
        stale.expectedRevision = 7
        #expect(throws: KeychainError.revisionMismatch("service \"s\", account \"a\"", expected: 7, current: 1)) {
            try t.vault.save(service: "s", account: "a", secret: .text("two"), attributes: stale)
        }
        #expect(throws: KeychainError.itemNotFound("service \"s\", account \"b\"")) {
            try t.vault.save(service: "s", account: "b", secret: .text("two"), attributes: stale)
        }
        #expect(try t.vault.item(service: "s", account: "a").secret == .text("one"))
        var current = ItemChanges()
        current.expectedRevision = 1
        #expect(try t.vault.save(service: "s", account: "a", secret: .text("two"), attributes: current) == .updated)
        #expect(try revision(t.vault) == 2)
        #expect(try t.vault.allItems().count == 1)
    }

    /// `fob mv`: a rename in one transaction keeps everything but the name.
    @Test func aRenameKeepsTheSecretDatesAndPersistentIDAndAddsOneRevision() throws {
        let t = try TestVault()
        try t.vault.add(
            Item(
                service: "old.example", account: "ana", label: "L", url: "https://old.example",
                customFields: [CustomField(name: "pin", value: .text("1234"), isHidden: true)], secret: .text("pw")))
        try t.vault.add(Item(service: "taken", account: "ana", secret: .text("other")))
        let before = try t.vault.item(service: "old.example", account: "ana")
        let rename = ItemChanges(service: "new.example", account: "bo")
        try t.vault.update(matching: .key(service: "old.example", account: "ana"), with: rename)
        let after = try t.vault.item(service: "new.example", account: "bo")
        #expect(after.secret == .text("pw") && after.label == "L" && after.url == "https://old.example")
        #expect(after.customFields == before.customFields)
        #expect(after.created == before.created && after.persistentID == before.persistentID)
        #expect(after.revision == before.revision + 1)
        #expect(throws: KeychainError.itemNotFound("service \"old.example\", account \"ana\"")) {
            try t.vault.item(service: "old.example", account: "ana")
        }
        #expect(throws: KeychainError.duplicateItem("service \"taken\", account \"ana\"")) {
            try t.vault.update(
                matching: .key(service: "new.example", account: "bo"),
                with: ItemChanges(service: "taken", account: "ana"))
        }
        #expect(try t.vault.item(service: "new.example", account: "bo").revision == after.revision)
        #expect(try t.vault.item(service: "taken", account: "ana").secret == .text("other"))
    }

    @Test func revisionsSurvivePasswdBackupAndVerify() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        for secret in ["two", "three"] { try t.vault.save(service: "s", account: "a", secret: .text(secret)) }
        try t.vault.changePassword(to: .text("new password"), kdf: .testing)
        #expect(try revision(t.vault) == 3)
        let copy = t.directory.file("backup.db")
        try t.vault.backup(to: copy)
        let restored = try Vault(url: copy)
        try restored.unlock(password: .text("new password"))
        #expect(try revision(restored) == 3)
        let report = try Vault.verify(at: copy, password: .text("new password"))
        #expect(report.isSound && report.format == 3, "\(report.problems)")
        #expect(try revision(restored) == 3)
    }

    @Test func anImportAddsAtOneAndReplacesOnlyTheRevisionItRead() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        let read = try t.vault.item(service: "s", account: "a")
        try t.vault.applyImport([
            .add(Item(service: "n", account: "a", secret: .text("n"))),
            .replace(existing: read, with: Item(service: "s", account: "a", secret: .text("imported"))),
        ])
        #expect(try revision(t.vault, "n") == 1)
        #expect(try revision(t.vault) == 2)
        #expect(throws: KeychainError.revisionMismatch("service \"s\", account \"a\"", expected: 1, current: 2)) {
            try t.vault.applyImport([
                .replace(existing: read, with: Item(service: "s", account: "a", secret: .text("stale")))
            ])
        }
        #expect(try t.vault.item(service: "s", account: "a").secret == .text("imported"))
        var unknown = read
        unknown.revision = 0
        try t.vault.applyImport([
            .replace(existing: unknown, with: Item(service: "s", account: "a", secret: .text("x")))
        ])
        #expect(try revision(t.vault) == 3)
    }

    /// An item put back after its delete (an undo) goes on from its last
    /// revision: it was at 3, it comes back at 4, not at 1.
    @Test func anItemPutBackKeepsItsRevisionLine() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        try t.vault.save(service: "s", account: "a", secret: .text("two"))
        try t.vault.save(service: "s", account: "a", secret: .text("three"))
        var deleted = try t.vault.item(service: "s", account: "a")
        #expect(deleted.revision == 3)
        try t.vault.delete(matching: .key(service: "s", account: "a"))
        deleted.revision += 1
        try t.vault.applyImport([.add(deleted)])
        #expect(try revision(t.vault) == 4)
        #expect(try t.vault.item(service: "s", account: "a").secret == .text("three"))
        #expect(try Vault.verify(at: t.directory.file("vault.db"), password: t.password).isSound)
    }

    @Test func anImportDeletesOnlyTheRevisionItReadInTheSameTransaction() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("one")))
        try t.vault.add(Item(service: "t", account: "a", secret: .text("two")))
        let read = try t.vault.item(service: "s", account: "a")
        try t.vault.update(matching: .key(service: "s", account: "a"), with: ItemChanges(secret: .text("newer")))
        // A deletion of a revision that moved on fails the whole plan.
        #expect(throws: KeychainError.revisionMismatch("service \"s\", account \"a\"", expected: 1, current: 2)) {
            try t.vault.applyImport([
                .add(Item(service: "n", account: "a", secret: .text("n"))), .delete(existing: read),
            ])
        }
        #expect(throws: KeychainError.itemNotFound("service \"n\", account \"a\"")) {
            try t.vault.item(service: "n", account: "a")
        }
        let current = try t.vault.item(service: "s", account: "a")
        try t.vault.applyImport([
            .add(Item(service: "n", account: "a", secret: .text("n"))), .delete(existing: current),
        ])
        #expect(throws: KeychainError.itemNotFound("service \"s\", account \"a\"")) {
            try t.vault.item(service: "s", account: "a")
        }
        #expect(try t.vault.count() == 2)
        #expect(try Vault.verify(at: t.vault.url, password: t.password).isSound)
    }

    @Test func theRevisionTravelsInTheItemEncoding() throws {
        var item = Item(service: "s", account: "a", secret: .text("x"))
        item.revision = 0x0102_0304_0506_0708
        let decoded = try ItemWire.encode(item).withUnsafeBytes { raw in
            try Result { () throws(KeychainError) in try ItemWire.decode(raw) }.get()
        }
        #expect(decoded.revision == 0x0102_0304_0506_0708)
    }
}

/// Format 2 (no revisions) to format 3, and refusing formats this build does not know.
@Suite struct FormatThreeMigrationTests {
    private func formatTwoVault() throws -> TestVault {
        let t = try TestVault()
        try t.vault.add(Item(service: "mail", account: "ana", label: "Mail", secret: .text("m")))
        try t.vault.add(
            Item(service: "api", account: "ci", kind: .token, accessible: .afterFirstUnlock, secret: .text("t")))
        try t.vault.save(service: "mail", account: "ana", secret: .text("m2"))
        try V2Writer.downgrade(t.vault, password: t.password)
        return t
    }

    @Test func aFormatTwoVaultMigratesOnceInOneTransactionWithRevisionOne() throws {
        let t = try formatTwoVault()
        let url = t.vault.url
        #expect(RawVault.userVersion(url) == 2)
        let before = try Vault.verify(at: url, password: t.password)
        #expect(before.isSound && before.format == 2, "\(before.problems)")
        let vault = try Vault(url: url)
        #expect(throws: KeychainError.authFailed) { try vault.unlock(password: .text("wrong")) }
        #expect(RawVault.userVersion(url) == 2)
        try vault.unlock(password: t.password)
        #expect(RawVault.userVersion(url) == 3)
        #expect(vault.writeCounter == before.writeCounter.map { $0 + 1 })
        let mail = try vault.item(service: "mail", account: "ana")
        #expect(mail.secret == .text("m2") && mail.label == "Mail" && mail.revision == 1)
        let token = try vault.item(service: "api", account: "ci")
        #expect(token.accessible == .afterFirstUnlock && token.revision == 1)
        let after = try Vault.verify(at: url, password: t.password)
        #expect(after.isSound && after.format == 3, "\(after.problems)")
        // Once: a second unlock finds format 3 and rewrites nothing.
        let rows = RawVault.rows(url)
        let again = try Vault(url: url)
        try again.unlock(password: t.password)
        #expect(RawVault.rows(url).map(\.record) == rows.map(\.record))
        try again.save(service: "mail", account: "ana", secret: .text("m3"))
        #expect(try vault.item(service: "mail", account: "ana").revision == 2)
    }

    @Test func aMigrationThatFailsHalfWayLeavesFormatTwoIntact() throws {
        let t = try formatTwoVault()
        let url = t.vault.url
        let rows = RawVault.rows(url)
        var damaged = rows[rows.count - 1].record
        damaged[damaged.count - 1] ^= 0x40
        #expect(RawVault.run(url, "UPDATE items SET record = ?1 WHERE id = \(rows[rows.count - 1].id)", [damaged]))
        RawVault.checkpoint(url)
        let vault = try Vault(url: url)
        expectDecode { try vault.unlock(password: t.password) }
        #expect(vault.isLocked)
        #expect(RawVault.userVersion(url) == 2)
        #expect(RawVault.rows(url).map(\.record) == rows.map(\.record).dropLast() + [damaged])
        #expect(
            RawVault.run(
                url, "UPDATE items SET record = ?1 WHERE id = \(rows[rows.count - 1].id)", [rows[rows.count - 1].record]
            ))
        try vault.unlock(password: t.password)
        #expect(RawVault.userVersion(url) == 3)
        #expect(try vault.item(service: "mail", account: "ana").revision == 1)
    }

    /// A format-3 file labelled format 2 would let a format-2 fob write
    /// without revisions: refused as damage, not migrated, not a wrong password.
    @Test func aFormatLabelSetBackToTwoIsDecode() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("x")))
        #expect(RawVault.execute(t.vault.url, "PRAGMA user_version=2;"))
        let vault = try Vault(url: t.vault.url)
        expectDecode { try vault.unlock(password: t.password) }
        #expect(RawVault.userVersion(t.vault.url) == 2)
    }

    /// Every format-3 record holds a revision: verify names one that does not.
    @Test func verifyNamesAFormatThreeRecordWithoutARevision() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("x")))
        try V2Writer.downgrade(t.vault, password: t.password, format: 3)
        let report = try Vault.verify(at: t.vault.url, password: t.password)
        #expect(report.commitmentVerified == true)
        #expect(
            report.damagedItems.map(\.description) == ["service \"s\", account \"a\" (row 1): record has no revision"])
    }

    /// What a fob older than the file says: the format and that a newer fob wrote it.
    @Test func aNewerFormatIsRefusedWithAClearMessage() throws {
        let t = try TestVault()
        #expect(RawVault.execute(t.vault.url, "PRAGMA user_version=4;"))
        let error = #expect(throws: KeychainError.self) { try Vault(url: t.vault.url) }
        #expect(error?.exitStatus == 93)
        #expect(
            error?.description
                == "vault damaged, tampered with, or not a Fob vault: vault format 4 is not supported by this fob (format 3): a newer fob wrote it; use that version or a later one (errSecDecode)"
        )
    }
}

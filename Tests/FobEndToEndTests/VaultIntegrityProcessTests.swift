import FobStore
import FobTestSupport
import Foundation
import Testing

// The built `fob` against vault files edited by an attacker with the file and
// no key: every such edit is exit 93 with nothing on stdout, and `fob verify`
// reports it.

/// Exit 93, nothing on stdout, one line on stderr naming errSecDecode.
private func expect93(_ result: ProcessResult, _ note: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.signal == nil && !result.timedOut, "\(note)", sourceLocation: sourceLocation)
    #expect(result.status == 93, "\(note): \(result.status) \(result.stderrText)", sourceLocation: sourceLocation)
    #expect(result.stdout.isEmpty, "\(note): \(result.stdoutText)", sourceLocation: sourceLocation)
    #expect(result.stderrText.contains("errSecDecode"), "\(note)", sourceLocation: sourceLocation)
    #expect(
        result.stderrText.split(separator: "\n").count == 1, "\(note): \(result.stderrText)",
        sourceLocation: sourceLocation)
}

@Suite struct VaultIntegrityProcessTests {
    private func vault() throws -> ProcessTestVault {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "mail", "ana"], input: "old secret").status == 0)
        #expect(try v.run(["add", "web", "bo"], input: "other").status == 0)
        return v
    }

    /// Every command that reads or writes items is 93 and prints nothing.
    private func expectEveryCommand93(_ v: ProcessTestVault, _ note: String) throws {
        for arguments in [
            ["get", "mail", "ana"], ["get", "web", "bo"], ["ls"], ["save", "mail", "ana"],
            ["update", "web", "bo"], ["rm", "web", "bo"], ["add", "new", "one"],
        ] {
            expect93(try v.run(arguments, input: "changed"), "\(note) \(arguments)")
        }
    }

    @Test func verifyOfASoundVaultIsOneLineAndExit0() throws {
        let v = try vault()
        let result = try v.run(["verify"])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(
            result.stdoutText
                == "Vault sound: 2 items, every record authenticated, whole-vault commitment verified (write 2), access log verified (2 entries), SQLite integrity ok: \(v.path)\n"
        )
        #expect(result.stderr.isEmpty)
    }

    @Test func aRolledBackItemIsExit93AndVerifyReportsTheCommitment() throws {
        let v = try vault()
        VaultFile.checkpoint(v.path)
        let old = VaultFile.records(v.path)[0]
        #expect(try v.run(["update", "mail", "ana"], input: "new secret").status == 0)
        #expect(VaultFile.execute(v.path, "UPDATE items SET record = ?1 WHERE id = 1", blobs: [old]))
        try expectEveryCommand93(v, "rollback")
        let verify = try v.run(["verify"])
        #expect(verify.status == 93)
        #expect(
            verify.stdoutText
                == "damaged: whole vault: the items do not match the vault's commitment (an item was rolled back, removed, restored or added outside fob)\n"
        )
        #expect(
            verify.stderrText
                == "fob: vault damaged, tampered with, or not a Fob vault: fob verify found 1 problem in \(v.path) (errSecDecode)\n"
        )
    }

    @Test func aDeletedItemBroughtBackIsExit93() throws {
        let v = try vault()
        VaultFile.checkpoint(v.path)
        let row = VaultFile.rows(v.path)[1]
        #expect(try v.run(["rm", "web", "bo"]).status == 0)
        #expect(
            VaultFile.execute(
                v.path, "INSERT INTO items(lookup, record) VALUES (?1, ?2)", blobs: [row.lookup, row.record]))
        try expectEveryCommand93(v, "resurrected")
        #expect(try v.run(["verify"]).status == 93)
    }

    /// A trigger that reverts writes would make every save, update and delete
    /// report success while nothing changes.
    @Test func aPlantedTriggerIsExit93AndNoWriteReportsSuccess() throws {
        let v = try vault()
        #expect(
            VaultFile.execute(
                v.path,
                """
                CREATE TRIGGER revert AFTER UPDATE ON items BEGIN UPDATE items SET record = OLD.record WHERE id = NEW.id; END;
                """))
        try expectEveryCommand93(v, "trigger")
        let verify = try v.run(["verify"])
        #expect(verify.status == 93)
        #expect(
            verify.stdoutText == "damaged: schema: unexpected trigger \"revert\" on \"items\"\n", "\(verify.stdoutText)"
        )
    }

    @Test(arguments: [
        "CREATE VIEW v AS SELECT * FROM items;",
        "CREATE TABLE extra(x);",
        """
        CREATE TABLE items2(id INTEGER PRIMARY KEY, lookup BLOB NOT NULL, record BLOB NOT NULL);
        INSERT INTO items2 SELECT * FROM items; DROP TABLE items; ALTER TABLE items2 RENAME TO items;
        """,
    ])
    func anotherSchemaIsExit93(sql: String) throws {
        let v = try vault()
        #expect(VaultFile.execute(v.path, sql))
        try expectEveryCommand93(v, sql)
        let verify = try v.run(["verify"])
        #expect(verify.status == 93)
        #expect(verify.stdoutText.hasPrefix("damaged: schema: "), "\(verify.stdoutText)")
    }

    @Test func verifyNamesADamagedRecordByRowAndLookup() throws {
        let v = try vault()
        VaultFile.checkpoint(v.path)
        let row = VaultFile.rows(v.path)[1]
        var damaged = row.record
        damaged[damaged.count / 2] ^= 0x01
        #expect(VaultFile.execute(v.path, "UPDATE items SET record = ?1 WHERE id = 2", blobs: [damaged]))
        let verify = try v.run(["verify"])
        #expect(verify.status == 93)
        let prefix = row.lookup.prefix(4).map { String(format: "%02x", $0) }.joined()
        #expect(
            verify.stdoutText == """
                damaged: row 2 (lookup \(prefix)…): record fails authentication
                damaged: whole vault: the items do not match the vault's commitment (an item was rolled back, removed, restored or added outside fob)

                """, "\(verify.stdoutText)")
        #expect(verify.stderrText.contains("2 problems"))
    }

    @Test func verifyWithAWrongPasswordIs51() throws {
        let v = try vault()
        let wrong = v.directory.file("wrong").path
        try Data("nope\n".utf8).write(to: URL(fileURLWithPath: wrong))
        let result = try v.run(["verify"], environment: ["FOB_PASSWORD_FILE": wrong])
        #expect(result.status == 51)
        #expect(result.stdout.isEmpty)
    }

    /// A memlimit of 4 TiB (within libsodium's limits) once hung passwd or
    /// exhausted memory; now every command refuses it at once.
    @Test(arguments: [("memlimit", "4398046510080"), ("opslimit", "4294967295")])
    func kdfSettingsAboveTheCapAreExit93AtOnce(name: String, value: String) throws {
        let v = try vault()
        #expect(VaultFile.execute(v.path, "UPDATE meta SET value = CAST('\(value)' AS BLOB) WHERE name = '\(name)';"))
        let newPassword = v.directory.file("new").path
        try Data("new password\n".utf8).write(to: URL(fileURLWithPath: newPassword))
        let start = Date()
        for arguments in [["passwd", "--new-password-file", newPassword], ["get", "mail", "ana"], ["verify"]] {
            expect93(try v.run(arguments, timeout: 20), "\(name)=\(value) \(arguments)")
        }
        #expect(Date().timeIntervalSince(start) < 10)
    }

    @Test func passwdRotatesTheKeyAndEveryItemStillReads() throws {
        let v = try vault()
        VaultFile.checkpoint(v.path)
        let before = VaultFile.rows(v.path)
        let newPassword = v.directory.file("new").path
        try Data("new password\n".utf8).write(to: URL(fileURLWithPath: newPassword))
        let passwd = try v.run(["passwd", "--new-password-file", newPassword])
        #expect(passwd.status == 0, "\(passwd.stderrText)")
        let after = VaultFile.rows(v.path)
        #expect(after.count == 2)
        for (a, b) in zip(before, after) { #expect(a.lookup != b.lookup && a.record != b.record) }
        #expect(try v.run(["get", "mail", "ana"]).status == 51)
        let got = try v.run(["get", "mail", "ana"], environment: ["FOB_PASSWORD_FILE": newPassword])
        #expect(got.stdoutText == "old secret\n")
        #expect(try v.run(["verify"], environment: ["FOB_PASSWORD_FILE": newPassword]).status == 0)
    }
}

@Suite struct MigrationProcessTests {
    @Test func fobMigratesAFormatOneVaultOnItsFirstUnlock() throws {
        let v = try ProcessTestVault(password: V1Fixture.password, create: false)
        try V1Fixture.write(to: URL(fileURLWithPath: v.path))
        let before = try Data(contentsOf: URL(fileURLWithPath: v.path))
        let check = try v.run(["verify"])
        #expect(check.status == 0, "\(check.stderrText)")
        #expect(check.stdoutText.contains("format 1"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: v.path)) == before)
        let list = try v.run(["ls"])
        #expect(list.status == 0, "\(list.stderrText)")
        for item in V1Fixture.items {
            let got = try v.run(["get", item.service, item.account, "--raw"])
            #expect(got.stdout == item.secret, "\(item.service)")
        }
        let verify = try v.run(["verify"])
        #expect(verify.status == 0)
        #expect(verify.stdoutText.contains("whole-vault commitment verified (write 1)"), "\(verify.stdoutText)")
    }
}

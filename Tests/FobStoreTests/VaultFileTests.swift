import CSQLite
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobStore

/// The vault file on disk: permissions, what it reveals, and what happens
/// when it is damaged or foreign.
@Suite(.serialized) struct VaultFileTests {
    private func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : 0
    }

    @Test func filesAre0600AndNewDirectories0700WhateverTheUmask() throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("a/b/vault.db")
        let old = umask(0)
        defer { umask(old) }
        let vault = try Vault.create(at: url, password: .text("pw"), kdf: .testing)
        try vault.add(Item(service: "s", account: "a", secret: .text("1")))
        #expect(mode(url.path) == 0o600)
        #expect(mode(url.path + "-wal") == 0o600)
        #expect(mode(url.path + "-shm") == 0o600)
        #expect(mode(dir.url.appendingPathComponent("a").path) == 0o700)
        #expect(mode(dir.url.appendingPathComponent("a/b").path) == 0o700)
    }

    @Test func createRefusesToOverwrite() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("1")))
        #expect(
            thrownKeychainError {
                _ = try Vault.create(at: t.vault.url, password: .text("other"), kdf: .testing)
            }?.statusName == "errSecIO")
        let again = try Vault(url: t.vault.url)
        try again.unlock(password: t.password)
        #expect(try again.allItems().count == 1)
    }

    @Test func missingVaultIsNoSuchKeychain() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("none.db")
        #expect(throws: KeychainError.noSuchKeychain(url.path)) { _ = try Vault(url: url) }
        #expect(KeychainError.noSuchKeychain(url.path).exitStatus == 50)
    }

    @Test func lockingAVaultWhoseDirectoryIsMissingIsNoSuchKeychain() throws {
        // `fob sync join` on a machine without a vault said "I/O error: cannot open …/vault.db.lock".
        let dir = TemporaryDirectory()
        let url = dir.file("missing/fob/vault.db")
        #expect(throws: KeychainError.noSuchKeychain(url.path)) {
            try Vault.withExclusiveLock(vaultURL: url) { Issue.record("ran without the lock") }
        }
    }

    @Test func fileHoldsNoNameLabelOrSecretInClear() throws {
        let t = try TestVault()
        let secrets = ["service-MARKER-1", "account-MARKER-2", "label-MARKER-3", "secret-MARKER-4", "comment-MARKER-5"]
        try t.vault.add(
            Item(
                service: secrets[0], account: secrets[1], label: secrets[2], comment: secrets[4],
                secret: .text(secrets[3])))
        var bytes = Data()
        for suffix in ["", "-wal", "-shm"] {
            bytes.append((try? Data(contentsOf: URL(fileURLWithPath: t.vault.url.path + suffix))) ?? Data())
        }
        #expect(bytes.count > 0)
        for marker in secrets + ["MARKER"] {
            #expect(bytes.range(of: Data(marker.utf8)) == nil, "found \(marker) in the vault file")
        }
    }

    @Test func randomFileIsNotAVault() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("random.db")
        try Data(Sodium.randomBytes(8192)).write(to: url)
        #expect(thrownKeychainError { _ = try Vault(url: url) }?.statusName == "errSecDecode")
        do { _ = try Vault(url: url) } catch { #expect(error.exitStatus == 93) }
    }

    @Test func otherSQLiteDatabaseIsNotAVault() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("other.db")
        var db: OpaquePointer?
        sqlite3_open(url.path, &db)
        sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1);", nil, nil, nil)
        sqlite3_close(db)
        #expect(throws: KeychainError.decode("not a Fob vault: \(url.path)")) { _ = try Vault(url: url) }
    }

    @Test func emptyFileIsNotAVault() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("empty.db")
        _ = FileManager.default.createFile(atPath: url.path, contents: Data())
        #expect(thrownKeychainError { _ = try Vault(url: url) }?.statusName == "errSecDecode")
    }

    @Test func truncatedVaultFailsCleanly() throws {
        let t = try TestVault()
        for i in 0..<50 {
            try t.vault.add(Item(service: "s", account: "a\(i)", secret: .text(String(repeating: "x", count: 500))))
        }
        try checkpoint(t.vault.url)
        let full = try Data(contentsOf: t.vault.url)
        for size in [0, 50, 100, 4096, full.count / 2, full.count - 1] {
            let copy = TemporaryDirectory()
            let url = copy.file("v.db")
            try full.prefix(size).write(to: url)
            do {
                let v = try Vault(url: url)
                try v.unlock(password: t.password)
                let items = try v.items(matching: ItemQuery(), withSecrets: true)
                // Whatever is returned must be exactly what was stored.
                for item in items { #expect(item.secret?.unsafeString == String(repeating: "x", count: 500)) }
            } catch {
                #expect([93, 51, 1].contains(error.exitStatus), "size \(size): \(error)")
            }
        }
    }

    /// Flips every byte of the record area, one at a time: every read either
    /// fails with `.decode` or returns exactly the stored values.
    @Test func everySingleByteFlipOfARecordIsDetected() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "svc", account: "acct", label: "L", secret: .text("the secret")))
        let (records, lookups) = try rawRows(t.vault.url)
        #expect(records.count == 1)
        for index in 0..<records[0].count {
            var damaged = records[0]
            damaged[index] ^= 0x01
            try setRecord(t.vault.url, damaged)
            expectDecode("byte \(index)") { _ = try t.vault.item(service: "svc", account: "acct") }
        }
        for index in 0..<lookups[0].count {
            var damaged = lookups[0]
            damaged[index] ^= 0x80
            try setRecord(t.vault.url, records[0], lookup: damaged)
            #expect(thrownKeychainError { _ = try t.vault.allItems() }?.statusName == "errSecDecode")
        }
        try setRecord(t.vault.url, records[0], lookup: lookups[0])
        #expect(try t.vault.item(service: "svc", account: "acct").secret?.unsafeString == "the secret")
    }

    @Test func recordsSwappedBetweenRowsAreDetected() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("A")))
        try t.vault.add(Item(service: "s", account: "b", secret: .text("B")))
        try execute(
            t.vault.url,
            """
            UPDATE items SET record = (SELECT record FROM items WHERE id = 2) WHERE id = 1;
            """)
        expectDecode { _ = try t.vault.item(service: "s", account: "a") }
    }

    @Test func tamperedKDFParametersFailAuthentication() throws {
        let t = try TestVault()
        try execute(t.vault.url, "UPDATE meta SET value = CAST('2' AS BLOB) WHERE name = 'opslimit';")
        let v = try Vault(url: t.vault.url)
        #expect(throws: KeychainError.authFailed) { try v.unlock(password: t.password) }
    }

    @Test func changingThePasswordReEncryptsEveryRecord() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("kept")))
        let (before, _) = try rawRows(t.vault.url)
        try t.vault.changePassword(to: .text("new password"))
        let (after, _) = try rawRows(t.vault.url)
        #expect(before.count == after.count && before != after)
        let v = try Vault(url: t.vault.url)
        #expect(throws: KeychainError.authFailed) { try v.unlock(password: t.password) }
        try v.unlock(password: .text("new password"))
        #expect(try v.item(service: "s", account: "a").secret?.unsafeString == "kept")
    }

    @Test func masterPasswordIsNormalisedToNFC() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("v.db")
        _ = try Vault.create(at: url, password: .text("\u{C9}t\u{E9} \u{E7}a \u{1F511}"), kdf: .testing)
        let v = try Vault(url: url)
        try v.unlock(password: .text("E\u{301}te\u{301} c\u{327}a \u{1F511}"))
        #expect(!v.isLocked)
    }

    @Test(arguments: [1, 1024, 4096])
    func longAndShortMasterPasswords(length: Int) throws {
        for unit in ["a", "\u{C9}", "\u{E7}", "\u{1F511}"] {
            let dir = TemporaryDirectory()
            let url = dir.file("v.db")
            let password = String(repeating: unit, count: length)
            _ = try Vault.create(at: url, password: .text(password), kdf: .testing)
            let v = try Vault(url: url)
            try v.unlock(password: .text(password))
            #expect(!v.isLocked)
            #expect(throws: KeychainError.authFailed) { try Vault(url: url).unlock(password: .text(password + "a")) }
        }
    }

    @Test func passwordLimitsAreNamed() throws {
        let dir = TemporaryDirectory()
        #expect(throws: KeychainError.param("the master password is longer than 65536 bytes")) {
            _ = try Vault.create(
                at: dir.file("a.db"), password: SecretBytes([UInt8](repeating: 0x61, count: 65_537)), kdf: .testing)
        }
        #expect(throws: KeychainError.param("the master password is empty")) {
            _ = try Vault.create(at: dir.file("b.db"), password: SecretBytes([]), kdf: .testing)
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("a.db").path))
        _ = try Vault.create(
            at: dir.file("c.db"), password: SecretBytes([UInt8](repeating: 0x61, count: 65_536)), kdf: .testing)
    }

    @Test func errorTextsNeverContainTheSecret() throws {
        let t = try TestVault()
        try t.vault.add(Item(service: "s", account: "a", secret: .text("SECRET-VALUE")))
        var messages: [String] = []
        do { try t.vault.add(Item(service: "s", account: "a", secret: .text("SECRET-VALUE"))) } catch {
            messages.append(error.description)
        }
        do { try t.vault.unlock(password: .text("SECRET-VALUE")) } catch { messages.append(error.description) }
        #expect(messages.count == 2)
        #expect(messages.allSatisfy { !$0.contains("SECRET-VALUE") })
        #expect(SecretBytes.text("SECRET-VALUE").description == "SecretBytes(12 bytes)")
    }

    /// A save on a full disk fails with a clear error and loses nothing.
    @Test func diskFullFailsCleanlyAndKeepsEarlierItems() throws {
        let dir = TemporaryDirectory()
        let mountPoint = dir.file("tiny")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        // Needs root (as CI and the test script run); a tiny tmpfs fills up for real.
        try #require(
            mount("tmpfs", mountPoint.path, "tmpfs", 0, "size=512k") == 0, "cannot mount a tmpfs: run the tests as root"
        )
        defer { umount2(mountPoint.path, Int32(MNT_DETACH)) }
        let url = mountPoint.appendingPathComponent("vault.db")
        let vault = try Vault.create(at: url, password: .text("pw"), kdf: .testing)
        var stored = 0
        var failure: KeychainError?
        let blob = String(repeating: "z", count: 16_000)
        for i in 0..<200 {
            do {
                try vault.save(service: "s", account: "a\(i)", secret: .text(blob))
                stored += 1
            } catch {
                failure = error
                break
            }
        }
        let error = try #require(failure)
        #expect(error.description.contains("disk full") || error.description.contains("I/O"), "\(error)")
        #expect(stored > 0)
        let reopened = try Vault(url: url)
        try reopened.unlock(password: .text("pw"))
        let items = try reopened.items(matching: ItemQuery(), withSecrets: true)
        #expect(items.count == stored)
        #expect(items.allSatisfy { $0.secret?.unsafeString == blob })
        #expect(try integrityCheck(url) == "ok")
    }

    @Test func openingWaitsForAnotherProcessHoldingTheVaultLocked() throws {
        // Three `fob sync` runs at once failed with "vault busy: database is
        // locked": the first read of a new connection ran before its busy
        // timeout was set, so a lock held for a moment by another process
        // failed at once instead of waiting.
        let dir = TemporaryDirectory()
        let url = dir.file("vault.db")
        do {
            let vault = try Vault.create(at: url, password: .text("pw"), kdf: .testing)
            try vault.add(Item(service: "s", account: "a", secret: .text("1")))
        }
        var holder: OpaquePointer?
        #expect(sqlite3_open(url.path, &holder) == SQLITE_OK)
        let held = sqlite3_exec(
            holder, "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE; SELECT count(*) FROM items;", nil, nil, nil)
        #expect(held == SQLITE_OK)
        let handle = UnsafeSendable(holder)
        let release = Thread {
            usleep(400_000)
            sqlite3_exec(handle.value, "COMMIT", nil, nil, nil)
            sqlite3_close(handle.value)
        }
        release.start()
        let opened = try Vault(url: url)
        try opened.unlock(password: .text("pw"))
        #expect(try opened.allItems().map(\.account) == ["a"])
    }

    // MARK: - Raw file access

    private func checkpoint(_ url: URL) throws { try execute(url, "PRAGMA wal_checkpoint(TRUNCATE);") }

    private func execute(_ url: URL, _ sql: String) throws {
        var db: OpaquePointer?
        #expect(sqlite3_open(url.path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK)
    }

    private func integrityCheck(_ url: URL) throws -> String {
        var db: OpaquePointer?
        sqlite3_open(url.path, &db)
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        guard sqlite3_step(stmt) == SQLITE_ROW, let p = sqlite3_column_text(stmt, 0) else { return "no answer" }
        return String(cString: p)
    }

    private func rawRows(_ url: URL) throws -> ([[UInt8]], [[UInt8]]) {
        var db: OpaquePointer?
        sqlite3_open(url.path, &db)
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT record, lookup FROM items ORDER BY id", -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        var records: [[UInt8]] = []
        var lookups: [[UInt8]] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            for (column, target) in [(Int32(0), 0), (Int32(1), 1)] {
                let n = Int(sqlite3_column_bytes(stmt, column))
                let bytes = Array(UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, column), count: n))
                if target == 0 { records.append(bytes) } else { lookups.append(bytes) }
            }
        }
        return (records, lookups)
    }

    private func setRecord(_ url: URL, _ record: [UInt8], lookup: [UInt8]? = nil) throws {
        var db: OpaquePointer?
        sqlite3_open(url.path, &db)
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        let sql = lookup == nil ? "UPDATE items SET record = ?1" : "UPDATE items SET record = ?1, lookup = ?2"
        sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        record.withUnsafeBytes {
            _ = sqlite3_bind_blob(stmt, 1, $0.baseAddress, Int32($0.count), fob_sqlite_transient())
        }
        if let lookup {
            lookup.withUnsafeBytes {
                _ = sqlite3_bind_blob(stmt, 2, $0.baseAddress, Int32($0.count), fob_sqlite_transient())
            }
        }
        #expect(sqlite3_step(stmt) == SQLITE_DONE)
    }
}

/// A C handle handed to another thread by a test that hands it over once.
private struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

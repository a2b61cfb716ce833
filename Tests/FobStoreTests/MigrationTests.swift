import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// Format 1 (fob 0.1.0, see ``V1Fixture``) to format 2.
@Suite struct MigrationTests {
    private func fixture() throws -> (dir: TemporaryDirectory, url: URL) {
        let dir = TemporaryDirectory()
        let url = dir.file("v1.db")
        try V1Fixture.write(to: url)
        return (dir, url)
    }

    private func expectFixtureItems(_ vault: Vault, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(
            try vault.allItems().filter { $0.service != "new" }.map(\.account) == V1Fixture.items.map(\.account),
            sourceLocation: sourceLocation)
        for expected in V1Fixture.items {
            let item = try vault.item(service: expected.service, account: expected.account)
            #expect(item.secret == SecretBytes(expected.secret), "\(expected.service)", sourceLocation: sourceLocation)
        }
        #expect(try vault.item(service: "mail", account: "ana").label == "Mail", sourceLocation: sourceLocation)
        let token = try vault.item(service: "api", account: "ci")
        #expect(token.kind == .token && token.comment == "CI token", sourceLocation: sourceLocation)
    }

    @Test func aFormatOneVaultOpensAndIsMigratedOnUnlock() throws {
        let f = try fixture()
        let url = f.url
        let before = RawVault.rows(url)
        let vault = try Vault(url: url)
        #expect(vault.isLocked)
        #expect(RawVault.userVersion(url) == 1)
        #expect(throws: KeychainError.authFailed) { try vault.unlock(password: .text("wrong")) }
        #expect(RawVault.userVersion(url) == 1)
        try vault.unlock(password: .text(V1Fixture.password))
        #expect(RawVault.userVersion(url) == Int64(Vault.formatVersion))
        try expectFixtureItems(vault)
        // Every row was re-sealed under a new vault key.
        let after = RawVault.rows(url)
        #expect(after.count == before.count)
        for (a, b) in zip(before, after) { #expect(a.lookup != b.lookup && a.record != b.record) }
        let report = try Vault.verify(at: url, password: .text(V1Fixture.password))
        #expect(report.isSound, "\(report.problems)")
        #expect(report.format == Vault.formatVersion)
        #expect(report.commitmentVerified == true)
        // Writes after the migration, and a copy of the migrated file.
        try vault.add(Item(service: "new", account: "n", accessible: .afterFirstUnlock, secret: .text("n")))
        let copy = url.deletingLastPathComponent().appendingPathComponent("copy.db")
        try RawVault.copy(url, to: copy)
        let reopened = try Vault(url: copy)
        try reopened.unlock(password: .text(V1Fixture.password))
        #expect(try reopened.item(service: "new", account: "n").secret?.unsafeString == "n")
        try expectFixtureItems(reopened)
    }

    @Test func eachCopyOfAFormatOneVaultMigratesOnItsOwn() throws {
        let f = try fixture()
        let url = f.url
        let dir = f.dir
        let copy = dir.file("copy.db")
        try RawVault.copy(url, to: copy)
        for file in [url, copy] {
            let vault = try Vault(url: file)
            try vault.unlock(password: .text(V1Fixture.password))
            try expectFixtureItems(vault)
        }
    }

    @Test func verifyOfAFormatOneVaultChangesNothing() throws {
        let f = try fixture()
        let url = f.url
        let before = try Data(contentsOf: url)
        let report = try Vault.verify(at: url, password: .text(V1Fixture.password))
        #expect(report.isSound, "\(report.problems)")
        #expect(report.format == 1)
        #expect(report.commitmentVerified == nil)
        #expect(report.itemCount == V1Fixture.items.count)
        #expect(try Data(contentsOf: url) == before)
    }

    /// The migration is one transaction: when it fails half-way (here at a
    /// damaged last record, after earlier rows were rewritten), the file is
    /// format 1 exactly as before, and migrates once repaired.
    @Test func aMigrationThatFailsHalfWayLeavesFormatOneIntact() throws {
        let f = try fixture()
        let url = f.url
        let rows = RawVault.rows(url)
        var damaged = rows[rows.count - 1].record
        damaged[damaged.count - 1] ^= 0x40
        #expect(RawVault.run(url, "UPDATE items SET record = ?1 WHERE id = \(rows[rows.count - 1].id)", [damaged]))
        RawVault.checkpoint(url)
        let before = RawVault.rows(url)
        let vault = try Vault(url: url)
        expectDecode { try vault.unlock(password: .text(V1Fixture.password)) }
        #expect(vault.isLocked)
        #expect(RawVault.userVersion(url) == 1)
        let after = RawVault.rows(url)
        #expect(after.map(\.record) == before.map(\.record))
        #expect(after.map(\.lookup) == before.map(\.lookup))
        #expect(
            RawVault.run(
                url, "UPDATE items SET record = ?1 WHERE id = \(rows[rows.count - 1].id)", [rows[rows.count - 1].record]
            ))
        try vault.unlock(password: .text(V1Fixture.password))
        try expectFixtureItems(vault)
    }

    @Test func aVaultOpenedBeforeAnotherProcessMigratedStillUnlocks() throws {
        let f = try fixture()
        let url = f.url
        let first = try Vault(url: url)
        let second = try Vault(url: url)
        try second.unlock(password: .text(V1Fixture.password))
        try first.unlock(password: .text(V1Fixture.password))
        try expectFixtureItems(first)
        try first.save(service: "mail", account: "ana", secret: .text("changed"))
        #expect(try second.item(service: "mail", account: "ana").secret?.unsafeString == "changed")
    }
}

/// Migration of large format-1 vaults, and `fob` killed while migrating.
@Suite(.serialized) struct LargeMigrationTests {
    private static func items(_ count: Int) -> [Item] {
        (0..<count).map { i in
            Item(
                service: "svc-\(i % 50)", account: "user\(i)", label: "L\(i)", kind: i % 7 == 0 ? .token : .password,
                accessible: i % 5 == 0 ? .afterFirstUnlock : .whenUnlocked, secret: .text("secret-\(i)"))
        }
    }

    @Test func aWrittenFormatOneVaultLooksLikeTheRealOne() throws {
        let dir = TemporaryDirectory()
        try V1Fixture.write(to: dir.file("real.db"))
        try V1Writer.write(to: dir.file("written.db"), password: "pw", items: Self.items(3))
        for name in ["real.db", "written.db"] {
            let vault = try Vault(url: dir.file(name))
            #expect(try vault.readFormat() == 1)
            #expect(try vault.schemaProblems().isEmpty)
        }
    }

    @Test func fiveThousandItemsMigrateInOneTransactionKeepingTheirClasses() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("v1.db")
        let items = Self.items(5_000)
        try V1Writer.write(to: url, password: "pw", items: items)
        let vault = try Vault(url: url)
        try vault.unlock(password: .text("pw"))
        #expect(RawVault.userVersion(url) == Int64(Vault.formatVersion))
        #expect(try vault.allItems().count == 5_000)
        #expect(try vault.item(service: "svc-5", account: "user5").accessible == .afterFirstUnlock)
        #expect(try vault.item(service: "svc-6", account: "user6").secret?.unsafeString == "secret-6")
        vault.lock(keepingAfterFirstUnlock: true)
        #expect(try vault.allItems().count == 1_000)
    }

    /// `fob ls` killed at random moments of its first unlock: the file is
    /// always either the untouched format-1 vault or a sound format-2 one.
    @Test func killingFobDuringTheMigrationLeavesEitherFormatWhole() throws {
        let dir = TemporaryDirectory()
        let original = dir.file("v1.db")
        try V1Writer.write(to: original, password: "pw", items: Self.items(3_000))
        try Data("pw\n".utf8).write(to: dir.file("password"))
        var generator = SystemRandomNumberGenerator()
        var outcomes: [Int64: Int] = [:]
        for round in 0..<12 {
            let url = dir.file("round\(round).db")
            try FileManager.default.copyItem(at: original, to: url)
            let child = try FobProcess.start(
                ["ls"], environment: ["FOB_VAULT": url.path, "FOB_PASSWORD_FILE": dir.file("password").path])
            usleep(UInt32.random(in: 0..<(round < 6 ? 120_000 : 400_000), using: &generator))
            child.send(signal: SIGKILL)
            _ = child.wait(timeout: 60)
            let format = RawVault.userVersion(url)
            outcomes[format, default: 0] += 1
            let report = try Vault.verify(at: url, password: .text("pw"))
            #expect(report.isSound, "round \(round), format \(format): \(report.problems)")
            #expect(report.format == Int32(format))
            #expect(report.itemCount == 3_000)
            let vault = try Vault(url: url)
            try vault.unlock(password: .text("pw"))
            #expect(try vault.item(service: "svc-7", account: "user7").secret?.unsafeString == "secret-7")
        }
        #expect(outcomes.keys.allSatisfy { $0 == 1 || $0 == Int64(Vault.formatVersion) }, "\(outcomes)")
    }
}

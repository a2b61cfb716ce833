import FobStore
import FobSync
import FobTestSupport
import Foundation
import Testing

/// Key epochs (`fob passwd --rotate-key`, `fob devices --revoke`), the
/// heads' keyed hash of the live set, and tombstone collection, through
/// real git and a local bare repository with the built `fob`.
@Suite(.serialized) struct SyncKeyTests {
    /// The ids of the keys the revision files of the remote are sealed under
    /// (bytes 4 to 12 of each sealed file, after its magic; a signed file's
    /// envelope, "FSG1" and a 64-byte signature, comes first).
    static func keyIDs(_ lab: SyncLab) throws -> Set<[UInt8]> {
        let clone = try lab.attackerClone()
        var ids: Set<[UInt8]> = []
        for path in try lab.git(["ls-files", "items"], in: clone).split(separator: "\n") {
            ids.insert(Array(try sealed(clone + "/" + path)[4..<12]))
        }
        return ids
    }

    /// The sealed file at `path`, without the signed envelope around it
    /// ("FSG1" and a 64-byte signature).
    static func sealed(_ path: String) throws -> [UInt8] {
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: path)))
        if bytes.starts(with: Array("FSG1".utf8)) { bytes.removeFirst(68) }
        return bytes
    }

    /// The sync state a device's vault holds (its keys among it).
    static func state(of device: Device) throws -> SyncState {
        let vault = try Vault(url: URL(fileURLWithPath: device.vault))
        try vault.unlock(password: .text("pw"))
        defer { vault.lock() }
        let item = try vault.item(
            service: SyncState.key.service, account: SyncState.key.account, accessGroup: SyncState.key.accessGroup)
        return try SyncState.decode(try #require(item.secret))
    }

    /// The device id `fob sync status` names.
    static func deviceID(_ device: Device) throws -> String {
        try device.deviceID()
    }

    // 9.
    @Test func rotateKeyOnOneDeviceTheOtherAsksTheNewPasswordAndKeepsItsEdits() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let aID = try Self.deviceID(a)
        try b.ok(["update", "web", "bob"], input: "unsynced on b\n")
        try b.ok(["add", "new", "on-b"], input: "b only\n")
        let before = try Self.keyIDs(lab)
        #expect(before.count == 1)
        let newPassword = lab.directory.url.path + "/new-pw"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        let rotated = try a.run(["passwd", "--rotate-key", "--new-password-file", newPassword])
        #expect(rotated.status == 0, "\(rotated.stderrText)")
        #expect(rotated.stdoutText.contains("Started sync key epoch 2"), "\(rotated.stdoutText)")
        let aEnvironment = lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data, "FOB_AGENT": "0"]) { $1 }
        func aSync() throws -> ProcessResult {
            try FobProcess.run(["--vault", a.vault, "--password-file", newPassword, "sync"], environment: aEnvironment)
        }
        #expect(try aSync().status == 0)
        // Every item written again under the new key.
        let after = try Self.keyIDs(lab)
        #expect(after.count == 1 && after.isDisjoint(with: before), "\(before) \(after)")

        // No terminal and no password file: its own status, at once, edits kept.
        let refused = try b.run(["sync"])
        #expect(refused.status == 63, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("the sync tree has a new key"), "\(refused.stderrText)")
        #expect(try b.secret("web", "bob") == "unsynced on b")
        // A wrong password is refused as such.
        #expect(try b.run(["sync", "--tree-password-file", lab.directory.url.path + "/pw"]).status == 51)
        // On a terminal, it asks for the new password.
        let session = try FobProcess.startInTerminal(
            ["--vault", b.vault, "sync"],
            environment: lab.gitEnvironment.merging([
                "XDG_DATA_HOME": b.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw", "FOB_AGENT": "0",
            ]) { $1 })
        // The device that started the key is named by its name and id.
        let starter = DeviceName.label(aID, name: DeviceName.hostName())
        #expect(session.waitFor("The sync tree has a new key. Master password of device \(starter): "))
        session.send(Array("pw2\r".utf8))
        #expect(session.wait(timeout: 60) == 0, "\(session.outputText)")
        #expect(
            session.outputText.contains("took the sync tree's new key\r\n     (epoch 2, from device \(starter))"),
            "\(session.outputText)")
        #expect(try b.secret("web", "bob") == "unsynced on b")
        // Later syncs need no password; both end with both devices' edits.
        #expect(try aSync().status == 0)
        _ = try b.sync()
        let expected = ["mail ana one -", "new on-b b only -", "web bob unsynced on b -"]
        #expect(try b.contents() == expected)
        #expect(
            try FobProcess.run(
                ["--vault", a.vault, "--password-file", newPassword, "get", "web", "bob"], environment: aEnvironment
            )
            .stdoutText == "unsynced on b\n")
        // b's edits, written under the old key before it knew the new one, are sealed again under the new one.
        #expect(try Self.keyIDs(lab) == after)
        #expect(try b.run(["verify"]).status == 0)
        // A new device joins with the new password; the old one opens nothing current.
        let c = try lab.device("c")
        #expect(try c.run(["sync", "join", lab.remote]).status == 51)
        let joined = try c.run(["sync", "join", lab.remote, "--tree-password-file", newPassword])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(try c.contents() == expected)
    }

    /// Two devices rotate at once: each asks for the other's new password
    /// once, the greater epoch ends up sealing every file, nothing is lost.
    @Test func twoRotationsAtOnceConverge() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let pw2 = lab.directory.url.path + "/pw2"
        let pw3 = lab.directory.url.path + "/pw3"
        _ = FileManager.default.createFile(atPath: pw2, contents: Data("pw2\n".utf8))
        _ = FileManager.default.createFile(atPath: pw3, contents: Data("pw3\n".utf8))
        try a.ok(["passwd", "--rotate-key", "--new-password-file", pw2])
        try b.ok(["passwd", "--rotate-key", "--new-password-file", pw3])
        try a.ok(["--password-file", pw2, "update", "mail", "ana"], input: "from a\n")
        try b.ok(["--password-file", pw3, "update", "web", "bob"], input: "from b\n")
        func sync(_ device: Device, own: String, other: String) throws -> ProcessResult {
            try FobProcess.run(
                ["--vault", device.vault, "--password-file", own, "sync", "--tree-password-file", other],
                environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": device.data, "FOB_AGENT": "0"]) { $1 })
        }
        for (device, own, other) in [(a, pw2, pw3), (b, pw3, pw2), (a, pw2, pw3), (b, pw3, pw2), (a, pw2, pw3)] {
            let result = try sync(device, own: own, other: other)
            #expect(result.status == 0, "\(device.name): \(result.stderrText)")
        }
        #expect(try Self.keyIDs(lab).count == 1)
        func contents(_ device: Device, _ password: String) throws -> String {
            try FobProcess.run(
                ["--vault", device.vault, "--password-file", password, "export", "--format", "csv"],
                environment: ["FOB_AGENT": "0"]
            ).stdoutText
        }
        let exported = try contents(a, pw2)
        #expect(exported.contains("from a") && exported.contains("from b"), "\(exported)")
        #expect(try contents(b, pw3) == exported)
    }

    /// A rotation cut short after the state took the new key, before the
    /// tree's commit: the next sync drops the key, and nothing is sealed under it.
    @Test func aRotationCutShortIsDropped() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let before = try Self.keyIDs(lab)
        let pw2 = lab.directory.url.path + "/pw2"
        _ = FileManager.default.createFile(atPath: pw2, contents: Data("pw2\n".utf8))
        try a.ok(["passwd", "--rotate-key", "--new-password-file", pw2])
        // What a kill before the commit leaves: the vault has the key, the tree not.
        try lab.git(["reset", "-q", "--hard", "HEAD~1"], in: a.tree)
        try a.ok(["--password-file", pw2, "update", "mail", "ana"], input: "after\n")
        let synced = try FobProcess.run(
            ["--vault", a.vault, "--password-file", pw2, "sync"],
            environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data, "FOB_AGENT": "0"]) { $1 })
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(synced.stderrText.contains("interrupted key rotation was dropped"), "\(synced.stderrText)")
        #expect(try Self.keyIDs(lab) == before)
        #expect(try b.sync() == "merged 1, conflicts 0\n")
        #expect(try b.secret("mail", "ana") == "after")
    }

    /// A new key opens with the password of any device whose header seals
    /// it: here b's, after b took the key and changed its password.
    @Test func aNewKeyOpensWithAnyHeaderThatSealsIt() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote])
        let pw2 = lab.directory.url.path + "/pw2"
        let pw3 = lab.directory.url.path + "/pw3"
        _ = FileManager.default.createFile(atPath: pw2, contents: Data("pw2\n".utf8))
        _ = FileManager.default.createFile(atPath: pw3, contents: Data("pw3\n".utf8))
        try a.ok(["passwd", "--rotate-key", "--new-password-file", pw2])
        func run(_ device: Device, _ arguments: [String]) throws -> ProcessResult {
            try FobProcess.run(
                ["--vault", device.vault] + arguments,
                environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": device.data, "FOB_AGENT": "0"]) { $1 })
        }
        let cID = try c.deviceID()
        // c's head is under the first epoch, and no device a trusts added
        // c: c is left out until it syncs with the new key.
        let rotated = try run(a, ["--password-file", pw2, "sync"])
        #expect(rotated.status == 0, "\(rotated.stderrText)")
        #expect(rotated.stderrText.contains("fob: left out device "), "\(rotated.stderrText)")
        #expect(rotated.stderrText.contains("(\(cID)),\n     key SHA256:"), "\(rotated.stderrText)")
        #expect(
            try run(b, ["--password-file", lab.directory.url.path + "/pw", "sync", "--tree-password-file", pw2]).status
                == 0)
        #expect(
            try run(b, ["--password-file", lab.directory.url.path + "/pw", "passwd", "--new-password-file", pw3]).status
                == 0)
        #expect(try run(b, ["--password-file", pw3, "sync"]).status == 0)
        try c.ok(["add", "ssh", "cat"], input: "three\n")
        let synced = try run(
            c, ["--password-file", lab.directory.url.path + "/pw", "sync", "--tree-password-file", pw3])
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(try c.contents() == ["mail ana one -", "ssh cat three -", "web bob two -"])
        // That sync exported before it met the new key: c is still left out.
        let before = try run(a, ["--password-file", pw2, "sync"])
        #expect(before.stderrText.contains("(\(cID)),\n     key SHA256:"), "\(before.stderrText)")
        #expect(try run(a, ["--password-file", pw2, "get", "ssh", "cat"]).status == 44)
        // c's next sync writes its files and head again under the new key:
        // a takes c in and merges its item.
        try c.ok(["sync"])
        let taken = try run(a, ["--password-file", pw2, "sync"])
        #expect(taken.status == 0, "\(taken.stderrText)")
        #expect(taken.stderrText.contains("fob: added device "), "\(taken.stderrText)")
        #expect(taken.stderrText.contains("(\(cID))\n     with signing key SHA256:"), "\(taken.stderrText)")
        #expect(!taken.stderrText.contains("left out"), "\(taken.stderrText)")
        #expect(try run(a, ["--password-file", pw2, "get", "ssh", "cat"]).stdoutText == "three\n")
    }

    @Test func rotateKeyWithoutSyncIsAUsageError() throws {
        let lab = try SyncLab()
        let a = try lab.device("a")
        let newPassword = lab.directory.url.path + "/new-pw"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        let refused = try a.run(["passwd", "--rotate-key", "--new-password-file", newPassword])
        #expect(refused.status == 2, "\(refused.stderrText)")
        // Nothing changed: the old password still opens the vault.
        #expect(try a.run(["ls"]).status == 0)
    }

    @Test func aRevokedDeviceCannotReadWhatIsWrittenAfter() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let bID = try Self.deviceID(b)
        let revoked = try a.run(["devices", "--revoke", bID])
        #expect(revoked.status == 0, "\(revoked.stderrText)")
        try a.ok(["add", "after", "revocation"], input: "not for b\n")
        _ = try a.sync()
        // The keys b holds open none of the files of the tree now.
        let keys = SyncKeys(epochs: try Self.state(of: b).epochs)
        let clone = try lab.attackerClone()
        let files = try lab.git(["ls-files", "items"], in: clone).split(separator: "\n").map(String.init)
        #expect(files.count == 3)
        for path in files {
            let (name, dot) = try #require(TreePath.parseRecord(path))
            let bytes = try Self.sealed(clone + "/" + path)
            #expect(throws: TreeFormatError.unknownKey) { try Revision.open(bytes, name: name, dot: dot, keys: keys) }
        }
        // And a's own keys do.
        let aKeys = SyncKeys(epochs: try Self.state(of: a).epochs)
        for path in files {
            let (name, dot) = try #require(TreePath.parseRecord(path))
            let bytes = try Self.sealed(clone + "/" + path)
            #expect(throws: Never.self) { try Revision.open(bytes, name: name, dot: dot, keys: aKeys) }
        }
        // b cannot sync: it is told it was revoked (1) before any password is asked, given or not.
        let first = try b.run(["sync"])
        #expect(first.status == 1, "\(first.stderrText)")
        #expect(first.stderrText.contains("was revoked"), "\(first.stderrText)")
        let told = try b.run(["sync", "--tree-password-file", lab.directory.url.path + "/pw"])
        #expect(told.status == 1, "\(told.stderrText)")
        #expect(told.stderrText.contains("was revoked"), "\(told.stderrText)")
        #expect(try b.secret("after", "revocation") == nil)
        #expect(try a.sync() == "merged 0, conflicts 0\n")
    }

    // 6: the head's keyed hash of the live set.
    @Test func aLiveRevisionRemovedBehindAHeadIsRefusedNamingTheDevice() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        try a.ok(["update", "mail", "ana"], input: "newer\n")
        _ = try a.sync()
        let aID = try Self.deviceID(a)
        // The attacker removes b's item (its only live revision) and pushes.
        let clone = try lab.attackerClone()
        let files = try lab.git(["ls-files", "items"], in: clone).split(separator: "\n").map(String.init)
        #expect(files.count == 2)
        let bID = try Self.deviceID(b)
        let victim = try #require(files.first { $0.hasSuffix("/\(bID).1.rec") })
        try lab.git(["rm", "-q", victim], in: clone)
        try lab.forcePush(clone, message: "remove")
        // A device that never saw the tree cannot tell from the files alone: a's head tells.
        let c = try lab.device("c")
        let refused = try c.run(["sync", "join", lab.remote])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(
            refused.stderrText.contains(
                "other revision files than device \(DeviceName.label(aID, name: DeviceName.hostName()))'s head"),
            "\(refused.stderrText)")
        let again = try b.run(["sync"])
        #expect(again.status == 93, "\(again.stderrText)")
        #expect(try b.secret("web", "bob") == "two")
    }

    /// Where no head saw the whole tree (two devices wrote at once), a
    /// revision removed without a newer one is still caught by the merge.
    @Test func aRemovalNoHeadCoversIsCaughtByTheMerge() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        try a.ok(["update", "mail", "ana"], input: "from a\n")
        try b.ok(["update", "web", "bob"], input: "from b\n")
        _ = try a.sync()
        _ = try b.sync()
        let aID = try Self.deviceID(a)
        let clone = try lab.attackerClone()
        let files = try lab.git(["ls-files", "items"], in: clone).split(separator: "\n").map(String.init)
        try lab.git(["rm", "-q", try #require(files.first { $0.hasSuffix("/\(aID).2.rec") })], in: clone)
        try lab.forcePush(clone, message: "remove")
        let refused = try b.run(["sync"])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("was removed without a newer one"), "\(refused.stderrText)")
    }

    @Test func aTombstoneGoesOnceEveryDeviceHasSeenItAndNotBefore() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        func itemFiles() throws -> Int {
            try lab.git(["ls-files", "items"], in: try lab.attackerClone()).split(separator: "\n").count
        }
        try a.ok(["rm", "web", "bob"])
        _ = try a.sync()
        #expect(try itemFiles() == 2)
        // b merges the delete; its head has not said so yet.
        #expect(try b.sync() == "merged 1, conflicts 0\n")
        #expect(try itemFiles() == 2)
        _ = try a.sync()
        #expect(try itemFiles() == 2)
        // b's next sync has seen the tombstone, as every other device: it collects it.
        #expect(try b.sync() == "merged 0, conflicts 0\n")
        #expect(try itemFiles() == 1)
        // b takes the collection as it is: nothing comes back.
        #expect(try b.sync() == "merged 0, conflicts 0\n")
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try b.secret("web", "bob") == nil)
        #expect(try a.secret("web", "bob") == nil)
        #expect(try a.contents() == b.contents())
        #expect(try a.run(["verify"]).status == 0)
        // A device that joins now sees no trace of the item.
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote])
        #expect(try c.contents() == ["mail ana one -"])
    }

    /// With three devices, the tombstone waits for the last one: a device
    /// that saw it while another had not says so in its head.
    @Test func aTombstoneWaitsForTheLastOfThreeDevices() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote])
        func itemFiles() throws -> Int {
            try lab.git(["ls-files", "items"], in: try lab.attackerClone()).split(separator: "\n").count
        }
        try a.ok(["rm", "web", "bob"])
        _ = try a.sync()
        _ = try b.sync()
        _ = try c.sync()
        _ = try b.sync()
        #expect(try itemFiles() == 2)
        // c's head says it saw it; c's export ran before it fetched b's, so
        // the next sync after both heads are known collects it.
        _ = try c.sync()
        #expect(try itemFiles() == 2)
        _ = try c.sync()
        #expect(try itemFiles() == 1)
        for device in [a, b, c] { #expect(try device.sync() == "merged 0, conflicts 0\n") }
        for device in [a, b, c] { #expect(try device.contents() == ["mail ana one -"]) }
    }

    /// A revoked device never blocks collection.
    @Test func aRevokedDeviceDoesNotHoldATombstoneBack() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        try a.ok(["devices", "--revoke", try Self.deviceID(b)])
        try a.ok(["rm", "web", "bob"])
        _ = try a.sync()
        _ = try a.sync()
        let files = try lab.git(["ls-files", "items"], in: try lab.attackerClone()).split(separator: "\n")
        #expect(files.count == 1, "\(files)")
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// Which devices a device takes in, and who added whom, end to end with
/// the built `fob`, real git and a bare remote on disk: a device's files
/// are merged only once it is on a roster this device signs (added at
/// first sight only with a head sealed under the current key epoch, and
/// named with its key's fingerprint), each roster entry records the
/// device that added it, its counter and the time, and a roster whose
/// adders it does not list is refused (exit 93).
@Suite(.serialized) struct SyncAcceptanceTests {
    /// After `b`'s revocation, the attacker holding b's vault (its older
    /// key epochs, as on a stolen laptop) and git access writes a head and
    /// a revision of a new item under a fresh device id, sealed under the
    /// older key; returns the fresh id and the head's path.
    static func plantDevice(_ lab: SyncLab, keys: SyncKeys) throws -> (id: String, headPath: String) {
        let clone = try lab.attackerClone()
        let newID = "00112233445566aa"
        let newKey = DeviceSigningKey.generate()
        let item = Item(service: "planted", account: "item", secret: SecretBytes(Array("planted".utf8)))
        let name = keys.name(of: item)
        let dot = Dot(device: newID, counter: 1)
        let revision = Revision(
            dot: dot, vector: VersionVector([newID: 1]), fieldDots: [:], item: item, siblings: [])
        let recordPath = TreePath.record(name: name, dot: dot)
        try FileManager.default.createDirectory(
            atPath: clone + "/" + recordPath.split(separator: "/").dropLast().joined(separator: "/"),
            withIntermediateDirectories: true)
        try SyncSignatureTests.write(
            clone, recordPath, SignedFile.signed(revision.sealed(name: name, keys: keys), path: recordPath, key: newKey)
        )
        let headPath = TreePath.head(device: newID)
        let head = DeviceHead(
            device: newID, counter: 1, vector: VersionVector([newID: 1]), liveHash: [UInt8](repeating: 0, count: 32),
            name: "spare", publicKey: newKey.publicKey)
        try SyncSignatureTests.write(
            clone, headPath, SignedFile.signed(head.sealed(keys: keys), path: headPath, key: newKey))
        try lab.forcePush(clone)
        return (newID, headPath)
    }

    /// A head and a revision under a fresh id, sealed under the key epoch
    /// a revoked device still holds: the device that revoked it, and a
    /// device joining afterwards that accepts its key, refuse the tree
    /// (exit 93), naming the device and its key, and merge nothing of it.
    @Test func aDeviceNoTrustedRosterListsUnderAnOlderEpochIsRefusedEvenAtAJoin() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let keys = SyncKeys(epochs: try SyncSignatureTests.state(of: b).state.epochs)
        try a.ok(["devices", "--revoke", try b.deviceID()])
        let aKey = try SyncRosterTests.fingerprint(of: a)
        let (newID, headPath) = try Self.plantDevice(lab, keys: keys)

        let refused = try a.run(["sync"])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(
            refused.stderrText.contains("\(headPath) brings in device spare (\(newID)), key SHA256:"),
            "\(refused.stderrText)")
        #expect(refused.stderrText.contains("which no device this one trusts added"), "\(refused.stderrText)")
        #expect(try a.secret("planted", "item") == nil)
        #expect(try a.secret("mail", "ana") == "one")

        // A new device accepts a's key: the planted device is on no roster
        // a signs, and its head is not under the current key.
        let c = try lab.device("c")
        let joined = try c.run(["sync", "join", lab.remote, "--accept-key", aKey])
        #expect(joined.status == 93, "\(joined.stderrText)")
        #expect(joined.stderrText.contains("brings in device spare (\(newID))"), "\(joined.stderrText)")
        #expect(try c.secret("planted", "item") == nil)
        #expect(try c.secret("mail", "ana") == nil)
    }

    /// No device was ever revoked, and a started a new key epoch (`passwd
    /// --rotate-key`, as after a master password leaked): whoever kept the
    /// first epoch's key (here b's, read from its vault) plants a device
    /// under it. a's sync leaves that device out (exit 0), naming it and
    /// its key: its item is not merged, a's roster does not list it, and
    /// its files stay in the tree; the next sync says so again, and so
    /// does a device joining afterwards.
    @Test func aDevicePlantedUnderTheKeyBeforeARotationIsLeftOut() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let keys = SyncKeys(epochs: try SyncSignatureTests.state(of: b).state.epochs)
        let aID = try a.deviceID()
        let aKey = try SyncRosterTests.fingerprint(of: a)
        let newPassword = lab.directory.url.path + "/pw2"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        try a.ok(["passwd", "--rotate-key", "--new-password-file", newPassword])
        func run(_ arguments: [String]) throws -> ProcessResult {
            try FobProcess.run(
                ["--vault", a.vault, "--password-file", newPassword] + arguments,
                environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data, "FOB_AGENT": "0"]) { $1 })
        }
        let rotated = try run(["sync"])
        #expect(rotated.status == 0, "\(rotated.stderrText)")
        let (newID, headPath) = try Self.plantDevice(lab, keys: keys)
        let planted = try lab.attackerClone()
        let key = try #require(
            try DeviceHead.open(
                SignedFile.content(SyncSignatureTests.read(planted, headPath)), device: newID, keys: keys
            ).publicKey)
        let notice =
            "fob: left out device spare (\(newID)),\n     key \(DeviceSigningKey.fingerprint(key)):\n"
            + "     its head is under an older key epoch and no device this one trusts\n"
            + "     added it; it is taken in after it syncs with the current key\n"

        for _ in 1...2 {
            let synced = try run(["sync"])
            #expect(synced.status == 0, "\(synced.stderrText)")
            #expect(synced.stderrText.contains(notice), "\(synced.stderrText)")
        }
        #expect(try run(["get", "planted", "item"]).status == 44)
        #expect(try run(["get", "mail", "ana"]).stdoutText == "one\n")
        let clone = try lab.attackerClone()
        #expect(try SyncRosterTests.roster(of: aID, in: clone).roster.members[newID] == nil)
        #expect(FileManager.default.fileExists(atPath: clone + "/" + headPath))
        let files = try lab.git(["ls-files", "items"], in: clone).split(separator: "\n")
        #expect(files.contains { TreePath.parseRecord(String($0))?.dot.device == newID })

        // A device joining now, which accepts a's key, leaves it out too.
        let c = try lab.device("c")
        let joined = try c.run(
            ["sync", "join", lab.remote, "--accept-key", aKey, "--tree-password-file", newPassword])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(joined.stderrText.contains(notice), "\(joined.stderrText)")
        #expect(try c.secret("planted", "item") == nil)
        #expect(try c.secret("mail", "ana") == "one")
    }

    /// b, revoked, still holds the older key epoch and its signing key: it
    /// lists a device of its own making in its roster. A device joining
    /// afterwards that accepts a's key reads a's roster, which revokes b,
    /// so b's roster vouches for no one, and the planted device's head,
    /// under the older epoch, is refused (exit 93) before anything merges.
    @Test func aRevokedDevicesRosterBringsInNoDeviceAtAJoin() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let stolen = try SyncSignatureTests.state(of: b).state
        let keys = SyncKeys(epochs: stolen.epochs)
        let bID = try b.deviceID()
        try a.ok(["devices", "--revoke", bID])
        try a.ok(["sync"])
        let aKey = try SyncRosterTests.fingerprint(of: a)
        let (newID, headPath) = try Self.plantDevice(lab, keys: keys)
        let clone = try lab.attackerClone()
        let head = try DeviceHead.open(
            SignedFile.content(SyncSignatureTests.read(clone, headPath)), device: newID, keys: keys)
        var roster = try SyncRosterTests.roster(of: bID, in: clone).roster
        roster.version += 1
        roster.members[newID] = .init(
            publicKey: try #require(head.publicKey), origin: .init(device: bID, counter: 1, time: 0))
        try SyncSignatureTests.write(
            clone, TreePath.roster(device: bID), roster.signed(by: bID, key: try #require(stolen.signingKey)))
        try lab.forcePush(clone)

        let c = try lab.device("c")
        let joined = try c.run(["sync", "join", lab.remote, "--accept-key", aKey])
        #expect(joined.status == 93, "\(joined.stderrText)")
        #expect(joined.stderrText.contains("brings in device spare (\(newID))"), "\(joined.stderrText)")
        #expect(try c.secret("planted", "item") == nil)
    }

    /// The remote loses `devices/B.revoked` (deleted by whoever can push):
    /// a device joining afterwards learns the revocation from the roster
    /// of the device it accepted, and refuses the tree for lacking it
    /// (exit 93) instead of taking b for a current device.
    @Test func aJoinLearnsRevocationsFromTheAcceptedRosters() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let bID = try b.deviceID()
        try a.ok(["devices", "--revoke", bID])
        try a.ok(["sync"])
        let cutOff = try #require(try SyncSignatureTests.state(of: a).state.revoked[bID])
        let clone = try lab.attackerClone()
        try FileManager.default.removeItem(atPath: clone + "/" + TreePath.revoked(device: bID))
        try lab.forcePush(clone)

        let c = try lab.device("c")
        let joined = try c.run(["sync", "join", lab.remote, "--accept-key", try SyncRosterTests.fingerprint(of: a)])
        #expect(joined.status == 93, "\(joined.stderrText)")
        #expect(
            joined.stderrText.contains("lacks the revocation of device vm (\(bID)) (cut off after counter \(cutOff))"),
            "\(joined.stderrText)")
        #expect(try c.secret("mail", "ana") == nil)
    }

    /// Whoever can push deletes every roster, so that a join would take
    /// every head's key at first sight: the tree's heads are signed, so the
    /// join refuses it (exit 93), `--accept-key` or not, and keeps nothing.
    @Test func aTreeWhoseRostersWereRemovedIsRefusedAtAJoin() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        let aKey = try SyncRosterTests.fingerprint(of: a)
        let clone = try lab.attackerClone()
        let rosters = try lab.git(["ls-files", "devices"], in: clone).split(separator: "\n").filter {
            TreePath.parseRoster(String($0)) != nil
        }
        #expect(rosters.count == 2)
        for path in rosters { try FileManager.default.removeItem(atPath: clone + "/" + path) }
        try lab.forcePush(clone)

        let c = try lab.device("c")
        for extra in [["--accept-key", aKey], []] {
            let refused = try c.run(["sync", "join", lab.remote] + extra)
            #expect(refused.status == 93, "\(refused.stderrText)")
            #expect(
                refused.stderrText.contains(
                    "is signed, but the sync tree has no device roster: the rosters were removed"),
                "\(refused.stderrText)")
            #expect(try c.items().isEmpty)
        }
    }

    /// a revokes b, and the remote then loses `devices/B.revoked`: c, which
    /// had not synced since, has never met the revocation, but a's roster
    /// lists it, so c refuses the tree (exit 93, naming both devices)
    /// instead of taking b's later writes as a current device's.
    @Test func aDeviceThatHasNotMetARevocationRefusesATreeThatLostIt() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote, "--accept-key", try SyncRosterTests.fingerprint(of: a)])
        try a.ok(["sync"])
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        try a.ok(["devices", "--revoke", bID])
        try a.ok(["sync"])
        let cutOff = try #require(try SyncSignatureTests.state(of: a).state.revoked[bID])
        let clone = try lab.attackerClone()
        try FileManager.default.removeItem(atPath: clone + "/" + TreePath.revoked(device: bID))
        try lab.forcePush(clone)

        #expect(try SyncSignatureTests.state(of: c).state.revoked.isEmpty)
        let refused = try c.run(["sync", "--tree-password-file", lab.directory.url.path + "/pw"])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(
            refused.stderrText.contains(
                "the tree lacks the revocation of device vm (\(bID)) that the roster of device vm (\(aID)) lists "
                    + "(cut off after counter \(cutOff))"),
            "\(refused.stderrText)")
    }

    /// A device that joined is added by the first device that meets its
    /// head (sealed under the current key): that device names it with its
    /// key's fingerprint, lists it in its roster as added by itself at
    /// its counter and the time, and `fob devices` shows who added whom.
    @Test func aJoiningDeviceIsAddedNamedAndRecorded() throws {
        let lab = try SyncLab()
        let a = try lab.device("a")
        let b = try lab.device("b")
        try a.ok(["add", "mail", "ana"], input: "one\n")
        try a.ok(["sync", "init", lab.remote, "--kdf", "interactive", "--name", "laptop"])
        try b.ok(["sync", "join", lab.remote, "--name", "desk"])
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        let bKey = try SyncRosterTests.fingerprint(of: b)
        let synced = try a.run(["sync"])
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(
            synced.stderrText.contains(
                "fob: added device desk (\(bID))\n     with signing key \(bKey)\n"
                    + "     to this device's roster; compare with `fob sync status` on it,\n"
                    + "     or revoke it with `fob devices --revoke \(bID)`\n"),
            "\(synced.stderrText)")
        // Said once: the next sync holds the key.
        #expect(!(try a.run(["sync"]).stderrText.contains("added device")))

        let aCounter = try SyncSignatureTests.state(of: a).state.origins[bID]?.counter
        let roster = try SyncRosterTests.roster(of: aID, in: try lab.attackerClone()).roster
        let origin = try #require(roster.members[bID]?.origin)
        #expect(origin.device == aID && origin.counter == aCounter)
        #expect(abs(Double(origin.time) - Date().timeIntervalSince1970) < 600)
        #expect(roster.members[aID]?.origin?.device == aID)

        let listed = try a.ok(["devices"])
        let stamp = #/added by laptop \(([0-9a-f]{16})\) at its counter ([0-9]+), 20[0-9-]{8}T[0-9:]{8}Z/#
        let deskLine = try #require(listed.split(separator: "\n").first { $0.hasPrefix("desk (\(bID))") })
        let match = try #require(try stamp.firstMatch(in: String(deskLine)), "\(listed)")
        #expect(match.1 == aID && UInt64(match.2) == origin.counter)
        let laptopLine = try #require(listed.split(separator: "\n").first { $0.hasPrefix("laptop (\(aID))") })
        #expect(laptopLine.contains("added by itself at its counter 0, "), "\(listed)")
        // b accepted a's key at its join: on b, a is added by b.
        let onB = try b.ok(["devices"])
        #expect(onB.contains("laptop (\(aID))  counter "), "\(onB)")
        #expect(onB.contains("added by desk (\(bID)) at its counter 0, "), "\(onB)")
    }

    /// A roster whose entry names an adder the roster does not list, or
    /// of a format this Fob does not know, is refused (exit 93) and named.
    @Test func aRosterWithAnUnknownAdderOrFormatIsRefused() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        _ = try b.sync()
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        let stolen = try #require(try SyncSignatureTests.state(of: b).state.signingKey)
        let clone = try lab.attackerClone()
        let path = TreePath.roster(device: bID)
        var roster = try SyncRosterTests.roster(of: bID, in: clone).roster
        roster.version += 1
        roster.members[aID]?.origin = .init(device: "fedcba9876543210", counter: 1, time: 1)
        try SyncSignatureTests.write(clone, path, roster.signed(by: bID, key: stolen))
        try lab.forcePush(clone)
        try SyncRosterTests.refused(
            a, "the device roster lists device \(aID) as added by fedcba9876543210, which it does not list (\(path))")

        var future = roster.signed(by: bID, key: stolen)
        future[3] = UInt8(ascii: "9")
        try SyncSignatureTests.write(clone, path, future)
        try lab.forcePush(clone)
        try SyncRosterTests.refused(
            a, "\(path) malformed: a device roster of format 9, which this Fob does not know (update Fob)")
        #expect(try a.secret("mail", "ana") == "one")
    }
}

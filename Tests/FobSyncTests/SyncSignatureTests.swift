import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// Device signing keys at work, end to end with the built `fob`, real git
/// and a bare remote on disk: the attacker holds another device's vault
/// (its key epochs and its signing key, as on a stolen laptop) and git
/// access, and writes files under other devices' ids. Each is refused
/// (exit 93) and named; trees of states written before signing keys keep
/// syncing and come out signed.
@Suite(.serialized) struct SyncSignatureTests {
    /// The sync state a device's vault holds, and its item.
    static func state(of device: Device, password: String = "pw") throws -> (state: SyncState, item: Item, vault: Vault)
    {
        let vault = try Vault(url: URL(fileURLWithPath: device.vault))
        try vault.unlock(password: .text(password))
        let item = try vault.item(
            service: SyncState.key.service, account: SyncState.key.account, accessGroup: SyncState.key.accessGroup)
        return (try SyncState.decode(try #require(item.secret)), item, vault)
    }

    /// Reads `path` of `clone`.
    static func read(_ clone: String, _ path: String) throws -> [UInt8] {
        [UInt8](try #require(FileManager.default.contents(atPath: clone + "/" + path)))
    }

    /// Writes `bytes` at `path` of `clone`.
    static func write(_ clone: String, _ path: String, _ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: clone + "/" + path))
    }

    /// A revision file of `device` in `clone`: its path, item name and dot.
    static func revision(of device: String, in lab: SyncLab, clone: String) throws -> (String, String, Dot) {
        let paths = try lab.git(["ls-files", "items"], in: clone).split(separator: "\n").map(String.init)
        let path = try #require(paths.first { TreePath.parseRecord($0)?.dot.device == device })
        let (name, dot) = try #require(TreePath.parseRecord(path))
        return (path, name, dot)
    }

    @Test func aRevisionOrHeadUnderAnotherDevicesIdIsRefused() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let aID = try a.deviceID()
        let stolen = try Self.state(of: b).state
        let keys = SyncKeys(epochs: stolen.epochs)
        let bKey = try #require(stolen.signingKey)

        // A tombstone of a's item, sealed under the tree's key, under a's id:
        // signed by b, then not signed at all.
        let clone = try lab.attackerClone()
        let (path, name, dot) = try Self.revision(of: aID, in: lab, clone: clone)
        let tombstone = Revision(
            dot: dot, vector: VersionVector([aID: dot.counter]), fieldDots: [:], item: nil, siblings: [])
        let sealed = tombstone.sealed(name: name, keys: keys)
        for forged in [SignedFile.signed(sealed, path: path, key: bKey), sealed] {
            try Self.write(clone, path, forged)
            try lab.forcePush(clone)
            let refused = try a.run(["sync"])
            #expect(refused.status == 93)
            #expect(
                refused.stderrText.contains("\(path) is not signed by the device it names"), "\(refused.stderrText)")
            #expect(try a.secret("mail", "ana") == "one")
        }

        // a's head, with b's key in it (so that b's signature would verify).
        try lab.git(["checkout", "-q", "HEAD~2", "--", path], in: clone)
        let headPath = TreePath.head(device: aID)
        var head = try DeviceHead.open(
            SignedFile.content(Self.read(clone, headPath)), device: aID, keys: keys)
        head.publicKey = bKey.publicKey
        try Self.write(clone, headPath, SignedFile.signed(head.sealed(keys: keys), path: headPath, key: bKey))
        try lab.forcePush(clone)
        let refused = try a.run(["sync"])
        #expect(refused.status == 93)
        #expect(
            refused.stderrText.contains("the device roster changed the signing key of device \(aID)"),
            "\(refused.stderrText)")
    }

    /// A joining device checks the newest key epoch's file against the
    /// signing key of the device that started it: a signature with a
    /// changed byte, or none, is refused (exit 93) naming the file; the
    /// file as its starter signed it joins.
    @Test func aJoinRefusesAnEpochFileItsStarterDidNotSign() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        let aID = try a.deviceID()
        let newPassword = lab.directory.url.path + "/new-pw"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        try a.ok(["passwd", "--rotate-key", "--new-password-file", newPassword])
        let synced = try FobProcess.run(
            ["--vault", a.vault, "--password-file", newPassword, "sync"],
            environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data, "FOB_AGENT": "0"]) { $1 })
        #expect(synced.status == 0, "\(synced.stderrText)")

        let clone = try lab.attackerClone()
        let path = "keys/2.\(aID).key"
        let signed = try Self.read(clone, path)
        var flipped = signed
        flipped[10] ^= 1
        let c = try lab.device("c")
        for forged in [flipped, SignedFile.content(signed)] {
            try Self.write(clone, path, forged)
            try lab.forcePush(clone)
            let refused = try c.run(["sync", "join", lab.remote, "--tree-password-file", newPassword])
            #expect(refused.status == 93, "\(refused.stderrText)")
            #expect(
                refused.stderrText.contains("\(path) is not signed by the device it names"), "\(refused.stderrText)")
            #expect(try c.items().isEmpty)
        }
        try Self.write(clone, path, signed)
        try lab.forcePush(clone)
        let joined = try c.run(["sync", "join", lab.remote, "--tree-password-file", newPassword])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(try c.secret("web", "bob") == "two")
    }

    /// A device that does not hold the key of a device that joined since
    /// and started a key epoch checks the epoch file against that device's
    /// signed head: a changed signature is refused (exit 93).
    @Test func anEpochFileOfADeviceNotYetSeenIsCheckedAgainstItsHead() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote])
        let cID = try c.deviceID()
        let newPassword = lab.directory.url.path + "/new-pw"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        try c.ok(["passwd", "--rotate-key", "--new-password-file", newPassword])
        let synced = try FobProcess.run(
            ["--vault", c.vault, "--password-file", newPassword, "sync"],
            environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": c.data, "FOB_AGENT": "0"]) { $1 })
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(try Self.state(of: b).state.signers[cID] == nil)

        let clone = try lab.attackerClone()
        let path = "keys/2.\(cID).key"
        let signed = try Self.read(clone, path)
        var flipped = signed
        flipped[10] ^= 1
        try Self.write(clone, path, flipped)
        try lab.forcePush(clone)
        let refused = try b.run(["sync", "--tree-password-file", newPassword])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("\(path) is not signed by the device it names"), "\(refused.stderrText)")
        try Self.write(clone, path, signed)
        try lab.forcePush(clone)
        let taken = try b.run(["sync", "--tree-password-file", newPassword])
        #expect(taken.status == 0, "\(taken.stderrText)")
        _ = try a.run(["sync", "--tree-password-file", newPassword])
        #expect(try a.secret("web", "bob") == "two")
    }

    /// A revoked device keeps its keys: a revocation of a current device
    /// it signs, and a new device it brings in under the old key epoch, are refused.
    @Test func aRevokedDeviceCannotRevokeNorBringInADevice() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let aID = try a.deviceID()
        let stolen = try Self.state(of: b).state
        let keys = SyncKeys(epochs: stolen.epochs)
        let bKey = try #require(stolen.signingKey)
        try a.ok(["devices", "--revoke", try b.deviceID()])

        let clone = try lab.attackerClone()
        let revocationPath = TreePath.revoked(device: aID)
        let revocation = Revocation(device: aID, counter: 1).sealed(keys: keys)
        try Self.write(clone, revocationPath, SignedFile.signed(revocation, path: revocationPath, key: bKey))
        try lab.forcePush(clone)
        let refused = try a.run(["sync"])
        #expect(refused.status == 93)
        #expect(
            refused.stderrText.contains("\(revocationPath) is not signed by a current device"), "\(refused.stderrText)")

        // A device of its own making, under the key epoch it still holds.
        try lab.git(["rm", "-q", revocationPath], in: clone)
        let newID = "00112233445566aa"
        let newKey = DeviceSigningKey.generate()
        let headPath = TreePath.head(device: newID)
        let head = DeviceHead(
            device: newID, counter: 1, vector: VersionVector([newID: 1]), liveHash: [UInt8](repeating: 0, count: 32),
            publicKey: newKey.publicKey)
        try Self.write(clone, headPath, SignedFile.signed(head.sealed(keys: keys), path: headPath, key: newKey))
        try lab.forcePush(clone)
        let brought = try a.run(["sync"])
        #expect(brought.status == 93)
        #expect(
            brought.stderrText.contains("\(headPath) brings in device \(newID), key SHA256:")
                && brought.stderrText.contains("under an older key epoch"),
            "\(brought.stderrText)")
        #expect(try a.secret("mail", "ana") == "one")
    }

    /// Vaults and a tree as written before signing keys (no key in the
    /// states, no envelope on any file, heads without keys) keep syncing:
    /// each device takes a key, and its exports write every file again, signed.
    /// Makes `a` and `b`'s tree and states as written before signing keys:
    /// no envelope on any file of the remote, heads without keys, no device
    /// rosters, states without a key, signers or rosters, each device's
    /// branch at that tree.
    static func unsign(_ lab: SyncLab, _ a: Device, _ b: Device) throws {
        let keys = SyncKeys(epochs: try Self.state(of: a).state.epochs)
        let clone = try lab.attackerClone()
        for path in try lab.git(["ls-files"], in: clone).split(separator: "\n").map(String.init) {
            if TreePath.parseRoster(path) != nil {
                try lab.git(["rm", "-q", path], in: clone)
                continue
            }
            let bytes = try Self.read(clone, path)
            guard bytes.starts(with: SignedFile.magic) else { continue }
            var content = SignedFile.content(bytes)
            if let device = TreePath.parseHead(path) {
                var head = try DeviceHead.open(content, device: device, keys: keys)
                head.publicKey = nil
                content = head.sealed(keys: keys)
            }
            try Self.write(clone, path, content)
        }
        try lab.forcePush(clone)
        let unsigned = try lab.git(["rev-parse", "HEAD"], in: clone).filter { !$0.isWhitespace }
        for device in [a, b] {
            let (state, item, vault) = try Self.state(of: device)
            var old = state
            old.signingKey = nil
            old.signers = [:]
            old.unsignedUpTo = [:]
            old.rosterVersions = [:]
            old.syncedCommit = unsigned
            var next = item
            next.secret = old.encoded()
            try vault.applyImport([.replace(existing: item, with: next)])
            vault.lock()
            try lab.git(["fetch", "-q", "origin"], in: device.tree)
            try lab.git(["update-ref", "refs/heads/main", unsigned], in: device.tree)
        }
    }

    /// Expects every file of the remote's tree but the headers to be signed,
    /// for its path, by the key of the device it names (a revision's,
    /// head's or key epoch's writer) as that device's state holds it
    /// (each vault opened with its entry of `passwords`, or "pw").
    static func expectEverythingSigned(
        _ lab: SyncLab, devices: [Device], _ comment: String, passwords: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var keys: [String: [UInt8]] = [:]
        for device in devices {
            let (state, _, vault) = try Self.state(of: device, password: passwords[device.name] ?? "pw")
            vault.lock()
            keys[state.device] = try #require(state.signingKey).publicKey
        }
        let clone = try lab.attackerClone()
        for path in try lab.git(["ls-files"], in: clone).split(separator: "\n").map(String.init)
        where !path.hasPrefix("headers/") {
            if let signer = TreePath.parseRoster(path) {
                let key = try #require(keys[signer], "\(comment): \(path)", sourceLocation: sourceLocation)
                let roster = try Self.read(clone, path)
                #expect(
                    roster.withUnsafeBytes { try? DeviceRoster.decode($0) }.map {
                        $0.signer == signer
                            && DeviceSigningKey.verifies($0.signature, DeviceRoster.context + $0.body, publicKey: key)
                    } == true, "\(comment): \(path) is not signed by its device", sourceLocation: sourceLocation)
                continue
            }
            let writer =
                TreePath.parseRecord(path)?.dot.device ?? TreePath.parseHead(path) ?? TreePath.parseEpoch(path)?.device
            let key = try #require(writer.flatMap { keys[$0] }, "\(comment): \(path)", sourceLocation: sourceLocation)
            #expect(
                (try? SignedFile.open(try Self.read(clone, path), path: path, publicKey: key)) != nil,
                "\(comment): \(path) is not signed by its device", sourceLocation: sourceLocation)
        }
    }

    @Test func aTreeWrittenBeforeSigningKeysKeepsSyncingAndComesOutSigned() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        try Self.unsign(lab, a, b)

        try a.ok(["update", "mail", "ana"], input: "changed on a\n")
        _ = try a.sync()
        _ = try b.sync()
        _ = try a.sync()
        #expect(try b.secret("mail", "ana") == "changed on a")
        #expect(try a.secret("web", "bob") == "two")
        try Self.expectEverythingSigned(lab, devices: [a, b], "after")
        #expect(try Self.state(of: a).state.signers[try b.deviceID()] != nil)
    }
}

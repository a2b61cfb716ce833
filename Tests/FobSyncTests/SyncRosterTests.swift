import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// Device rosters (`devices/DEVICE.roster`) end to end with the built
/// `fob`, real git and a bare remote: each device signs one listing every
/// key it holds; a roster that goes back, is gone, is signed by another
/// device or gives another key is refused (exit 93).
@Suite(.serialized) struct SyncRosterTests {
    /// The roster of `device` in `clone`, decoded (its signature unchecked).
    static func roster(of device: String, in clone: String) throws -> (roster: DeviceRoster, signer: String) {
        let bytes = try SyncSignatureTests.read(clone, TreePath.roster(device: device))
        let decoded = try bytes.withUnsafeBytes { try DeviceRoster.decode($0) }
        return (decoded.roster, decoded.signer)
    }

    /// Syncs `device` and expects exit 93 with `message` in its error.
    static func refused(_ device: Device, _ message: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try device.run(["sync"])
        #expect(result.status == 93, "\(result.stderrText)", sourceLocation: sourceLocation)
        #expect(result.stderrText.contains(message), "\(result.stderrText)", sourceLocation: sourceLocation)
    }

    @Test func eachDeviceSignsARosterOfTheKeysItHolds() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        _ = try a.sync()
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        let aKey = try #require(try SyncSignatureTests.state(of: a).state.signingKey).publicKey
        let bKey = try #require(try SyncSignatureTests.state(of: b).state.signingKey).publicKey
        let clone = try lab.attackerClone()
        let (roster, signer) = try Self.roster(of: aID, in: clone)
        #expect(signer == aID)
        #expect(roster.members.mapValues(\.publicKey) == [aID: aKey, bID: bKey])
        #expect(roster.members.values.allSatisfy { $0.cutOff == nil && $0.origin?.device == aID })
        #expect(try Self.roster(of: bID, in: clone).roster.members[bID]?.publicKey == bKey)
        try SyncSignatureTests.expectEverythingSigned(lab, devices: [a, b], "rosters")
        // Nothing changed: no new roster.
        _ = try a.sync()
        #expect(try Self.roster(of: aID, in: try lab.attackerClone()).roster.version == roster.version)
    }

    @Test func anOlderRosterOrNoneIsRefused() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let aID = try a.deviceID()
        let before = try lab.attackerClone()
        let old = try SyncSignatureTests.read(before, TreePath.roster(device: aID))
        // a's roster takes b in (version 2); b takes it.
        _ = try a.sync()
        _ = try b.sync()
        let clone = try lab.attackerClone()
        #expect(try Self.roster(of: aID, in: clone).roster.version == 2)
        try SyncSignatureTests.write(clone, TreePath.roster(device: aID), old)
        try lab.forcePush(clone)
        try Self.refused(b, "the device roster went back (version 1, 2 held) (devices/\(aID).roster)")
        try lab.git(["rm", "-q", TreePath.roster(device: aID)], in: clone)
        try lab.forcePush(clone)
        try Self.refused(b, "the device roster of device \(aID) was removed from the tree")
    }

    /// The attacker holds b's vault (its key epochs and signing key) and
    /// git access: a roster it signs under a's id, and its own roster
    /// giving a another key, are refused.
    @Test func aRosterSignedByAnotherDeviceOrGivingAnotherKeyIsRefused() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        _ = try a.sync()
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        let stolen = try #require(try SyncSignatureTests.state(of: b).state.signingKey)
        let forgedKey = DeviceSigningKey.generate()
        let clone = try lab.attackerClone()
        var roster = try Self.roster(of: aID, in: clone).roster
        roster.version += 1
        roster.members[bID] = .init(publicKey: forgedKey.publicKey)
        let path = TreePath.roster(device: aID)
        try SyncSignatureTests.write(clone, path, roster.signed(by: aID, key: stolen))
        try lab.forcePush(clone)
        try Self.refused(a, "\(path) is not signed by the device it names")

        try lab.git(["checkout", "-q", "HEAD~1", "--", path], in: clone)
        var own = try Self.roster(of: bID, in: clone).roster
        own.version += 1
        own.members[aID] = .init(publicKey: forgedKey.publicKey)
        try SyncSignatureTests.write(clone, TreePath.roster(device: bID), own.signed(by: bID, key: stolen))
        try lab.forcePush(clone)
        try Self.refused(a, "the device roster changed the signing key of device \(aID)")
        #expect(try a.secret("mail", "ana") == "one")
    }

    /// The `signing key:` line of `fob sync status` on `device`.
    static func fingerprint(of device: Device) throws -> String {
        let status = try device.ok(["sync", "status"])
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("signing key: ") })
        return String(line.dropFirst("signing key: ".count))
    }

    /// A join shows every roster signer's key; without a terminal or
    /// `--accept-key` it stops (exit 36), with a key no device has it is
    /// refused (exit 1), and neither leaves a trace in the vault.
    @Test func aJoinShowsTheKeysAndTakesOnlyOneAccepted() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let aKey = try Self.fingerprint(of: a)
        #expect(aKey.hasPrefix("SHA256:") && aKey.count == 50, "\(aKey)")
        let c = try lab.device("c")
        let environment = lab.gitEnvironment.merging([
            "XDG_DATA_HOME": c.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw", "FOB_AGENT": "0",
        ]) { $1 }
        let stopped = try FobProcess.run(["--vault", c.vault, "sync", "join", lab.remote], environment: environment)
        #expect(stopped.status == 36, "\(stopped.stderrText)")
        #expect(stopped.stderrText.contains("The sync tree's devices sign with these keys:"), "\(stopped.stderrText)")
        #expect(stopped.stderrText.contains(aKey), "\(stopped.stderrText)")
        #expect(stopped.stderrText.contains(try Self.fingerprint(of: b)), "\(stopped.stderrText)")
        let wrong = try c.run([
            "sync", "join", lab.remote, "--accept-key", "SHA256:" + String(repeating: "A", count: 43),
        ])
        #expect(wrong.status == 1, "\(wrong.stderrText)")
        #expect(
            wrong.stderrText.contains("no device of the sync tree signs its roster with key"), "\(wrong.stderrText)")
        #expect(try c.items().isEmpty)
        #expect(try c.run(["sync", "status"]).status != 0)
        let joined = try c.run(["sync", "join", lab.remote, "--accept-key", aKey])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(try c.contents() == a.contents())
    }

    /// On a terminal, a join shows the keys numbered and asks for the
    /// number of the one compared on its device, echoed as typed (it is no
    /// secret), each prompt line under 80 columns: that device is accepted
    /// (the others come through its roster). `yes`, which once accepted
    /// every key shown (a roster planted by anyone who can push among
    /// them), accepts none: a wrong answer is asked again, saying what is
    /// valid; after three the join accepts none and changes nothing
    /// (exit 1), leaving no sync tree behind, nor the directory it made for one.
    @Test func aJoinOnATerminalAcceptsTheOneKeyChosenByNumber() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        let aKey = try Self.fingerprint(of: a)
        let c = try lab.device("c")
        let prompt =
            "Compare one with `fob sync status` on its device.\r\n"
            + "Type its number to accept it (Enter accepts none): "
        let again = "Type a number from 1 to 2, or a fingerprint; Enter accepts none: "
        // Each answer ends with the CR LF the prompt writes, the terminal's LF made CR LF.
        func join() throws -> TerminalSession {
            try FobProcess.startInTerminal(
                ["--vault", c.vault, "sync", "join", lab.remote],
                environment: lab.gitEnvironment.merging([
                    "XDG_DATA_HOME": c.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw", "FOB_AGENT": "0",
                ]) { $1 })
        }
        let refused = try join()
        #expect(refused.waitFor(prompt), "\(refused.outputText)")
        refused.send(Array("yes\r".utf8))
        #expect(refused.waitFor(prompt + "yes\r\r\n" + again), "\(refused.outputText)")
        refused.send(Array("3\r".utf8))
        #expect(refused.waitFor(again + "3\r\r\n" + again), "\(refused.outputText)")
        refused.send(Array("0\r".utf8))
        #expect(refused.wait(timeout: 60) == 1, "\(refused.outputText)")
        #expect(
            refused.outputText.hasSuffix(again + "0\r\r\nfob: no key was accepted; nothing changed\r\n"),
            "\(refused.outputText)")
        #expect(!refused.outputText.contains("•"), "\(refused.outputText)")
        #expect(prompt.split(separator: "\r\n").allSatisfy { $0.count < 80 } && again.count < 80)
        #expect(try c.items().isEmpty)
        let directory = SyncPaths.directory(vaultPath: c.vault, environment: ["XDG_DATA_HOME": c.data])
        #expect(!FileManager.default.fileExists(atPath: directory), "\(directory)")
        #expect(FileManager.default.fileExists(atPath: c.data + "/fob/sync"))

        let session = try join()
        #expect(session.waitFor(prompt), "\(session.outputText)")
        let line = try #require(session.outputText.split(whereSeparator: \.isNewline).first { $0.contains(aKey) })
        let number = try #require(try #/^ *([0-9]+)\. /#.firstMatch(in: String(line))?.1, "\(line)")
        session.send(Array("y\r".utf8))
        #expect(session.waitFor(prompt + "y\r\r\n" + again), "\(session.outputText)")
        session.send(Array("\(number)\r".utf8))
        #expect(session.wait(timeout: 60) == 0, "\(session.outputText)")
        #expect(session.outputText.contains(again + "\(number)\r\r\n"), "\(session.outputText)")
        #expect(try c.contents() == a.contents())
    }

    /// A join (or init) at a path with no vault says so before it asks
    /// any password or runs a key derivation (exit 50).
    @Test func aJoinWithoutAVaultSaysSoBeforeAskingAPassword() throws {
        let (lab, _, _) = try SyncProcessTests.pair()
        let missing = lab.directory.url.path + "/none.db"
        for verb in ["join", "init"] {
            let session = try FobProcess.startInTerminal(
                ["--vault", missing, "sync", verb, lab.remote],
                environment: lab.gitEnvironment.merging([
                    "XDG_DATA_HOME": lab.directory.url.path + "/none-data", "FOB_AGENT": "0",
                ]) { $1 })
            #expect(session.wait(timeout: 60) == 50, "\(session.outputText)")
            #expect(
                session.outputText
                    == "fob: no vault at \(missing); create one with `fob init`, or name yours with --vault or "
                    + "FOB_VAULT (errSecNoSuchKeychain)\r\n",
                "\(session.outputText)")
        }
        #expect(!FileManager.default.fileExists(atPath: lab.directory.url.path + "/none-data"))
    }

    /// c joined but a has not synced since, so a's roster does not list
    /// c: a device joining now that accepts a's key names c as on no
    /// roster it trusts and says how c is taken in: at its signed head,
    /// since no device of the tree is revoked (then merged: exit 0).
    @Test func aJoinNamesADeviceOnNoAcceptedRosterAndHowItIsTakenIn() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        let aKey = try Self.fingerprint(of: a)
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote, "--accept-key", aKey])
        let d = try lab.device("d")
        let joined = try d.run(["sync", "join", lab.remote, "--accept-key", aKey])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(
            joined.stderrText.contains(
                "fob: device \(try c.deviceID()) is on no roster of a device accepted:\n"
                    + "     it is taken in with its signed head, as no device of the tree is revoked"),
            "\(joined.stderrText)")
        #expect(try d.contents() == a.contents())
    }

    /// An attacker with b's vault (its key epochs and signing key) gives a
    /// a key of its own in a's head and both rosters: a joining device
    /// that accepts a's real key (as a's `fob sync status` shows it) finds
    /// no roster a signed and refuses, where taking keys at first sight
    /// would have trusted the attacker's key for a.
    @Test func aJoinAcceptingARealKeyRefusesATreeThatReplacedIt() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        _ = try a.sync()
        let aKey = try Self.fingerprint(of: a)
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        let stolen = try SyncSignatureTests.state(of: b).state
        let keys = SyncKeys(epochs: stolen.epochs)
        let bKey = try #require(stolen.signingKey)
        let fake = DeviceSigningKey.generate()
        let clone = try lab.attackerClone()
        let headPath = TreePath.head(device: aID)
        var head = try DeviceHead.open(
            SignedFile.content(SyncSignatureTests.read(clone, headPath)), device: aID, keys: keys)
        head.publicKey = fake.publicKey
        try SyncSignatureTests.write(
            clone, headPath, SignedFile.signed(head.sealed(keys: keys), path: headPath, key: fake))
        for (signer, key) in [(aID, fake), (bID, bKey)] {
            var roster = try Self.roster(of: signer, in: clone).roster
            roster.members[aID] = .init(publicKey: fake.publicKey)
            try SyncSignatureTests.write(clone, TreePath.roster(device: signer), roster.signed(by: signer, key: key))
        }
        try lab.forcePush(clone)
        let c = try lab.device("c")
        let refused = try c.run(["sync", "join", lab.remote, "--accept-key", aKey])
        #expect(refused.status == 1, "\(refused.stderrText)")
        #expect(
            refused.stderrText.contains("no device of the sync tree signs its roster with key \(aKey)"),
            "\(refused.stderrText)")
        #expect(try c.items().isEmpty)
    }
}

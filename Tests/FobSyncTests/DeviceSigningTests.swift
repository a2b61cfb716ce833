import FobStore
import Testing

@_spi(Fuzz) @testable import FobSync

/// Device signing keys, signed tree files and the device roster: a holder
/// of an old epoch key (but not of a device's signing key) cannot write
/// under that device's id, and the roster never goes back.
@Suite struct DeviceSigningTests {
    static let a = "00000000000000aa"
    static let b = "00000000000000bb"
    static let c = "00000000000000cc"

    static func roster(_ keys: [String: DeviceSigningKey], version: UInt64 = 1) -> DeviceRoster {
        DeviceRoster(
            version: version,
            members: keys.mapValues {
                DeviceRoster.Member(publicKey: $0.publicKey, origin: .init(device: a, counter: 0, time: 1_796_000_000))
            })
    }

    /// Who added each member travels with the roster; a member added by a
    /// device the roster does not list, or by a revoked one after its
    /// cut-off, is refused; a roster of format 1 (no adders) is read; an
    /// unknown format is refused by name.
    @Test func aRosterRecordsWhoAddedEachMemberAndRefusesImpossibleAdders() throws {
        let keyA = DeviceSigningKey.generate()
        let keyB = DeviceSigningKey.generate()
        var roster = Self.roster([Self.a: keyA, Self.b: keyB])
        roster.members[Self.b]?.origin = .init(device: Self.a, counter: 7, time: 1_796_000_100)
        let opened = try DeviceRoster.open(roster.signed(by: Self.a, key: keyA), held: nil)
        #expect(opened.members[Self.b]?.origin == .init(device: Self.a, counter: 7, time: 1_796_000_100))

        var unknown = roster
        unknown.members[Self.b]?.origin?.device = "00000000000000cc"
        #expect(throws: DeviceRoster.Refusal.adderUnknown(Self.b, "00000000000000cc")) {
            try DeviceRoster.open(unknown.signed(by: Self.a, key: keyA), held: nil)
        }
        // a, revoked after its counter 6, added b at its counter 7 (signed by b, still current).
        var late = roster
        late.members[Self.a]?.cutOff = 6
        #expect(throws: DeviceRoster.Refusal.addedAfterRevocation(Self.b, Self.a, 7)) {
            try DeviceRoster.open(late.signed(by: Self.b, key: keyB), held: nil)
        }
        late.members[Self.a]?.cutOff = 7
        #expect(try DeviceRoster.open(late.signed(by: Self.b, key: keyB), held: nil) == late)

        // Format 1, as written before adders were recorded: read without origins.
        var w = ByteWriter()
        w.bytes = Array("FSL1".utf8)
        w.u64(1)
        w.string(Self.a)
        w.u32(1)
        w.string(Self.a)
        w.data(keyA.publicKey)
        w.u64(0)
        let former = w.bytes + keyA.signature(DeviceRoster.context + w.bytes)
        #expect(
            try DeviceRoster.open(former, held: nil)
                == DeviceRoster(version: 1, members: [Self.a: .init(publicKey: keyA.publicKey)]))

        var future = roster.signed(by: Self.a, key: keyA)
        future[3] = UInt8(ascii: "3")
        #expect(
            throws: TreeFormatError.malformed("a device roster of format 3, which this Fob does not know (update Fob)")
        ) {
            try future.withUnsafeBytes { try DeviceRoster.decode($0) }
        }
    }

    /// A joining device that accepts a's key trusts what a's roster
    /// vouches for, and the revocations it lists; the roster of b, which
    /// a revoked, vouches for no one (here c, which b listed after), and
    /// b's claim that a is revoked is not read.
    @Test func aRevokedDevicesRosterVouchesForNoOneAtAJoin() throws {
        let (keyA, keyB, keyC) = (DeviceSigningKey.generate(), DeviceSigningKey.generate(), DeviceSigningKey.generate())
        var byA = Self.roster([Self.a: keyA, Self.b: keyB], version: 3)
        byA.members[Self.b]?.cutOff = 4
        var byB = Self.roster([Self.a: keyA, Self.b: keyB, Self.c: keyC], version: 2)
        byB.members[Self.c]?.origin = .init(device: Self.b, counter: 2, time: 0)
        byB.members[Self.a]?.cutOff = 1
        func decoded(_ roster: DeviceRoster, _ signer: String, _ key: DeviceSigningKey) throws -> (
            roster: DeviceRoster, signer: String, signature: [UInt8], body: [UInt8]
        ) {
            try roster.signed(by: signer, key: key).withUnsafeBytes { try DeviceRoster.decode($0) }
        }
        // "…aa" sorts before "…bb": a's roster is read first, then b's is not.
        let rosters = [Self.a: try decoded(byA, Self.a, keyA), Self.b: try decoded(byB, Self.b, keyB)]
        let trust = try DeviceRoster.trusted(from: [Self.a: keyA.publicKey], rosters: rosters)
        #expect(Set(trust.keys.keys) == [Self.a, Self.b])
        #expect(trust.keys[Self.b] == keyB.publicKey)
        #expect(trust.revoked == [Self.b: 4])

        // c, whom only b vouches for, is trusted through a device b and a
        // both vouch for: a roster b signs does not take it away.
        var withC = byA
        withC.members[Self.c] = .init(publicKey: keyC.publicKey, origin: .init(device: Self.a, counter: 2, time: 0))
        let both = [Self.a: try decoded(withC, Self.a, keyA), Self.b: try decoded(byB, Self.b, keyB)]
        let fromA = try DeviceRoster.trusted(from: [Self.a: keyA.publicKey], rosters: both)
        #expect(fromA.keys[Self.c] == keyC.publicKey)
        #expect(fromA.origins[Self.c] == .init(device: Self.a, counter: 2, time: 0))
        #expect(fromA.revoked == [Self.b: 4])

        // Two rosters that give one device two cut-offs are refused by name.
        var moved = byB
        moved.members[Self.a]?.cutOff = nil
        moved.members[Self.b]?.cutOff = 9
        let conflicting = [Self.a: try decoded(byA, Self.a, keyA), Self.b: try decoded(moved, Self.b, keyB)]
        #expect(throws: DeviceRoster.Refusal.revocationChanged(Self.b)) {
            try DeviceRoster.trusted(from: [Self.b: keyB.publicKey], rosters: conflicting)
        }
    }

    @Test func aSignedFileOpensOnlyForItsPathAndSigner() throws {
        let keyA = DeviceSigningKey.generate()
        let keyB = DeviceSigningKey.generate()
        let path = TreePath.head(device: Self.a)
        let content: [UInt8] = Array("sealed head".utf8)
        let file = SignedFile.signed(content, path: path, key: keyA)
        #expect(try SignedFile.open(file, path: path, publicKey: keyA.publicKey) == content)
        // Moved to another device's path: refused.
        #expect(throws: TreeFormatError.unauthentic) {
            try SignedFile.open(file, path: TreePath.head(device: Self.b), publicKey: keyA.publicKey)
        }
        // B signs a head under A's id: A's key does not verify it.
        let forged = SignedFile.signed(content, path: path, key: keyB)
        #expect(throws: TreeFormatError.unauthentic) {
            try SignedFile.open(forged, path: path, publicKey: keyA.publicKey)
        }
        // One flipped byte of the content.
        var flipped = file
        flipped[flipped.count - 1] ^= 1
        #expect(throws: TreeFormatError.unauthentic) {
            try SignedFile.open(flipped, path: path, publicKey: keyA.publicKey)
        }
        #expect(throws: TreeFormatError.truncated) {
            try SignedFile.open(Array(file.prefix(20)), path: path, publicKey: keyA.publicKey)
        }
        #expect(throws: TreeFormatError.malformed("not a signed file")) {
            try SignedFile.open(content, path: path, publicKey: keyA.publicKey)
        }
    }

    @Test func theSecretHalfRestoresTheSameKeyPair() throws {
        let key = DeviceSigningKey.generate()
        let again = try DeviceSigningKey(secretKey: SecretBytes(key.secretKey.withUnsafeBytes { Array($0) }))
        #expect(again.publicKey == key.publicKey)
        #expect(throws: TreeFormatError.malformed("a signing key")) {
            try DeviceSigningKey(secretKey: SecretBytes([1, 2, 3]))
        }
    }

    @Test func theRosterVerifiesFilesByTheDeviceTheyName() throws {
        let keyA = DeviceSigningKey.generate()
        let keyB = DeviceSigningKey.generate()
        var roster = Self.roster([Self.a: keyA, Self.b: keyB])
        let path = "items/x/\(Self.b).7"
        let file = SignedFile.signed([1, 2, 3], path: path, key: keyB)
        #expect(try roster.verified(file, path: path, device: Self.b, counter: 7) == [1, 2, 3])
        // A (holding every epoch key) writes under B's id: refused.
        let forged = SignedFile.signed([9], path: path, key: keyA)
        #expect(throws: DeviceRoster.Refusal.unauthentic(path)) {
            try roster.verified(forged, path: path, device: Self.b, counter: 7)
        }
        #expect(throws: DeviceRoster.Refusal.unknownDevice(Self.c)) {
            try roster.verified(file, path: path, device: Self.c, counter: 7)
        }
        // B revoked with its cut-off at 7: counter 7 still holds, 8 and a head do not.
        roster.members[Self.b]?.cutOff = 7
        #expect(try roster.verified(file, path: path, device: Self.b, counter: 7) == [1, 2, 3])
        let later = "items/x/\(Self.b).8"
        #expect(throws: DeviceRoster.Refusal.revokedWriter(Self.b, 8)) {
            try roster.verified(SignedFile.signed([4], path: later, key: keyB), path: later, device: Self.b, counter: 8)
        }
        let head = TreePath.head(device: Self.b)
        #expect(throws: DeviceRoster.Refusal.revokedWriter(Self.b, 0)) {
            try roster.verified(SignedFile.signed([4], path: head, key: keyB), path: head, device: Self.b, counter: nil)
        }
    }

    @Test func theRosterRoundTripsAndNeverGoesBack() throws {
        let keyA = DeviceSigningKey.generate()
        let keyB = DeviceSigningKey.generate()
        let v1 = Self.roster([Self.a: keyA])
        let held = try DeviceRoster.open(v1.signed(by: Self.a, key: keyA), held: nil)
        #expect(held == v1)
        var v2 = Self.roster([Self.a: keyA, Self.b: keyB], version: 2)
        #expect(try DeviceRoster.open(v2.signed(by: Self.a, key: keyA), held: held) == v2)
        // The same roster again is no change; an older one is refused.
        #expect(try DeviceRoster.open(v1.signed(by: Self.a, key: keyA), held: held) == v1)
        #expect(throws: DeviceRoster.Refusal.wentBack(held: 2, offered: 1)) {
            try DeviceRoster.open(v1.signed(by: Self.a, key: keyA), held: v2)
        }
        // B, not yet in the held roster, cannot add itself.
        #expect(throws: DeviceRoster.Refusal.signerNotCurrent(Self.b)) {
            try DeviceRoster.open(v2.signed(by: Self.b, key: keyB), held: held)
        }
        // A revoked B: B can neither lift it nor sign a roster any more.
        v2.members[Self.b]?.cutOff = 12
        var lifted = v2
        lifted.version = 3
        lifted.members[Self.b]?.cutOff = nil
        #expect(throws: DeviceRoster.Refusal.revocationChanged(Self.b)) {
            try DeviceRoster.open(lifted.signed(by: Self.a, key: keyA), held: v2)
        }
        #expect(throws: DeviceRoster.Refusal.signerNotCurrent(Self.b)) {
            try DeviceRoster.open(lifted.signed(by: Self.b, key: keyB), held: v2)
        }
        var dropped = Self.roster([Self.a: keyA], version: 3)
        #expect(throws: DeviceRoster.Refusal.memberDropped(Self.b)) {
            try DeviceRoster.open(dropped.signed(by: Self.a, key: keyA), held: v2)
        }
        dropped.members[Self.b] = DeviceRoster.Member(publicKey: keyA.publicKey, cutOff: 12)
        #expect(throws: DeviceRoster.Refusal.keyChanged(Self.b)) {
            try DeviceRoster.open(dropped.signed(by: Self.a, key: keyA), held: v2)
        }
        // A flipped byte of the signed body.
        var bytes = v1.signed(by: Self.a, key: keyA)
        bytes[6] ^= 1
        #expect(throws: DeviceRoster.Refusal.unauthentic("the device roster")) {
            try DeviceRoster.open(bytes, held: held)
        }
    }

    @Test func theFuzzEntryPointReadsRostersAndEnvelopes() {
        let key = DeviceSigningKey.generate()
        let roster = Self.roster([Self.a: key]).signed(by: Self.a, key: key)
        let file = SignedFile.signed([1], path: "devices/roster", key: key)
        #expect(([7] + roster).withUnsafeBytes { SyncFuzzEntryPoints.parse($0) })
        #expect(([8] + file).withUnsafeBytes { SyncFuzzEntryPoints.parse($0) })
        #expect(!([7] + roster.dropLast()).withUnsafeBytes { SyncFuzzEntryPoints.parse($0) })
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// The merge and the tree's formats, without git.
@Suite struct MergeTests {
    static let a = "aaaaaaaaaaaaaaaa"
    static let b = "bbbbbbbbbbbbbbbb"
    static let c = "cccccccccccccccc"
    static let date = Date(timeIntervalSince1970: 1_800_000_000)

    static func item(_ secret: String, notes: String? = nil) -> Item {
        Item(
            service: "mail", account: "ana", comment: notes, created: date, modified: date,
            persistentID: UUID(uuidString: "00000000-0000-0000-0000-000000000001")!, secret: .text(secret))
    }

    /// A revision of `device` at `counter` that has seen `seen` and set `changed` parts.
    static func revision(
        _ device: String, _ counter: UInt64, seen: [String: UInt64] = [:], from base: Revision? = nil,
        item: Item?, changed: [FieldGroup] = FieldGroup.allCases
    ) -> Revision {
        let dot = Dot(device: device, counter: counter)
        var vector = VersionVector(seen)
        if let base { vector = vector.joined(base.vector) }
        vector.add(dot)
        var dots = base?.fieldDots ?? [:]
        for group in changed { dots[group] = dot }
        return Revision(dot: dot, vector: vector, fieldDots: item == nil ? [:] : dots, item: item, siblings: [])
    }

    @Test func aRevisionThatSawAnotherSupersedesIt() throws {
        let first = Self.revision(Self.a, 1, item: Self.item("one"))
        let second = Self.revision(Self.b, 1, from: first, item: Self.item("two"), changed: [.secret])
        let view = try #require(SyncMerge.view(of: [second, first]))
        #expect(view.item?.secret == .text("two"))
        #expect(!view.hasConflict)
        #expect(view.live == [second.dot])
    }

    @Test func concurrentEditsOfDifferentPartsAreBothKept() throws {
        let base = Self.revision(Self.a, 1, item: Self.item("one"))
        let notes = Self.revision(Self.a, 2, from: base, item: Self.item("one", notes: "n"), changed: [.notes])
        let secret = Self.revision(Self.b, 1, from: base, item: Self.item("two"), changed: [.secret])
        for order in [[notes, secret], [secret, notes]] {
            let view = try #require(SyncMerge.view(of: order))
            #expect(view.item?.secret == .text("two"))
            #expect(view.item?.comment == "n")
            #expect(!view.hasConflict)
        }
    }

    @Test func bothChangingOnePartPicksTheHigherDotAndKeepsTheOther() throws {
        let base = Self.revision(Self.a, 1, item: Self.item("one"))
        let fromA = Self.revision(Self.a, 2, from: base, item: Self.item("from a"), changed: [.secret])
        let fromB = Self.revision(Self.b, 2, from: base, item: Self.item("from b"), changed: [.secret])
        let one = try #require(SyncMerge.view(of: [fromA, fromB]))
        let other = try #require(SyncMerge.view(of: [fromB, fromA]))
        // Counter 2 on both: the higher device id wins, everywhere.
        #expect(one.item?.secret == .text("from b"))
        #expect(other.item?.secret == .text("from b"))
        #expect(one.siblings.map(\.item.secret) == [.text("from a")])
        #expect(other.siblings.map(\.item.secret) == [.text("from a")])
        #expect(one.siblings.map(\.parts) == [[.secret]])
    }

    /// The sibling records the parts it lost, not the ones the merge took
    /// from it or the other side's own edits: `--keep remote` takes only those.
    @Test func aSiblingKeepsOnlyThePartsItLost() throws {
        let base = Self.revision(Self.a, 1, item: Self.item("one", notes: "base"))
        // a changed the notes and the secret, b the secret only; a's dot is higher.
        let fromA = Self.revision(
            Self.a, 3, from: base, item: Self.item("from a", notes: "a's notes"), changed: [.secret, .notes])
        let fromB = Self.revision(Self.b, 2, from: base, item: Self.item("from b", notes: "base"), changed: [.secret])
        for order in [[fromA, fromB], [fromB, fromA]] {
            let view = try #require(SyncMerge.view(of: order))
            #expect(view.item?.secret == .text("from a"))
            #expect(view.item?.comment == "a's notes")
            #expect(view.siblings.map(\.item.secret) == [.text("from b")])
            #expect(view.siblings.map(\.parts) == [[.secret]])
            let conflict = SyncEngine.Conflict(current: try #require(view.item), others: view.siblings)
            #expect(conflict.differingParts(of: view.siblings[0]) == [.secret])
            // Kept before the parts were recorded: every part that differs, as before.
            let unknown = Sibling(item: view.siblings[0].item, parts: nil)
            #expect(conflict.differingParts(of: unknown) == [.secret, .notes])
        }
    }

    /// Each side loses the parts the other's higher dot took: two siblings,
    /// each with its own parts.
    @Test func eachSideLosingSomePartsKeepsBothVersions() throws {
        let base = Self.revision(Self.a, 1, item: Self.item("one", notes: "base"))
        // a set the notes at counter 5 and the secret at 2; b both at 3.
        let aSecret = Self.revision(Self.a, 2, from: base, item: Self.item("from a", notes: "base"), changed: [.secret])
        let aNotes = Self.revision(
            Self.a, 5, from: aSecret, item: Self.item("from a", notes: "a's notes"), changed: [.notes])
        let fromB = Self.revision(
            Self.b, 3, from: base, item: Self.item("from b", notes: "b's notes"), changed: [.secret, .notes])
        let view = try #require(SyncMerge.view(of: [aNotes, fromB]))
        #expect(view.item?.secret == .text("from b"))
        #expect(view.item?.comment == "a's notes")
        // Folded in dot order (b's 3 before a's 5): b's version first.
        #expect(view.siblings.map(\.item.secret) == [.text("from b"), .text("from a")])
        #expect(view.siblings.map(\.parts) == [[.notes], [.secret]])
    }

    @Test func anEditBeatsADeleteAndTwoDeletesMakeOne() throws {
        let base = Self.revision(Self.a, 1, item: Self.item("one"))
        let deleted = Self.revision(Self.a, 2, from: base, item: nil)
        let edited = Self.revision(Self.b, 1, from: base, item: Self.item("edited"), changed: [.secret])
        let view = try #require(SyncMerge.view(of: [deleted, edited]))
        #expect(view.item?.secret == .text("edited"))
        #expect(view.editBeatDelete)
        let again = Self.revision(Self.b, 1, from: base, item: nil)
        let both = try #require(SyncMerge.view(of: [deleted, again]))
        #expect(both.item == nil)
        #expect(!both.editBeatDelete)
    }

    @Test func threeDevicesConvergeWhateverTheOrder() throws {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let base = Self.revision(Self.a, 1, item: Self.item("one"))
            var revisions: [Revision] = []
            for (index, device) in [Self.a, Self.b, Self.c].enumerated() {
                let groups =
                    [FieldGroup.secret] + FieldGroup.allCases.dropFirst().filter { _ in Bool.random(using: &generator) }
                let notes = Bool.random(using: &generator) ? "n\(index)" : nil
                let item = Bool.random(using: &generator) ? nil : Self.item("s\(index)", notes: notes)
                revisions.append(Self.revision(device, 2 + UInt64(index), from: base, item: item, changed: groups))
            }
            let first = try #require(SyncMerge.view(of: revisions))
            let second = try #require(SyncMerge.view(of: revisions.shuffled(using: &generator)))
            #expect(first.item.map { ItemWire.encode($0) } == second.item.map { ItemWire.encode($0) })
            #expect(first.siblings.count == second.siblings.count)
            // Every written secret is current or kept as a sibling.
            for written in revisions.compactMap(\.item) where first.item != nil {
                let kept = [first.item!] + first.siblings.map(\.item)
                #expect(kept.contains { $0.secret == written.secret } || written.secret == .text("one"))
            }
        }
    }

    /// A file whose item is not the one its name stands for, or lies in
    /// Fob's reserved access group, is refused (as tampering) when opened.
    @Test func aFileMustHoldTheItemItsNameStandsFor() throws {
        let keys = SyncKeys(syncKey: .random(count: 32))
        let revision = Self.revision(Self.a, 1, item: Self.item("planted"))
        var other = Self.item("x")
        other.account = "bob"
        let wrongName = keys.name(of: other)
        #expect(throws: TreeFormatError.malformed("an item whose key is not its file's name")) {
            try Revision.open(
                revision.sealed(name: wrongName, keys: keys), name: wrongName, dot: revision.dot, keys: keys)
        }
        var reserved = Self.item("state")
        reserved.accessGroup = "fob.sync"
        let reservedName = keys.name(of: reserved)
        let planted = Self.revision(Self.a, 1, item: reserved)
        #expect(throws: TreeFormatError.malformed("an item in Fob's reserved access group \"fob.sync\"")) {
            try Revision.open(
                planted.sealed(name: reservedName, keys: keys), name: reservedName, dot: planted.dot, keys: keys)
        }
    }

    /// What an export keeps of a revision it wrote is what opening its
    /// file gives: items, siblings with their parts and writers, vector,
    /// field dots and the key it is sealed under.
    @Test func aRevisionReadAsSealedIsTheOneItsFileOpensTo() throws {
        let keys = SyncKeys(syncKey: .random(count: 32))
        let name = keys.name(of: Self.item("x"))
        var revision = Self.revision(Self.a, 3, item: Self.item("secret", notes: "n"))
        revision.siblings = [Sibling(item: Self.item("other"), parts: [.secret, .url], device: Self.b)]
        let (sealed, read) = try revision.sealedAndRead(name: name, keys: keys)
        let opened = try Revision.open(sealed, name: name, dot: revision.dot, keys: keys)
        #expect(read.item == opened.item)
        #expect(read.siblings.map(\.item) == opened.siblings.map(\.item))
        #expect(read.siblings.map(\.parts) == opened.siblings.map(\.parts))
        #expect(read.siblings.map(\.device) == opened.siblings.map(\.device))
        #expect(read.vector == opened.vector && read.fieldDots == opened.fieldDots && read.dot == opened.dot)
        #expect(read.sealedUnder == opened.sealedUnder)
        // Its name is checked as an opened file's is.
        #expect(throws: TreeFormatError.malformed("an item whose key is not its file's name")) {
            try revision.sealedAndRead(name: String(repeating: "0", count: 32), keys: keys)
        }
    }

    @Test func filesOpenOnlyUnderTheirNameDeviceAndCounter() throws {
        let keys = SyncKeys(syncKey: .random(count: 32))
        let name = keys.name(of: Self.item("x"))
        #expect(name.count == 32)
        var revision = Self.revision(Self.a, 3, item: Self.item("secret", notes: "n"))
        revision.siblings = [Sibling(item: Self.item("other"), parts: [.secret, .url])]
        let sealed = revision.sealed(name: name, keys: keys)
        let opened = try Revision.open(sealed, name: name, dot: revision.dot, keys: keys)
        #expect(opened.item?.secret == .text("secret"))
        #expect(opened.siblings.map(\.item.secret) == [.text("other")])
        #expect(opened.siblings.map(\.parts) == [[.secret, .url]])
        // A sibling without its parts (as files before them hold): still read, parts unknown.
        revision.siblings[0].parts = nil
        let older = try Revision.open(
            revision.sealed(name: name, keys: keys), name: name, dot: revision.dot, keys: keys)
        #expect(older.siblings.map(\.item.secret) == [.text("other")])
        #expect(older.siblings.map(\.parts) == [nil])
        #expect(opened.vector == revision.vector)
        #expect(opened.fieldDots == revision.fieldDots)
        let otherName = String(repeating: "0", count: 32)
        #expect(throws: TreeFormatError.unauthentic) {
            try Revision.open(sealed, name: otherName, dot: revision.dot, keys: keys)
        }
        #expect(throws: TreeFormatError.unauthentic) {
            try Revision.open(sealed, name: name, dot: Dot(device: Self.a, counter: 2), keys: keys)
        }
        var flipped = sealed
        flipped[flipped.count / 2] ^= 1
        #expect(throws: TreeFormatError.unauthentic) {
            try Revision.open(flipped, name: name, dot: revision.dot, keys: keys)
        }
        // The plaintext never holds the secret in clear on disk.
        #expect(!sealed.indices.dropLast(5).contains { Array(sealed[$0..<$0 + 6]) == Array("secret".utf8) })
    }

    @Test func headsAndHeadersRoundTrip() throws {
        let key = SecretBytes.random(count: 32)
        let keys = SyncKeys(syncKey: key)
        let head = DeviceHead(
            device: Self.b, counter: 9, vector: VersionVector([Self.a: 3, Self.b: 9]),
            liveHash: [UInt8](repeating: 7, count: 32))
        #expect(try DeviceHead.open(head.sealed(keys: keys), device: Self.b, keys: keys) == head)
        #expect(throws: TreeFormatError.unauthentic) {
            try DeviceHead.open(head.sealed(keys: keys), device: Self.a, keys: keys)
        }
        // A named head (format 2) carries its name, sealed; one without stays format 1.
        var named = head
        named.name = "desk ünï"
        #expect(try DeviceHead.open(named.sealed(keys: keys), device: Self.b, keys: keys).name == "desk ünï")
        #expect(named.sealed(keys: keys).count > head.sealed(keys: keys).count)
        #expect(try DeviceHead.open(head.sealed(keys: keys), device: Self.b, keys: keys).name == nil)
        #expect(DeviceName.isValid("laptop") && DeviceName.isValid("a b"))
        for bad in ["", " lead", "trail ", "tab\there", "esc\u{1B}[2J", "c1\u{9B}", String(repeating: "x", count: 65)] {
            #expect(!DeviceName.isValid(bad), "\(bad)")
        }
        #expect(DeviceName.label(Self.a, name: "desk") == "desk (\(Self.a))")
        #expect(DeviceName.label(Self.a, name: nil) == Self.a)
        let epoch = KeyEpoch(number: 3, device: Self.a, key: key)
        let header = try TreeHeader.make(epoch: epoch, password: .text("pw"), kdf: .testing)
        let parsed = try TreeHeader.parse(header.bytes)
        #expect(parsed.epochNumber == 3 && parsed.epochDevice == Self.a)
        #expect(try parsed.open(password: .text("pw")) == epoch)
        #expect(try parsed.open(password: .text("other")) == nil)
        // The epoch it names is authenticated with the key.
        var renamed = parsed
        renamed.epochNumber = 4
        #expect(try TreeHeader.parse(renamed.bytes).open(password: .text("pw")) == nil)
    }

    /// A header asking for costs below the floor is refused, its passes
    /// counted with the noun in agreement (`1 pass`, `2 passes`).
    @Test func loweredCostsAreNamedWithTheirPassesCounted() throws {
        let epoch = KeyEpoch(number: 3, device: Self.a, key: SecretBytes.random(count: 32))
        var header = try TreeHeader.make(epoch: epoch, password: .text("pw"), kdf: .testing)
        for (passes, counted) in [(1, "1 pass"), (2, "2 passes")] {
            header.kdf = KDFParameters(opslimit: UInt64(passes), memlimit: 8192)
            let said = "headers/a.header asks for key derivation costs below the interactive preset (\(counted), 8 KiB)"
            #expect(throws: SyncError.tampered(said)) {
                try TreeReader.header(header.bytes, path: "headers/a.header", floor: KDFParameters(.interactive))
            }
        }
    }

    /// Files of an older epoch open under a keyring that knows it; a keyring
    /// of older epochs only opens nothing of a newer one; names stay.
    @Test func keyEpochsOpenOlderFilesAndOnlyTheirOwn() throws {
        let first = KeyEpoch(number: 1, device: "", key: .random(count: 32))
        let second = KeyEpoch(number: 2, device: Self.b, key: .random(count: 32))
        let old = SyncKeys(epochs: [first])
        let both = SyncKeys(epochs: [first, second])
        #expect(old.name(of: Self.item("x")) == both.name(of: Self.item("x")))
        let revision = Self.revision(Self.a, 1, item: Self.item("s"))
        let name = old.name(of: Self.item("x"))
        let underOld = revision.sealed(name: name, keys: old)
        let underNew = revision.sealed(name: name, keys: both)
        #expect(try Revision.open(underOld, name: name, dot: revision.dot, keys: both).sealedUnder == first.id)
        #expect(try Revision.open(underNew, name: name, dot: revision.dot, keys: both).sealedUnder == second.id)
        #expect(throws: TreeFormatError.unknownKey) {
            try Revision.open(underNew, name: name, dot: revision.dot, keys: old)
        }
        // The epoch file gives the older keys to whoever holds the new one, and to no one else.
        let file = EpochFile.sealed(second, older: [first])
        #expect(try EpochFile.open(file, epoch: second) == [first])
        #expect(throws: TreeFormatError.unauthentic) {
            try EpochFile.open(file, epoch: KeyEpoch(number: 2, device: Self.b, key: first.key))
        }
        #expect(TreePath.epoch(second) == "keys/2.\(Self.b).key")
        #expect(TreePath.parseEpoch("keys/2.\(Self.b).key")! == (2, Self.b))
        #expect(TreePath.parseEpoch("keys/1.\(Self.b).key") == nil)
        #expect(TreePath.parseEpoch("keys/02.\(Self.b).key") == nil)
        // The state keeps them, the greatest last, across an encoding.
        var state = SyncState(device: Self.a, syncKey: first.key, remote: "r")
        let learned = [
            state.learn(KeyEpoch(number: 2, device: Self.a, key: .random(count: 32))), state.learn(second),
            state.learn(second),
        ]
        #expect(learned == [true, true, false])
        let decoded = try SyncState.decode(try #require(state.item(now: Date()).secret))
        #expect(decoded.epochs == state.epochs)
        #expect(decoded.currentEpoch == second)
    }

    /// The names a merge dropped from two concurrent renames, to keep as
    /// conflicting versions, outlive the run (the state's last section).
    @Test func theStateKeepsTheNamesAMergeDropped() throws {
        var state = SyncState(device: Self.a, syncKey: .random(count: 32), remote: "r")
        state.origins[Self.b] = DeviceRoster.Origin(device: Self.a, counter: 3, time: 7)
        state.renamedAway = [String(repeating: "ab", count: 16): String(repeating: "cd", count: 16)]
        let decoded = try SyncState.decode(try #require(state.item(now: Date()).secret))
        #expect(decoded.renamedAway == state.renamedAway)
        #expect(decoded.origins[Self.b]?.counter == 3)
        state.renamedAway = [:]
        #expect(try SyncState.decode(try #require(state.item(now: Date()).secret)).renamedAway.isEmpty)
    }

    @Test func pathsAreParsedStrictly() {
        let name = String(repeating: "ab", count: 16)
        let path = TreePath.record(name: name, dot: Dot(device: Self.a, counter: 12))
        #expect(path == "items/ab/\(name)/\(Self.a).12.rec")
        #expect(TreePath.parseRecord(path)?.dot == Dot(device: Self.a, counter: 12))
        #expect(TreePath.parseRecord(path)?.name == name)
        let largest = "items/ab/\(name)/\(Self.a).9999999999999999999.rec"
        #expect(TreePath.parseRecord(largest)?.dot == Dot(device: Self.a, counter: 9_999_999_999_999_999_999))
        for bad in [
            "items/ac/\(name)/\(Self.a).12.rec", "items/ab/\(name)/\(Self.a).012.rec",
            "items/ab/\(name)/\(Self.a).0x1.rec", "items/ab/\(name)/AAAAAAAAAAAAAAAA.1.rec",
            "items/ab/\(name)/\(Self.a).1.rec/x", "items/ab/\(name.uppercased())/\(Self.a).1.rec",
            "items/ab/\(name)/\(Self.a).1.1.rec", "items/ab/\(name)/\(Self.a)..rec", "items/ab/\(name)/\(Self.a).1.re",
            "items/ab/\(name)/\(Self.a).18446744073709551616.rec", "itemz/ab/\(name)/\(Self.a).1.rec",
            "items/ab/\(name)/\(Self.a).1.rec\u{301}", "items/ab/\(name)/\(Self.a)\u{338}1.rec",
            "items/ab/\(name)x/\(Self.a).1.rec", "/items/ab/\(name)/\(Self.a).1.rec",
            "items/ab/\(name)/\(Self.a).1.recx",
        ] {
            #expect(TreePath.parseRecord(bad) == nil, "\(bad)")
        }
        #expect(TreePath.parseHead("devices/\(Self.a).head") == Self.a)
        #expect(TreePath.parseHead("devices/../x.head") == nil)
    }
}

/// A small deterministic generator (SplitMix64) for fixed-seed tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// One identity per item: renames (`fob mv`) racing edits and other
/// renames on other devices never leave two items with one persistent ID,
/// and every device ends with the same persistent ID, created and modified
/// dates for each item. End to end with the built `fob` and real git.
@Suite(.serialized) struct SyncIdentityTests {
    /// Each item of `device`'s vault as `service account id created modified`, sorted.
    static func identities(_ device: Device) throws -> [String] {
        let vault = try Vault(url: URL(fileURLWithPath: device.vault))
        try vault.unlock(password: .text("pw"))
        defer { vault.lock() }
        return try vault.allItems().filter { $0.accessGroup != "fob.sync" }.map {
            "\($0.service) \($0.account) \($0.persistentID) \($0.created.timeIntervalSince1970) \($0.modified.timeIntervalSince1970)"
        }.sorted()
    }

    /// Whether no two items of the list share a persistent ID (the third word).
    static func unique(_ identities: [String]) -> Bool {
        let ids = identities.map { $0.split(separator: " ")[2] }
        return Set(ids).count == ids.count
    }

    /// `fob mv` on one device and an edit of the old name on another end
    /// as one item under the new name, with the edit's parts, on both
    /// devices: no second item with the old name and the same identity.
    @Test func aRenameRacingAnEditEndsAsOneItemWithBothChanges() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        try a.ok(["mv", "mail", "ana", "post"])
        try b.ok(["update", "mail", "ana", "--comment", "b's notes"], input: "edited on b\n")
        _ = try a.sync()
        _ = try b.sync()
        _ = try a.sync()
        _ = try b.sync()
        #expect(try a.contents() == ["post ana edited on b b's notes", "web bob two -"])
        #expect(try b.contents() == a.contents())
        let onA = try Self.identities(a)
        #expect(Self.unique(onA), "\(onA)")
        #expect(try Self.identities(b) == onA)
        #expect(try a.ok(["conflicts"]) == "")
        // Settled: the next syncs merge nothing.
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try b.sync() == "merged 0, conflicts 0\n")
    }

    /// A third device, which did neither, merges the rename and the edit
    /// into the same one item, and every device ends with it.
    @Test func aThirdDeviceMergesARenameAndARacingEditIntoOneItem() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote])
        try a.ok(["mv", "mail", "ana", "post"])
        try b.ok(["update", "mail", "ana"], input: "edited on b\n")
        _ = try a.sync()
        _ = try b.sync()
        let merged = try c.run(["sync"])
        #expect(merged.status == 0, "\(merged.stderrText)")
        #expect(merged.stderrText.contains("was renamed to"), "\(merged.stderrText)")
        #expect(try c.contents() == ["post ana edited on b -", "web bob two -"])
        for device in [a, b, c, a, b] { _ = try device.sync() }
        for device in [a, b] { #expect(try device.contents() == c.contents()) }
        let onC = try Self.identities(c)
        #expect(Self.unique(onC), "\(onC)")
        #expect(try Self.identities(a) == onC)
        #expect(try Self.identities(b) == onC)
    }

    /// `fob mv` of one item to two names on two devices ends as one item
    /// under the later rename's name, with one persistent ID, on both; the
    /// merge says which name it dropped.
    @Test func twoRenamesOfOneItemEndAsOneItemUnderTheLaterName() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        let before = try Self.identities(a).first { $0.hasPrefix("mail ana ") }
        let id = try #require(before?.split(separator: " ")[2])
        try a.ok(["mv", "mail", "ana", "post"])
        // The later rename, by its modified date.
        Thread.sleep(forTimeInterval: 1.1)
        try b.ok(["mv", "mail", "ana", "shop"])
        _ = try a.sync()
        let merged = try b.run(["sync"])
        #expect(merged.status == 0, "\(merged.stderrText)")
        #expect(
            merged.stderrText.contains(
                "fob: resolved a conflict: two devices renamed one item at once; the later name "
                    + "(service \"shop\", account \"ana\") is kept, the other (service \"post\", account \"ana\") is dropped\n"
            ),
            "\(merged.stderrText)")
        _ = try a.sync()
        _ = try b.sync()
        #expect(try a.contents() == ["shop ana one -", "web bob two -"])
        #expect(try b.contents() == a.contents())
        let onA = try Self.identities(a)
        #expect(Self.unique(onA), "\(onA)")
        #expect(onA.first { $0.hasPrefix("shop ana ") }?.split(separator: " ")[2] == id)
        #expect(try Self.identities(b) == onA)
        #expect(try a.ok(["conflicts"]) == "")
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try b.sync() == "merged 0, conflicts 0\n")
    }

    /// `fob mv` of one item to two names on two devices, each also
    /// changing its password: the later name is kept, and the other
    /// rename's password stays beside it as a conflicting version on every
    /// device (three, in any order), never dropped; `fob resolve` takes it.
    @Test func twoRenamesWithDifferentPasswordsKeepBothPasswords() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let c = try lab.device("c")
        try c.ok(["sync", "join", lab.remote])
        try a.ok(["mv", "mail", "ana", "post"])
        try a.ok(["update", "post", "ana"], input: "from a\n")
        // The later rename, by its modified date.
        Thread.sleep(forTimeInterval: 1.1)
        try b.ok(["mv", "mail", "ana", "shop"])
        try b.ok(["update", "shop", "ana"], input: "from b\n")
        _ = try a.sync()
        let merged = try b.run(["sync"])
        #expect(merged.status == 0, "\(merged.stderrText)")
        #expect(
            merged.stderrText.contains(
                "fob: conflict: two devices renamed one item at once; the later name (service \"shop\", account \"ana\") "
                    + "is kept, the other (service \"post\", account \"ana\") is dropped, and its differing secret is kept "
                    + "as a conflicting version of service \"shop\", account \"ana\" (`fob conflicts --show`, `fob resolve`)\n"
            ),
            "\(merged.stderrText)")
        for device in [a, c, b, a, c, b] { _ = try device.sync() }
        for device in [a, b, c] {
            #expect(try device.contents() == ["shop ana from b -", "web bob two -"], "\(device.name)")
            #expect(try device.ok(["conflicts"]) == "shop\tana\t2 versions\n", "\(device.name)")
            #expect(try device.ok(["sync", "status"]).contains("conflicts 1"), "\(device.name)")
            #expect(try device.ok(["conflicts", "--show"]).contains(", differs in secret\n"), "\(device.name)")
        }
        let onA = try Self.identities(a)
        #expect(Self.unique(onA), "\(onA)")
        #expect(try Self.identities(b) == onA)
        #expect(try Self.identities(c) == onA)
        // The dropped rename's password, taken back from its version.
        try c.ok(["resolve", "shop", "ana", "--keep", "remote"])
        for device in [c, a, b, c] { _ = try device.sync() }
        for device in [a, b, c] {
            #expect(try device.contents() == ["shop ana from a -", "web bob two -"], "\(device.name)")
            #expect(try device.ok(["conflicts"]) == "", "\(device.name)")
        }
        #expect(try Self.identities(a).count == 2)
        #expect(Self.unique(try Self.identities(b)))
    }

    @Test func twoAddsOfOneNameEndWithOneIdentityOnEveryDevice() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        try a.ok(["add", "shop", "ana"], input: "from a\n")
        try b.ok(["add", "shop", "ana"], input: "from b\n")
        _ = try a.sync()
        _ = try b.sync()
        _ = try a.sync()
        let onA = try Self.identities(a)
        #expect(try Self.identities(b) == onA)
        #expect(Self.unique(onA), "\(onA)")
    }

    /// Whether some item of `device`'s vault holds the ID the merge
    /// derives for a second name of another item's ID (two names left
    /// for one item): the pairs found, as `NAME <- NAME`.
    static func twins(_ device: Device) throws -> [String] {
        let state = try SyncSignatureTests.state(of: device)
        defer { state.vault.lock() }
        let keys = SyncKeys(epochs: state.state.epochs)
        let items = try state.vault.allItems().filter { $0.accessGroup != "fob.sync" }
        var found: [String] = []
        for x in items {
            for y in items where y.persistentID != x.persistentID {
                if x.persistentID == SyncMerge.separateIdentity(y.persistentID, name: keys.name(of: x), keys: keys) {
                    found.append("\(x.service) <- \(y.service)")
                }
            }
        }
        return found
    }

    /// `first` and `second`, holding the same `service ana` after syncs,
    /// rename it at once to two names; after two rounds of syncs of both,
    /// each holds it under one of the two names, the same, with the ID it
    /// had, and no item holds a second name of another.
    /// - Returns: whether both renames were done (the item was there, two of `targets` free).
    func renameOnTwoDevices(_ first: Device, _ second: Device, _ service: String, among targets: [String]) throws
        -> Bool
    {
        for device in [first, second, first] { _ = try device.run(["sync"]) }
        let taken = Set(try first.contents().map { String($0.split(separator: " ")[0]) })
        let free = targets.filter { !taken.contains($0) }
        guard free.count >= 2 else { return false }
        let names = (free[0], free[1])
        let id = try Self.identities(first).first { $0.hasPrefix("\(service) ana ") }?.split(separator: " ")[2]
        guard let id, try first.run(["mv", service, "ana", names.0]).status == 0 else { return false }
        guard try second.run(["mv", service, "ana", names.1]).status == 0 else { return false }
        for device in [first, second, first, second] { _ = try device.run(["sync"]) }
        let held = try second.contents().filter { $0.hasPrefix(names.0 + " ana ") || $0.hasPrefix(names.1 + " ana ") }
        #expect(held.count == 1, "\(held)")
        #expect(try first.contents() == second.contents())
        let identities = try Self.identities(second)
        #expect(identities.filter { $0.split(separator: " ")[2] == id }.count == 1, "\(identities)")
        #expect(try Self.twins(second) == [])
        return true
    }

    /// 500 random operations over three devices: saves, renames (also of
    /// one item on two devices at once), deletes and syncs; then every
    /// device holds the same items with the same identities, no two share
    /// a persistent ID, no item holds a second name of another, and every
    /// secret held was written by some device.
    @Test func renamesRacingEditsOverThreeDevicesKeepOneIdentityPerItem() throws {
        let lab = try SyncLab()
        let devices = [try lab.device("a"), try lab.device("b"), try lab.device("c")]
        try devices[0].ok(["sync", "init", lab.remote, "--kdf", "interactive"])
        try devices[1].ok(["sync", "join", lab.remote])
        try devices[2].ok(["sync", "join", lab.remote])
        var generator = SeededGenerator(seed: 41)
        let services = ["mail", "web", "bank", "shop", "post"]
        var written: Set<String> = []
        var concurrent = 0
        for step in 0..<500 {
            let device = devices[Int.random(in: 0..<3, using: &generator)]
            let service = services[Int.random(in: 0..<services.count, using: &generator)]
            switch Int.random(in: 0..<9, using: &generator) {
            case 0: _ = try device.run(["rm", service, "ana"])
            case 8:
                let other = devices.filter { $0.name != device.name }[Int.random(in: 0..<2, using: &generator)]
                let value = "\(device.name)\(step)"
                if try device.secret(service, "ana") == nil,
                    try device.run(["save", service, "ana"], input: value + "\n").status == 0
                {
                    written.insert(value)
                }
                let targets = services.filter { $0 != service }.shuffled(using: &generator)
                if try renameOnTwoDevices(device, other, service, among: targets) { concurrent += 1 }
            case 1, 2:
                let target = services[Int.random(in: 0..<services.count, using: &generator)]
                _ = try device.run(["mv", service, "ana", target])
            case 3, 4: _ = try device.run(["sync"])
            default:
                let value = "\(device.name)\(step)"
                if try device.run(["save", service, "ana"], input: value + "\n").status == 0 { written.insert(value) }
            }
        }
        for _ in 0..<2 {
            for device in devices.shuffled(using: &generator) {
                let result = try device.run(["sync"])
                #expect(result.status == 0, "\(result.stderrText)")
            }
        }
        _ = try devices[0].sync()
        #expect(concurrent >= 5, "\(concurrent) concurrent renames")
        let reference = try Self.identities(devices[0])
        #expect(Self.unique(reference), "\(reference)")
        #expect(try Self.twins(devices[0]) == [])
        for device in devices.dropFirst() { #expect(try Self.identities(device) == reference) }
        #expect(try devices[1].contents() == devices[0].contents())
        for line in try devices[0].contents() {
            #expect(written.contains(String(line.split(separator: " ")[2])), "\(line)")
        }
    }
}

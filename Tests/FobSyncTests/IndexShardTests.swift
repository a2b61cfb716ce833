import FobAccess
import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// The state's table split into shards (``SyncIndexShards``): it grows
/// with the vault while no shard grows past its limit.
@Suite struct IndexShardTests {
    /// A table of `count` items (random names), each with one file and a vault revision.
    static func table(_ count: Int) -> (revisions: [String: UInt64], index: [String: IndexEntry]) {
        var revisions: [String: UInt64] = [:]
        var index: [String: IndexEntry] = [:]
        for i in 0..<count {
            let name = Sodium.hex(Sodium.randomBytes(16))
            revisions[name] = UInt64(i + 1)
            index[name] = IndexEntry(
                files: [
                    IndexedFile(
                        dot: Dot(device: "0123456789abcdef", counter: UInt64(i + 1)),
                        blob: Sodium.hex(Sodium.randomBytes(20)))
                ], versions: i % 7 == 0 ? 2 : 0)
        }
        return (revisions, index)
    }

    /// Decodes every shard back into one table.
    static func joined(_ shards: [String: SecretBytes]) throws -> (
        revisions: [String: UInt64], index: [String: IndexEntry]
    ) {
        var revisions: [String: UInt64] = [:]
        var index: [String: IndexEntry] = [:]
        for (prefix, secret) in shards {
            let part = try SyncIndexShards.decode(secret, prefix: prefix)
            revisions.merge(part.revisions) { $1 }
            index.merge(part.index) { $1 }
        }
        return (revisions, index)
    }

    /// 30,000 items: the table alone would not fit in one item (the state
    /// kept it in its own item, which capped a vault near 23,000 items), in
    /// shards each fits with room to spare.
    @Test func aTableAboveTheOldCapSplitsIntoShardsThatFit() throws {
        let (revisions, index) = Self.table(30_000)
        var legacy = SyncState(device: "0123456789abcdef", syncKey: .random(count: 32), remote: "r")
        legacy.revisions = revisions
        #expect(legacy.encoded().count > Item.maxSecretBytes)
        let (digits, shards, _) = SyncIndexShards.split(
            revisions: revisions, index: index, minDigits: 0, limit: SyncIndexShards.defaultLimit)
        #expect(digits == 1)
        #expect(shards.count == 16)
        #expect(shards.values.allSatisfy { $0.count <= SyncIndexShards.defaultLimit })
        let back = try Self.joined(shards)
        #expect(back.revisions == revisions)
        #expect(back.index == index)
    }

    /// With a small limit the names' prefixes grow until every shard fits;
    /// a shard of another prefix, or a name outside its prefix, is refused.
    @Test func aSmallLimitTakesLongerPrefixes() throws {
        let (revisions, index) = Self.table(600)
        let (digits, shards, _) = SyncIndexShards.split(revisions: revisions, index: index, minDigits: 0, limit: 4096)
        #expect(digits == 2)
        #expect(shards.values.allSatisfy { $0.count <= 4096 })
        // The sizes the split reckons with are the encoded ones.
        let (_, whole, _) = SyncIndexShards.split(revisions: revisions, index: index, minDigits: 0, limit: .max)
        #expect(whole.count == 1)
        let exact = try #require(whole[""]).count
        #expect(SyncIndexShards.split(revisions: revisions, index: index, minDigits: 0, limit: exact).digits == 0)
        #expect(SyncIndexShards.split(revisions: revisions, index: index, minDigits: 0, limit: exact - 1).digits == 1)
        #expect(shards.keys.allSatisfy { $0.count == 2 })
        let back = try Self.joined(shards)
        #expect(back.revisions == revisions)
        #expect(back.index == index)
        let (prefix, shard) = try #require(shards.first)
        let other = prefix == "00" ? "01" : "00"
        #expect(throws: TreeFormatError.malformed("an index shard of another prefix")) {
            try SyncIndexShards.decode(shard, prefix: other)
        }
        // Shards whose entries did not change are kept as stored, not encoded again.
        let dirty = try #require(shards.keys.sorted().first)
        let again = SyncIndexShards.split(
            revisions: revisions, index: index, minDigits: 2, limit: 4096, clean: Set(shards.keys).subtracting([dirty]))
        #expect(Array(again.shards.keys) == [dirty])
        #expect(again.kept.count == shards.count - 1)
        // Never fewer digits than the layout had: shards do not move back and forth.
        #expect(SyncIndexShards.split(revisions: [:], index: [:], minDigits: 2, limit: 4096).digits == 2)
    }

    /// A vault synced with a small shard limit keeps its table in many
    /// shards, each within the limit (8 KiB: 300 items fall into 16 shards
    /// of about 19 at random, so none comes near it; at 4 KiB a shard of
    /// more than about 22 split the table into 256 now and then); a sync of one change rewrites only the
    /// shard of that item; a second device joins with every item.
    @Test func aVaultSyncsWithItsTableInShards() throws {
        let lab = try SyncLab()
        let environment = FobProcess.baseEnvironment.merging(lab.gitEnvironment) { $1 }
        let password = SecretBytes.text("pw")
        let vault = try Vault.create(
            at: lab.directory.url.appendingPathComponent("a.db"), password: password, kdf: .testing)
        try vault.add(
            contentsOf: (0..<300).map { i in Item(service: "svc", account: "user\(i)", secret: .text("secret \(i)")) })
        let a = try SyncEngine(
            store: VaultStore(vault: vault), treeDirectory: lab.directory.url.path + "/a-tree",
            environment: environment,
            messages: { _ in })
        a.indexShardLimit = 8192
        a.kdfFloor = .testing
        _ = try a.initialize(remote: lab.remote, password: password, kdf: .testing)
        let first = try a.vault.load()
        #expect(first.state.shardDigits == 1)
        #expect(first.shards.count == 16)
        #expect(first.index.count == 300)
        #expect(first.state.revisions.count == 300)
        #expect(first.shards.values.allSatisfy { ($0.secret?.count ?? .max) <= 8192 })
        // The state's own item holds no table.
        #expect((first.stateItem.secret?.count ?? .max) < 4096)
        try vault.update(
            matching: .key(service: "svc", account: "user7"), with: ItemChanges(secret: .text("changed")))
        let outcome = try a.sync()
        #expect(outcome.written == 1)
        let second = try a.vault.load()
        let rewritten = second.shards.filter { first.shards[$0.key]?.revision != $0.value.revision }
        #expect(rewritten.count == 1)
        #expect(second.index.count == 300)
        let other = try Vault.create(
            at: lab.directory.url.appendingPathComponent("b.db"), password: password, kdf: .testing)
        let b = try SyncEngine(
            store: VaultStore(vault: other), treeDirectory: lab.directory.url.path + "/b-tree",
            environment: environment,
            messages: { _ in })
        b.indexShardLimit = 8192
        b.kdfFloor = .testing
        _ = try b.join(remote: lab.remote, password: password, acceptKey: try a.status().signingKey)
        #expect(try other.allItemsWithSecrets().count == 300)
        #expect(try other.item(service: "svc", account: "user7").secret == .text("changed"))
        #expect(try b.vault.load().index == second.index)
    }
}

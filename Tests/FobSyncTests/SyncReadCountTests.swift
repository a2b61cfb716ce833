import FobAccess
import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// A sync reads whole (decrypting their secrets) only the items it
/// exports or merges, counted through the one adapter to the vault.
@Suite struct SyncReadCountTests {
    /// A device over a new vault of `count` items, its engine's tree beside it.
    static func device(
        _ lab: SyncLab, _ name: String, count: Int, environment: [String: String]
    ) throws -> (vault: Vault, engine: SyncEngine) {
        let vault = try Vault.create(
            at: lab.directory.url.appendingPathComponent("\(name).db"), password: .text("pw"), kdf: .testing)
        if count > 0 {
            try vault.add(
                contentsOf: (0..<count).map { i in
                    Item(service: "svc", account: "user\(i)", secret: .text("secret \(i)"))
                })
        }
        let engine = try SyncEngine(
            store: VaultStore(vault: vault), treeDirectory: lab.directory.url.path + "/\(name)-tree",
            environment: environment, messages: { _ in })
        engine.kdfFloor = .testing
        return (vault, engine)
    }

    @Test func aSyncOfOneChangeReadsOneSecret() throws {
        let lab = try SyncLab()
        let environment = FobProcess.baseEnvironment.merging(lab.gitEnvironment) { $1 }
        let a = try Self.device(lab, "a", count: 200, environment: environment)
        _ = try a.engine.initialize(remote: lab.remote, password: .text("pw"), kdf: .testing)
        let b = try Self.device(lab, "b", count: 0, environment: environment)
        _ = try b.engine.join(remote: lab.remote, password: .text("pw"), acceptKey: try a.engine.status().signingKey)
        #expect(try b.vault.allItemsWithSecrets().count == 200)

        // Sending: the one item changed here is the one secret read.
        try a.vault.update(
            matching: .key(service: "svc", account: "user7"), with: ItemChanges(secret: .text("changed")))
        var before = a.engine.vault.secretsRead
        #expect(try a.engine.sync().written == 1)
        #expect(a.engine.vault.secretsRead - before == 1)

        // Receiving: the one item the tree changed is the one secret read.
        before = b.engine.vault.secretsRead
        #expect(try b.engine.sync().merged == 1)
        #expect(b.engine.vault.secretsRead - before == 1)
        #expect(try b.vault.item(service: "svc", account: "user7").secret == .text("changed"))

        // Nothing to do: nothing read.
        before = b.engine.vault.secretsRead
        #expect(try b.engine.sync() == SyncEngine.Outcome(merged: 0, conflicts: 0, written: 0))
        #expect(b.engine.vault.secretsRead == before)
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobAgent

/// The agent answers exactly what is asked: items by persistent ID,
/// decrypting only those; every write answers with each changed item's
/// revision and summary, equal to what a read returns.
@Suite struct AgentExactAnswersTests {
    /// The vault the agent opened, for a test to read its decrypt counter.
    final class Opened: @unchecked Sendable {
        var vault: Vault?
    }

    /// A core serving `v`'s vault, unlocked, and the vault instance it uses.
    static func core(_ v: TestVault) throws -> (AgentCore, Opened) {
        v.vault.lock()
        let opened = Opened()
        let core = AgentCore(
            vaultURL: v.vault.url, clock: ManualAgentClock(),
            openVault: { (url) throws(KeychainError) in
                let vault = try Vault(url: url)
                opened.vault = vault
                return vault
            })
        guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)) else {
            throw KeychainError.authFailed
        }
        return (core, opened)
    }

    private static func items(_ response: AgentResponse) -> [Item]? {
        guard case .items(let items) = response else { return nil }
        return items
    }

    /// Asking 10 of 10,000 items by persistent ID decrypts 10 records; at
    /// the listing detail none; unknown IDs are left out, in the order asked.
    @Test func tenOfTenThousandDecryptsTen() throws {
        let v = try TestVault()
        let all = (0..<10_000).map { Item(service: "svc\($0)", account: "ana", secret: .text("secret \($0)")) }
        try v.vault.add(contentsOf: all)
        let (core, opened) = try Self.core(v)
        let vault = try #require(opened.vault)
        // The first listing reads every item once; the IDs are known from then on.
        #expect(Self.items(core.handle(.list(service: nil)))?.count == 10_000)
        let listed = vault.recordsDecrypted
        // A repeated listing decrypts nothing: the agent keeps what it read.
        #expect(Self.items(core.handle(.list(service: nil)))?.count == 10_000)
        #expect(vault.recordsDecrypted == listed)
        let wanted = stride(from: 9_999, to: 0, by: -1_000).map { all[$0] }
        let unknown = UUID()
        let ids = [wanted[0].persistentID, unknown] + wanted.dropFirst().map(\.persistentID)

        let before = vault.recordsDecrypted
        let found = try #require(Self.items(core.handle(.getItems(ids: ids, detail: .secret))))
        #expect(vault.recordsDecrypted - before == 10)
        #expect(found.map(\.service) == wanted.map(\.service))
        #expect(found.map { $0.secret?.unsafeString } == wanted.map { $0.secret?.unsafeString })

        let afterSecrets = vault.recordsDecrypted
        let summaries = try #require(Self.items(core.handle(.getItems(ids: ids, detail: .listing))))
        #expect(vault.recordsDecrypted == afterSecrets)
        #expect(summaries.map(\.service) == wanted.map(\.service))
        #expect(summaries.allSatisfy { $0.secret == nil })

        let secretsOnly = try #require(Self.items(core.handle(.getItems(ids: [unknown], detail: .secretOnly))))
        #expect(secretsOnly.isEmpty)
    }

    /// Without a listing first, the IDs are learnt once; the next request
    /// decrypts only what it asks.
    @Test func theFirstRequestLearnsTheIDsOnce() throws {
        let v = try TestVault()
        let all = (0..<50).map { Item(service: "svc\($0)", account: "ana", secret: .text("s\($0)")) }
        try v.vault.add(contentsOf: all)
        let (core, opened) = try Self.core(v)
        let vault = try #require(opened.vault)
        let ids = [all[3].persistentID, all[7].persistentID]
        #expect(Self.items(core.handle(.getItems(ids: ids, detail: .attributes)))?.map(\.service) == ["svc3", "svc7"])
        let before = vault.recordsDecrypted
        #expect(Self.items(core.handle(.getItems(ids: ids, detail: .secret)))?.count == 2)
        #expect(vault.recordsDecrypted - before == 2)
    }

    /// While locked, asking by ID is refused as locked, by name.
    @Test func lockedIsInteractionNotAllowed() throws {
        let v = try TestVault()
        let (core, _) = try Self.core(v)
        _ = core.handle(.lock)
        guard case .failure(.interactionNotAllowed) = core.handle(.getItems(ids: [UUID()], detail: .secret)) else {
            Issue.record("not interactionNotAllowed")
            return
        }
    }

    /// Each write's answer carries the changed item's revision and summary,
    /// equal to what a listing read returns afterwards.
    @Test func writeAnswersMatchWhatAReadReturns() throws {
        let v = try TestVault()
        let (core, _) = try Self.core(v)
        func read(_ service: String, _ account: String) -> Item? {
            Self.items(core.handle(.get(.key(service: service, account: account), limitOne: true, detail: .listing)))?
                .first
        }
        var item = Item(service: "mail", account: "ana", label: "Mail", secret: .text("one"))
        item.customFields = [CustomField(name: "pin", value: .text("1234"), isHidden: true)]
        guard case .written(1, let added) = core.handle(.add(item)) else {
            Issue.record("add")
            return
        }
        let stored = try #require(read("mail", "ana"))
        #expect(added == [AgentEvent(kind: .added, summary: stored)])
        #expect(added.first?.summary?.secret == nil && added.first?.summary?.customFields.first?.value.count == 0)

        guard
            case .written(0, let saved) = core.handle(
                .save(service: "mail", account: "ana", secret: .text("two"), changes: ItemChanges()))
        else {
            Issue.record("save")
            return
        }
        let resaved = try #require(read("mail", "ana"))
        #expect(resaved.revision == 2)
        #expect(saved == [AgentEvent(kind: .changed, summary: resaved)])

        var rename = ItemChanges()
        rename.account = "bea"
        guard case .written(1, let renamed) = core.handle(.update(.key(service: "mail", account: "ana"), rename)) else {
            Issue.record("update")
            return
        }
        let moved = try #require(read("mail", "bea"))
        #expect(
            renamed == [AgentEvent(kind: .renamed, summary: moved, oldKey: ItemKey(service: "mail", account: "ana"))])
        #expect(moved.persistentID == stored.persistentID)

        guard case .written(1, let deleted) = core.handle(.delete(.key(service: "mail", account: "bea"))) else {
            Issue.record("delete")
            return
        }
        #expect(deleted == [AgentEvent(kind: .deleted, summary: moved)])

        let imported = Item(service: "bank", account: "ana", secret: .text("x"))
        guard case .written(1, let plan) = core.handle(.applyImport([.add(imported)])) else {
            Issue.record("import")
            return
        }
        #expect(plan == [AgentEvent(kind: .added, summary: try #require(read("bank", "ana")))])
    }

    /// A failed write answers its error by name, and changes nothing it reports.
    @Test func aFailedWriteIsItsError() throws {
        let v = try TestVault()
        let (core, _) = try Self.core(v)
        _ = core.handle(.add(Item(service: "mail", account: "ana", secret: .text("s"))))
        guard
            case .failure(.duplicateItem) = core.handle(.add(Item(service: "mail", account: "ana", secret: .text("s"))))
        else {
            Issue.record("not duplicateItem")
            return
        }
        guard case .failure(.itemNotFound) = core.handle(.delete(.key(service: "none", account: "x"))) else {
            Issue.record("not itemNotFound")
            return
        }
    }
}

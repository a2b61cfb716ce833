import FobAccess
import FobSessions
import FobStore
import FobTestSupport
import Foundation
import Testing

/// The logout wipe over a real vault: one transaction, and a bounded wait
/// while another process holds the vault.
@Suite struct LogoutWipeTests {
    static func fixture() throws -> (TestVault, VaultStore) {
        let v = try TestVault()
        for (service, account, kind) in [
            ("api", "t1", ItemKind.token), ("api", "t2", .oauth), ("web", "t3", .token),
            ("mail", "ana", .password),
        ] {
            try v.vault.save(
                service: service, account: account, secret: .text("s"), attributes: ItemChanges(kind: kind))
        }
        return (v, VaultStore(vault: v.vault))
    }

    /// Issue 20: by default only session tokens go (OAuth items, tokens
    /// whose JWT has an expiry); tokens with no expiry stay.
    @Test func theDefaultKeepsTokensWithNoExpiry() throws {
        let (v, store) = try Self.fixture()
        try v.vault.save(
            service: "gh", account: "s", secret: .text(jwt(exp: 2_000_000_000)), attributes: ItemChanges(kind: .token))
        let candidates = try LogoutWipe.candidates(in: store)
        #expect(candidates.map { "\($0.item.service)/\($0.item.account)" } == ["api/t2", "gh/s", "api/t1", "web/t3"])
        #expect(candidates.map(\.group) == [.session, .session, .longLived, .longLived])
        #expect(try LogoutWipe.run(in: store).deleted == 2)
        #expect(try v.vault.allItems().map(\.account) == ["t1", "ana", "t3"])
    }

    @Test func deletesEverySessionItemInOneTransaction() throws {
        let (v, store) = try Self.fixture()
        let report = try LogoutWipe.run(in: store, includeLongLived: true)
        #expect(report == LogoutWipe.Report(found: 3, deleted: 3, failures: []))
        #expect(try v.vault.allItems().map(\.account) == ["ana"])
    }

    /// While another process holds the write lock, the wipe gives up after
    /// its short busy timeout (not 30 s per item), deletes nothing, and says
    /// the vault is busy; once the lock is gone it succeeds.
    @Test func aBusyVaultFailsFastAndDeletesNothing() throws {
        let (v, store) = try Self.fixture()
        let lock = try #require(VaultWriteLock(path: v.vault.url.path))
        let start = Date()
        do {
            _ = try LogoutWipe.run(in: store, includeLongLived: true, busyTimeoutMilliseconds: 200)
            Issue.record("the wipe succeeded while the vault was locked")
        } catch {
            #expect(error.isBusy, "\(error)")
        }
        #expect(Date().timeIntervalSince(start) < 3)
        lock.release()
        #expect(try v.vault.allItems().count == 4)
        #expect(try LogoutWipe.run(in: store, includeLongLived: true).deleted == 3)
        // The usual busy timeout is back for other writes.
        try v.vault.save(service: "x", account: "y", secret: .text("z"))
    }
}

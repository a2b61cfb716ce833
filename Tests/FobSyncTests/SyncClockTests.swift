import FobAccess
import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// The times a sync records come from the engine's clock, not the
/// system's: engines over real git and a bare remote on disk, each with a
/// fixed clock.
@Suite(.serialized) struct SyncClockTests {
    /// A clock a test moves.
    final class Clock {
        var date: Date
        init(_ seconds: TimeInterval) { date = Date(timeIntervalSince1970: seconds) }
    }

    /// An engine over a new vault in `lab`, on `clock`.
    static func engine(_ lab: SyncLab, _ name: String, clock: Clock) throws -> SyncEngine {
        let vault = try Vault.create(
            at: lab.directory.url.appendingPathComponent(name + ".db"), password: .text("pw"), kdf: .testing)
        let engine = try SyncEngine(
            store: VaultStore(vault: vault), treeDirectory: lab.directory.url.path + "/\(name)-tree",
            environment: FobProcess.baseEnvironment.merging(lab.gitEnvironment) { $1 }, now: { clock.date },
            messages: { _ in })
        engine.kdfFloor = .testing
        return engine
    }

    @Test func aDeviceTakenInIsRecordedAtTheEnginesTime() throws {
        let lab = try SyncLab()
        let clockA = Clock(1_700_000_000)
        let a = try Self.engine(lab, "a", clock: clockA)
        let b = try Self.engine(lab, "b", clock: Clock(1_600_000_000))
        _ = try a.initialize(remote: lab.remote, password: .text("pw"), kdf: .testing)
        _ = try b.join(remote: lab.remote, password: .text("pw"), acceptKey: try a.status().signingKey)
        let bID = try b.vault.load().state.device
        // a meets b's head at this sync and takes it in.
        _ = try a.sync()
        let origin = try a.vault.load().state.origins[bID]
        #expect(origin?.device == (try a.vault.load().state.device))
        #expect(origin?.time == 1_700_000_000)
        // An origin the state lacks (kept before origins were) is written by the export, at its time.
        var run = try a.vault.load()
        run.state.origins[bID] = nil
        try a.vault.store(&run)
        clockA.date = Date(timeIntervalSince1970: 1_700_000_500)
        _ = try a.sync()
        #expect(try a.vault.load().state.origins[bID]?.time == 1_700_000_500)
    }
}

import FobStore
import FobSystem
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@Suite struct ConflictSummaryTests {
    /// The status line said `conflicts 0` beside a `!` row: a conflict left
    /// by an earlier sync was not counted by the last one. It counts the
    /// items that have conflicting versions, as the `!` rows do.
    @Test func theCountMatchesTheMarkedRows() {
        let synced = Date(timeIntervalSince1970: 1_767_000_000)
        let key = ItemKey(service: "mail", account: "ana")
        let overview = SyncOverview(lastSync: synced, merged: 1, conflicts: 0, versions: [key: 2])
        #expect(overview.summary == "Last sync \(DateText.local(synced, "%H:%M")): merged 1, conflicts 1")
    }

    /// A device is named without its id; a name that only looks like one is kept.
    @Test func devicesAreNamedWithoutTheirIDs() {
        let at = Date(timeIntervalSince1970: 1_767_000_000)
        let time = DateText.local(at, "%H:%M:%S")
        #expect(ConflictSources.Version(device: "desk (0123abcd)", written: at).described == "(desk, \(time))")
        #expect(ConflictSources.Version(device: "0123abcd", written: at).described == "(0123abcd, \(time))")
        #expect(ConflictSources.Version(device: "desk (home)", written: at).described == "(desk (home), \(time))")
        #expect(ConflictSources.Version(device: nil, written: at).described == "(\(time))")
        // Two devices of one name keep their ids, so the two versions are told apart.
        let twins = ConflictSources(
            local: .init(device: "vm (0123abcd)", written: at), other: .init(device: "vm (4567ef01)", written: at))
        #expect(twins.described.local == "(vm (0123abcd), \(time))")
        #expect(twins.described.other == "(vm (4567ef01), \(time))")
    }
}

@Suite struct TruthfulLockTests {
    /// An agent of an older version answers the lock with a version
    /// mismatch and keeps its keys: the UI said "Locked". It says that only
    /// this process locked, and the agent's answer, which names the way out.
    @Test func aLockTheAgentRefusedIsNotCalledLocked() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        let refusal =
            "agent: the agent speaks protocol version 3, this fob speaks 5; "
            + "'fob unlock' replaces it with an agent of this version"
        h.store.agentLockRefusal = refusal
        h.send(.lock)
        let message = try #require(h.app.unlockModel?.message)
        #expect(message.tone == .warning)
        #expect(message.text == "Locked here only: the agent did not lock and still holds the keys: \(refusal)")
        #expect(h.store.calls["lockSession"] == 1)
    }

    /// An agent that locks: "Locked", as before.
    @Test func aLockTheAgentTookSaysLocked() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.lock)
        #expect(h.app.unlockModel?.message == .info("Locked"))
    }
}

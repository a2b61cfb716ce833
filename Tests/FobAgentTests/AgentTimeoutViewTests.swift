import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// After the idle or maximum time the agent holds only the after-first-unlock
/// items: an answer for the whole vault would look complete and is refused as
/// locked; a request for one open item is still served.
@Suite struct AgentTimeoutViewTests {
    private func timedOutCore() throws -> (TestVault, AgentCore) {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", secret: .text("when")))
        var item = Item(service: "wifi", account: "home", secret: .text("after"))
        item.accessible = .afterFirstUnlock
        try v.vault.add(item)
        v.vault.lock()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 60, maxSeconds: 0)).isOK)
        clock.advance(61)
        #expect(core.state == .afterFirstUnlock)
        return (v, core)
    }

    private func isLocked(_ response: AgentResponse) -> Bool {
        if case .failure(.interactionNotAllowed) = response { return true }
        return false
    }

    @Test func wholeVaultAnswersAreLocked() throws {
        let (v, core) = try timedOutCore()
        defer { withExtendedLifetime(v) {} }
        #expect(isLocked(core.handle(.list(service: nil))))
        #expect(isLocked(core.handle(.list(service: "mail"))))
        #expect(isLocked(core.handle(.get(ItemQuery(itemClass: nil), limitOne: false, detail: .listing))))
        #expect(isLocked(core.handle(.get(ItemQuery(service: "mail"), limitOne: true, detail: .secret))))
        #expect(isLocked(core.handle(.delete(ItemQuery(service: "mail")))))
        #expect(isLocked(core.handle(.update(ItemQuery(service: "wifi"), ItemChanges()))))
        let item = Item(service: "new", account: "x", secret: .text("s"))
        #expect(isLocked(core.handle(.applyImport([.add(item)]))))
        let listed = core.respond(to: .list(service: nil))
        #expect(
            listed.withUnsafeBytes { raw in
                if case .failure(.interactionNotAllowed)? = try? AgentResponse.decode(raw) { return true }
                return false
            })
    }

    @Test func oneOpenItemIsStillServed() throws {
        let (v, core) = try timedOutCore()
        defer { withExtendedLifetime(v) {} }
        let home = core.handle(.get(.key(service: "wifi", account: "home"), limitOne: true, detail: .secret))
        guard case .items(let items) = home, let item = items.first
        else {
            Issue.record("the after-first-unlock item is readable")
            return
        }
        #expect(item.secret?.unsafeString == "after")
        guard
            case .items(let found) = core.handle(.get(ItemQuery(service: "wifi"), limitOne: true, detail: .secret))
        else {
            Issue.record("a query for one open item answers it")
            return
        }
        #expect(found.map(\.account) == ["home"])
        #expect(isLocked(core.handle(.get(.key(service: "mail", account: "ana"), limitOne: true, detail: .secret))))
    }
}

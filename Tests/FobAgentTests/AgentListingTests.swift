import CSQLite
import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobAgent

/// The agent keeps the message of its last whole listing while the vault is
/// unchanged; every change, by the agent or by another process, every lock
/// and every tampering must show in the next listing as it would without it.
@Suite struct AgentListingTests {
    private func makeCore() throws -> (TestVault, AgentCore, ManualAgentClock) {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", label: "Mail", secret: .text("when")))
        var item = Item(service: "wifi", account: "home", secret: .text("after"))
        item.accessible = .afterFirstUnlock
        try v.vault.add(item)
        v.vault.lock()
        let clock = ManualAgentClock()
        let core = AgentCore(vaultURL: v.vault.url, clock: clock)
        guard case .ok = core.handle(.unlock(password: v.password, idleSeconds: 60, maxSeconds: 0)) else {
            throw KeychainError.authFailed
        }
        return (v, core, clock)
    }

    /// "service/account label" of each listed item, or the error.
    private func listing(_ core: AgentCore) -> Result<[String], KeychainError> {
        let bytes = core.respond(to: .list(service: nil))
        let response = bytes.withUnsafeBytes { try? AgentResponse.decode($0, withSecrets: false) }
        switch response {
        case .items(let items)?:
            #expect(items.allSatisfy { $0.secret == nil }, "a listing never carries secrets")
            return .success(items.map { "\($0.service)/\($0.account) \($0.label ?? "-")" })
        case .failure(let error)?: return .failure(error)
        default: return .failure(.param("not a listing"))
        }
    }

    /// The same vault opened by another process (a second connection).
    private func otherProcess(_ v: TestVault) throws -> Vault {
        let other = try Vault(url: v.vault.url)
        try other.unlock(password: v.password)
        return other
    }

    @Test func aRepeatedListingIsKeptAndMatchesAFreshOne() throws {
        let (v, core, _) = try makeCore()
        defer { withExtendedLifetime(v) {} }
        #expect(!core.holdsListing)
        #expect(try listing(core).get() == ["mail/ana Mail", "wifi/home -"])
        #expect(core.holdsListing)
        #expect(try listing(core).get() == ["mail/ana Mail", "wifi/home -"])
        // The kept message is byte for byte what the vault answers now.
        #expect(core.respond(to: .list(service: nil)) == core.handle(.list(service: nil)).encoded())
    }

    @Test func writesThroughTheAgentShowAtOnce() throws {
        let (v, core, _) = try makeCore()
        defer { withExtendedLifetime(v) {} }
        _ = try listing(core).get()
        #expect(core.handle(.add(Item(service: "bank", account: "ana", secret: .text("s")))).writtenCount == 1)
        #expect(try listing(core).get() == ["bank/ana -", "mail/ana Mail", "wifi/home -"])
        var changes = ItemChanges()
        changes.label = .some("Post")
        #expect(core.handle(.update(.key(service: "mail", account: "ana"), changes)).writtenCount == 1)
        #expect(try listing(core).get() == ["bank/ana -", "mail/ana Post", "wifi/home -"])
        #expect(core.handle(.delete(.key(service: "bank", account: "ana"))).writtenCount == 1)
        #expect(try listing(core).get() == ["mail/ana Post", "wifi/home -"])
    }

    @Test func writesByAnotherProcessShowAtOnce() throws {
        let (v, core, _) = try makeCore()
        defer { withExtendedLifetime(v) {} }
        _ = try listing(core).get()
        let other = try otherProcess(v)
        try other.add(Item(service: "zoo", account: "keeper", secret: .text("z")))
        #expect(try listing(core).get() == ["mail/ana Mail", "wifi/home -", "zoo/keeper -"])
        var changes = ItemChanges()
        changes.label = .some("Renamed elsewhere")
        try other.update(matching: .key(service: "mail", account: "ana"), with: changes)
        #expect(try listing(core).get() == ["mail/ana Renamed elsewhere", "wifi/home -", "zoo/keeper -"])
        try other.delete(matching: .key(service: "zoo", account: "keeper"))
        #expect(try listing(core).get() == ["mail/ana Renamed elsewhere", "wifi/home -"])
    }

    @Test func locksDropTheKeptListing() throws {
        let (v, core, clock) = try makeCore()
        defer { withExtendedLifetime(v) {} }
        _ = try listing(core).get()
        clock.advance(61)
        core.tick()
        #expect(!core.holdsListing, "the idle timeout drops the names of whenUnlocked items at once")
        // Only after-first-unlock items are open: a listing would look whole, so it is refused as locked.
        if case .failure(.interactionNotAllowed) = listing(core) {
        } else {
            Issue.record("a listing after a timeout answers as locked")
        }
        #expect(!core.holdsListing)
        #expect(core.handle(.lock).isOK)
        #expect(!core.holdsListing)
        if case .failure(.interactionNotAllowed) = listing(core) {
        } else {
            Issue.record("a locked agent lists nothing")
        }
    }

    @Test func tamperingAfterAListingIsStillDetected() throws {
        let (v, core, _) = try makeCore()
        defer { withExtendedLifetime(v) {} }
        _ = try listing(core).get()
        // Another writer swaps two records on disk behind the vault's back.
        var db: OpaquePointer?
        #expect(sqlite3_open(v.vault.url.path, &db) == SQLITE_OK)
        #expect(
            sqlite3_exec(
                db, "UPDATE items SET record = (SELECT record FROM items WHERE id = 2) WHERE id = 1", nil, nil, nil)
                == SQLITE_OK)
        sqlite3_close(db)
        guard case .failure(let error) = listing(core) else {
            Issue.record("a tampered vault must not be listed from the kept message")
            return
        }
        #expect(error.statusName == "errSecDecode" || error.statusName == "errSecInteractionNotAllowed")
        #expect(!core.holdsListing)
    }

    /// A listing (and the message the agent keeps of it) carries no secret,
    /// one-time seed or custom field value: only that a seed exists.
    @Test func theKeptListingHoldsNoSeedOrFieldValue() throws {
        let (v, core, _) = try makeCore()
        defer { withExtendedLifetime(v) {} }
        var item = Item(service: "bank", account: "ana", secret: .text("the secret"))
        item.oneTimePassword = .text("otpauth://totp/Bank:ana?secret=JBSWY3DPEHPK3PXP")
        item.customFields = [
            CustomField(name: "pin", text: "4321", isHidden: true), CustomField(name: "note", text: "visible"),
        ]
        #expect(core.handle(.add(item)).writtenCount == 1)
        let message = core.respond(to: .list(service: nil))
        for needle in ["the secret", "JBSWY3DPEHPK3PXP", "4321", "visible"] {
            #expect(message.firstRange(of: Array(needle.utf8)) == nil, "the listing carries \(needle)")
        }
        #expect(core.holdsListing)
        let listed = try message.withUnsafeBytes { raw in
            try AgentResponse.decode(raw, withSecrets: false)
        }
        guard case .items(let items) = listed, let bank = items.first(where: { $0.service == "bank" }) else {
            Issue.record("no listing")
            return
        }
        #expect(bank.oneTimePassword != nil, "that the item has a seed still shows (hasTotp)")
        #expect(bank.customFields.map(\.name) == ["pin", "note"])
        #expect(bank.customFields.map(\.isHidden) == [true, false])
    }
}

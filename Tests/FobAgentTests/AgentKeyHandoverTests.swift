import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// A process that unlocked the vault with the master password hands the
/// agent the vault key, so the key derivation runs once.
@Suite struct AgentKeyHandoverTests {
    private func makeVault() throws -> TestVault {
        let v = try TestVault()
        try v.vault.add(Item(service: "mail", account: "ana", secret: .text("pw")))
        return v
    }

    @Test func theRequestRoundTripsAndRefusesAKeyOfAnotherSize() throws {
        let key = SecretBytes(Array(0..<32))
        let bytes = AgentRequest.unlockWithKey(vaultKey: key, idleSeconds: 9, maxSeconds: 99).encoded()
        let back = try bytes.withUnsafeBytes { raw in
            Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
        }.get()
        guard case .unlockWithKey(let k, 9, 99) = back else {
            Issue.record("not unlockWithKey: \(back)")
            return
        }
        #expect(k.unsafeArray == Array(0..<32))
        #expect(!back.isItemOperation)
        let short = AgentRequest.unlockWithKey(vaultKey: SecretBytes(Array(0..<31)), idleSeconds: 9, maxSeconds: 99)
            .encoded()
        #expect(throws: AgentProtocolError.badField("a vault key is 32 bytes")) {
            try short.withUnsafeBytes { raw in Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
            }.get()
        }
    }

    @Test func theVaultKeyOfAnUnlockedVaultUnlocksAnotherInstance() throws {
        let v = try makeVault()
        let key = try v.vault.vaultKeyCopy()
        #expect(key.count == 32)
        let other = try Vault(url: v.vault.url)
        try other.unlock(vaultKey: key)
        #expect(try other.item(service: "mail", account: "ana").secret?.unsafeString == "pw")
    }

    @Test func anotherKeyIsAuthFailedAndLeavesTheVaultLocked() throws {
        let v = try makeVault()
        let other = try Vault(url: v.vault.url)
        #expect(
            thrownKeychainError { try other.unlock(vaultKey: SecretBytes(Array(repeating: 7, count: 32))) }
                == .authFailed)
        #expect(other.isLocked)
        #expect(
            thrownKeychainError { try other.unlock(vaultKey: SecretBytes(Array(repeating: 7, count: 16))) }?.statusName
                == "errSecParam")
    }

    @Test func noKeyLeavesALockedOrPartlyLockedVault() throws {
        let v = try makeVault()
        v.vault.lock(keepingAfterFirstUnlock: true)
        #expect(thrownKeychainError { _ = try v.vault.vaultKeyCopy() }?.statusName == "errSecInteractionNotAllowed")
        v.vault.lock()
        #expect(thrownKeychainError { _ = try v.vault.vaultKeyCopy() }?.statusName == "errSecInteractionNotAllowed")
    }

    @Test func theAgentUnlocksWithTheKey() throws {
        let v = try makeVault()
        let key = try v.vault.vaultKeyCopy()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        guard
            case .failure(.authFailed) = core.handle(
                .unlockWithKey(
                    vaultKey: SecretBytes(Array(repeating: 1, count: 32)),
                    idleSeconds: 60, maxSeconds: 0))
        else {
            Issue.record("a wrong key must be authFailed")
            return
        }
        #expect(core.state == .locked)
        guard case .ok = core.handle(.unlockWithKey(vaultKey: key, idleSeconds: 60, maxSeconds: 0)) else {
            Issue.record("the key must unlock")
            return
        }
        #expect(core.state == .unlocked)
        guard let item = core.handle(.get(service: "mail", account: "ana")).onlyItem else {
            Issue.record("get")
            return
        }
        #expect(item.secret?.unsafeString == "pw")
        if case .status(let status) = core.handle(.status) { #expect(status.idleSecondsLeft == 60) }
    }

    @Test func anImportPlanRoundTripsAndAppliesInTheAgent() throws {
        let v = try makeVault()
        let stored = try v.vault.item(service: "mail", account: "ana")
        var replacement = Item(service: "mail", account: "ana", label: "new", secret: .text("new pw"))
        replacement.persistentID = stored.persistentID
        var plan: [ImportChange] = [
            .add(Item(service: "web", account: "bo", secret: .text("w"))),
            .replace(existing: stored, with: replacement),
            .delete(existing: Item(service: "gone", account: "x", secret: nil)),
        ]
        // A deletion travels too (what sync sends).
        let withDelete = try AgentRequest.applyImport(plan).encoded().withUnsafeBytes { raw in
            Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
        }.get()
        guard case .applyImport(let decoded) = withDelete, decoded.count == 3, case .delete(let gone) = decoded[2]
        else {
            Issue.record("the deletion did not travel: \(withDelete)")
            return
        }
        #expect(gone.service == "gone")
        plan.removeLast()
        let bytes = AgentRequest.applyImport(plan).encoded()
        let back = try bytes.withUnsafeBytes { raw in
            Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
        }.get()
        guard case .applyImport(let changes) = back, changes.count == 2 else {
            Issue.record("not applyImport: \(back)")
            return
        }
        #expect(back.isItemOperation)
        let key = try v.vault.vaultKeyCopy()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        guard case .ok = core.handle(.unlockWithKey(vaultKey: key, idleSeconds: 60, maxSeconds: 0)) else {
            Issue.record("unlock")
            return
        }
        guard core.handle(back).writtenCount == 2 else {
            Issue.record("the import did not apply")
            return
        }
        guard let item = core.handle(.get(service: "mail", account: "ana")).onlyItem else {
            Issue.record("get")
            return
        }
        #expect(item.secret?.unsafeString == "new pw")
        #expect(item.label == "new")
        // A broken plan is a typed error, never a crash: a change of an unknown
        // kind (7), and an added item without its item.
        let importCode = AgentRequest.applyImport([]).encoded()[5]
        var broken = AgentProtocol.magic + [AgentProtocol.version, importCode]
        broken += [0, 0, 0, 1, 7]
        #expect(throws: AgentProtocolError.badField("an import change's kind")) {
            try broken.withUnsafeBytes { raw in Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
            }.get()
        }
        broken = AgentProtocol.magic + [AgentProtocol.version, importCode, 0, 0, 0, 1, 0]
        #expect(throws: AgentProtocolError.badField("an import change without its item")) {
            try broken.withUnsafeBytes { raw in Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
            }.get()
        }
    }
}

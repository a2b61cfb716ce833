import FobSSH
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobAgent

/// The agent keeps a key's decrypted private half and its consent rule
/// between signatures only while the vault is unlocked and unchanged: a
/// changed rule, a removed key and a lock take effect at the next signature.
@Suite struct SSHKeyCacheTests {
    private struct Fixture {
        let v: TestVault
        let core: AgentCore
        let keys: VaultSSHKeys
        let approval: VaultSSHApproval
        let context: SSHSignContext
    }

    private func fixture() throws -> Fixture {
        let f = try OneKeyVault()
        #expect(f.unlock())
        let (v, key, core) = (f.vault, f.key, f.core)
        let requester = Requester(
            pid: getpid(), uid: getuid(), executable: "/usr/bin/ssh",
            identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 0))
        let context = SSHSignContext(
            key: key.publicKey, comment: "me@work", itemName: "work", destination: .unverified, confirm: false,
            peerPID: getpid(), isUserAuthentication: false, requester: requester)
        return Fixture(
            v: v, core: core, keys: VaultSSHKeys(core: core), approval: VaultSSHApproval(core: core), context: context)
    }

    private let work = ItemQuery(service: SSHKeyItem.service, account: "work")

    private func answered(_ response: AgentResponse) -> Bool {
        if case .failure = response { return false }
        return true
    }

    @Test func thePrivateKeyIsKeptBetweenSignaturesAndWipedAtLock() throws {
        let f = try fixture()
        let first = try f.keys.privateKey(named: "work")
        #expect(f.keys.privateKeysKept == 1)
        #expect(try f.keys.privateKey(named: "work") === first)
        #expect(f.core.handle(.lock).isOK)
        #expect(throws: SSHKeySourceError.locked) { try f.keys.privateKey(named: "work") }
        #expect(f.keys.privateKeysKept == 0)
        // The agent's own notice of the lock drops it too, before any signature asks.
        #expect(f.core.handle(.unlock(password: f.v.password, idleSeconds: 0, maxSeconds: 0)).isOK)
        _ = try f.keys.privateKey(named: "work")
        let service = SSHAgentService(source: f.keys, knownHosts: { KnownHosts(paths: []) }, log: { _ in }, now: { 0 })
        service.noteLockState()
        #expect(f.core.handle(.lock).isOK)
        service.noteLockState()
        #expect(f.keys.privateKeysKept == 0)
    }

    @Test func aRemovedKeyNoLongerSignsWithItsKeptHalf() throws {
        let f = try fixture()
        _ = try f.keys.privateKey(named: "work")
        #expect(f.approval.approve(f.context) == .allow)
        #expect(answered(f.core.handle(.delete(work))))
        #expect(throws: SSHKeySourceError.notFound) { try f.keys.privateKey(named: "work") }
        #expect(f.approval.approve(f.context) == .deny("the vault is locked or the key work is gone"))
    }

    @Test func aRuleChangedAfterASignatureDecidesTheNextOne() throws {
        let f = try fixture()
        #expect(f.approval.approve(f.context) == .allow)
        var changes = ItemChanges()
        changes.accessRule = AccessRule(mode: .deny)
        #expect(answered(f.core.handle(.update(work, changes))))
        guard case .deny(let reason) = f.approval.approve(f.context) else {
            Issue.record("a signature allowed after the key's rule became deny")
            return
        }
        #expect(reason.hasPrefix("ssh may not sign SSH key work"))
    }
}

import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

@Suite struct AccessRuleTests {
    let program = TrustedProgram(
        path: "/usr/bin/git",
        identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: -4, owner: 0))

    @Test func aRuleRoundTripsThroughItsEncoding() throws {
        let rule = AccessRule(
            mode: .ask, forwarded: .deny, trusted: [program],
            denied: [TrustedProgram(path: "/tmp/x", identity: program.identity, hash: Array(repeating: 7, count: 32))])
        #expect(try AccessRule(encoded: rule.encoded) == rule)
        #expect(try AccessRule(encoded: AccessRule().encoded).isDefault)
    }

    @Test func aBrokenEncodingIsADecodeError() {
        let bytes = AccessRule(mode: .deny, trusted: [program]).encoded
        for cut in [0, 1, 4, bytes.count - 1] {
            #expect(throws: KeychainError.decode("truncated access rule")) {
                _ = try AccessRule(encoded: Array(bytes.prefix(cut)))
            }
        }
        #expect(throws: KeychainError.decode("unknown access rule version")) { _ = try AccessRule(encoded: [9]) }
        #expect(throws: KeychainError.decode("bad access rule mode")) { _ = try AccessRule(encoded: [1, 7, 0, 0, 0]) }
        #expect(throws: KeychainError.decode("trailing bytes in an access rule")) {
            _ = try AccessRule(encoded: AccessRule(mode: .any).encoded + [0])
        }
    }

    @Test func theRuleIsSealedInTheRecordAndChangedByAnUpdate() throws {
        let v = try TestVault()
        try v.vault.add(Item(service: "s", account: "a", secret: .text("x")))
        #expect(try v.vault.item(service: "s", account: "a").accessRule.isDefault)
        var changes = ItemChanges()
        changes.accessRule = AccessRule(mode: .deny, trusted: [program])
        _ = try v.vault.update(matching: .key(service: "s", account: "a"), with: changes)
        v.vault.lock()
        try v.vault.unlock(password: v.password)
        let stored = try v.vault.item(service: "s", account: "a").accessRule
        #expect(stored == AccessRule(mode: .deny, trusted: [program]))
    }

    @Test func aNewVaultAsksAndAnOldOneKeepsAny() throws {
        let dir = TemporaryDirectory()
        let fresh = try Vault.create(at: dir.file("new.db"), password: .text("pw"), kdf: .testing)
        #expect(try fresh.accessDefault() == .ask)
        let v = try TestVault() // made as a vault before rules behaves
        #expect(try v.vault.accessDefault() == .any)
        try v.vault.setAccessDefault(.ask)
        v.vault.lock()
        try v.vault.unlock(password: v.password)
        #expect(try v.vault.accessDefault() == .ask)
    }
}

import FobAgent
import FobSSH
import FobStore
import FobTestSupport
import Testing

/// A vault (``TestVault``: its default rule `any`) holding one SSH key
/// item, `work` (comment `me@work`), locked, and an agent core over it on
/// a manual clock: what the SSH agent's tests start from.
struct OneKeyVault {
    /// The vault (its directory lives as long as this value).
    let vault: TestVault
    /// The key stored as `work`.
    let key: SSHPrivateKey
    /// The agent's core over the vault, locked until ``unlock()``.
    let core: AgentCore

    /// - Parameter type: the key's algorithm.
    init(_ type: SSHKeyType = .ed25519) throws {
        vault = try TestVault()
        key = try SSHPrivateKey.generate(type)
        try vault.vault.add(SSHKeyItem.item(name: "work", key: key, comment: "me@work"))
        vault.vault.lock()
        core = AgentCore(vaultURL: vault.vault.url, clock: ManualAgentClock())
    }

    /// Unlocks the core with the vault's master password (no timeouts);
    /// `true` when the agent answered `ok`.
    @discardableResult
    func unlock() -> Bool {
        core.handle(.unlock(password: vault.password, idleSeconds: 0, maxSeconds: 0)).isOK
    }
}

/// A key as the vault keeps it: its public half and what restricts it.
public struct SSHStoredKey: Sendable {
    /// The item's name (its account).
    public var name: String
    /// The public key.
    public var key: SSHPublicKey
    /// The comment (`ssh-add -l` shows it).
    public var comment: String
    /// The hosts it is for (`fob ssh allow`); empty for everywhere.
    public var hosts: SSHHostRules
    /// `restrict-destination-v00@openssh.com` constraints it was added with (`ssh-add -h`).
    public var destinations: [SSHDestinationConstraint]
    /// Whether it was added with `ssh-add -c`.
    public var confirm: Bool

    /// A stored key.
    public init(
        name: String, key: SSHPublicKey, comment: String, hosts: SSHHostRules = SSHHostRules(patterns: []),
        destinations: [SSHDestinationConstraint] = [], confirm: Bool = false
    ) {
        self.name = name
        self.key = key
        self.comment = comment
        self.hosts = hosts
        self.destinations = destinations
        self.confirm = confirm
    }
}

/// Why the key source could not answer.
public enum SSHKeySourceError: Error, Equatable, Sendable {
    /// The vault is locked.
    case locked
    /// No such key.
    case notFound
    /// Anything else, in words (never a secret).
    case failed(String)
}

/// Where the agent's keys live: the vault's `ssh-key` items.
public protocol SSHKeySource: AnyObject, Sendable {
    /// The keys, public halves only.
    /// - Throws: ``SSHKeySourceError/locked`` while the vault is locked.
    func storedKeys() throws(SSHKeySourceError) -> [SSHStoredKey]
    /// The private key of the item named `name`, read for one signature.
    /// - Throws: ``SSHKeySourceError``.
    func privateKey(named name: String) throws(SSHKeySourceError) -> SSHPrivateKey
    /// Stores a key added through the socket (ADD_IDENTITY), replacing a
    /// stored key with the same public half.
    /// - Throws: ``SSHKeySourceError``.
    func store(_ key: SSHPrivateKey, comment: String, constraints: SSHKeyConstraints) throws(SSHKeySourceError)
    /// Whether the vault is locked now.
    var isLocked: Bool { get }
    /// Drops (and so wipes) every private key the source keeps between
    /// signatures; called when the agent sees the vault lock.
    func forgetPrivateKeys()
}

extension SSHKeySource {
    /// A source that keeps no private key has nothing to drop.
    public func forgetPrivateKeys() {}
}

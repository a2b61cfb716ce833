import FobSystem

/// Everything the decision on one signature may weigh.
public struct SSHSignContext: Sendable {
    /// The key asked to sign.
    public var key: SSHPublicKey
    /// The key's comment (for prompts).
    public var comment: String
    /// The vault item's name of the key, or empty for a key held only in the agent's memory.
    public var itemName: String
    /// Where the signature is for, verified through session-bind or
    /// "unverified"; ``SSHDestination/isForwarded`` says whether the request came through forwarding.
    public var destination: SSHDestination
    /// Whether the key was added with `ssh-add -c`: every use must be confirmed by the user.
    public var confirm: Bool
    /// The peer process of the connection (`SO_PEERCRED`), for the requester's identity; 0 when unknown.
    public var peerPID: Int32
    /// Whether the data is an SSH user authentication request (else, for example, an `ssh-keygen -Y sign`).
    public var isUserAuthentication: Bool
    /// The peer process named through its pidfd when the connection was
    /// accepted (``SSHConnectionState/requester``); `nil` when it could not be read.
    public var requester: Requester?

    /// A context.
    public init(
        key: SSHPublicKey, comment: String, itemName: String, destination: SSHDestination, confirm: Bool,
        peerPID: Int32, isUserAuthentication: Bool, requester: Requester? = nil
    ) {
        self.requester = requester
        self.key = key
        self.comment = comment
        self.itemName = itemName
        self.destination = destination
        self.confirm = confirm
        self.peerPID = peerPID
        self.isUserAuthentication = isUserAuthentication
    }
}

/// The answer for one signature.
public enum SSHSignDecision: Equatable, Sendable {
    /// Sign.
    case allow
    /// Refuse; the reason goes to the agent's log.
    case deny(String)
}

/// The one place every signature's approval is decided (the seam where the
/// consent rules, prompts, leases and the access log plug in). The SSH
/// agent calls ``approve(_:)`` once per SIGN_REQUEST, after the key was
/// found and its host rules allow the destination, and before the private
/// key is read; and ``unlock(for:)`` when the vault is locked.
public protocol SSHSignApproval: Sendable {
    /// Decides one signature.
    func approve(_ context: SSHSignContext) -> SSHSignDecision
    /// Asks the user to unlock the vault for this signature (terminal UI,
    /// the requester's terminal, pinentry); returns whether the vault is unlocked now.
    func unlock(for context: SSHSignContext) -> Bool
}

/// The approval of an agent without consent rules (the vault's agent uses
/// FobAgent's `VaultSSHApproval`): allows every signature and records
/// nothing, except that it refuses keys added with `ssh-add -c` (they must
/// be confirmed, and it has no channel to ask), and it cannot ask to unlock
/// (a locked vault refuses).
public struct SSHDefaultApproval: SSHSignApproval {
    /// The default approval.
    public init() {}

    /// Allows, but refuses a confirm key: nothing can ask the user.
    public func approve(_ context: SSHSignContext) -> SSHSignDecision {
        context.confirm ? .deny("the key was added with ssh-add -c and nothing can ask for confirmation") : .allow
    }

    /// Cannot ask: `false`.
    public func unlock(for context: SSHSignContext) -> Bool { false }
}

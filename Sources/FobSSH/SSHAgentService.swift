import FobSystem

/// What one agent connection has been told: its `session-bind@openssh.com`
/// messages (OpenSSH's PROTOCOL.agent §1) and the peer's process.
public struct SSHConnectionState: Sendable {
    /// The verified binds, in order: forwarding hops first, the authentication one last.
    public internal(set) var binds: [SessionBind] = []
    /// Whether a bind failed to verify: the connection then gets no identities and no signatures.
    public internal(set) var bindFailed = false
    /// The peer's pid (`SO_PEERCRED`), 0 when unknown.
    public var peerPID: Int32
    /// The peer process (its executable, parents and terminal, for the
    /// consent rules and the access log), once named; `nil` before its first
    /// signature request, or when it could not be named.
    public private(set) var requester: Requester?
    /// Names the peer: run at most once, at the connection's first signature
    /// request, so that a connection that only lists keys (`ssh-add -l`) never
    /// reads /proc.
    private var naming: (@Sendable () -> Requester?)?

    /// A new connection's state, its peer already named (or never to be).
    public init(peerPID: Int32 = 0, requester: Requester? = nil) {
        self.peerPID = peerPID
        self.requester = requester
    }

    /// A new connection's state whose peer is named by `naming` when a request first needs it.
    /// - Parameters:
    ///   - peerPID: the peer's pid (`SO_PEERCRED`).
    ///   - naming: names the peer (its pidfd, executable, parents, terminal); `nil` when it cannot.
    public init(peerPID: Int32, naming: @escaping @Sendable () -> Requester?) {
        self.peerPID = peerPID
        self.naming = naming
    }

    /// The peer, named now if it was not yet (once per connection).
    public mutating func namedRequester() -> Requester? {
        if let naming {
            requester = naming()
            self.naming = nil
        }
        return requester
    }
}

/// The SSH agent's answers (RFC 9987 and OpenSSH's extensions) over a key
/// source, one connection's state at a time; thread-safe.
///
/// Keys come from the vault (``SSHKeySource``); keys added with a lifetime
/// (`ssh-add -t`) are held only in memory until they expire or the vault
/// locks. REMOVE_IDENTITY and REMOVE_ALL_IDENTITIES take keys out of the
/// agent until the vault is next locked, never out of the vault.
/// LOCK and UNLOCK answer failure: the vault's own lock (`fob lock`) is the
/// agent's lock. Private keys come from the source (which may keep them
/// decrypted until the vault locks or changes); none ever leaves through the socket.
public final class SSHAgentService: @unchecked Sendable {
    private struct MemoryKey {
        var key: SSHPrivateKey
        var comment: String
        var constraints: SSHKeyConstraints
        var expires: Double
    }

    private let source: any SSHKeySource
    private let approval: any SSHSignApproval
    private let knownHosts: @Sendable () -> KnownHosts
    private let log: @Sendable (String) -> Void
    private let now: @Sendable () -> Double
    private let mutex = Lock()
    private var memoryKeys: [MemoryKey] = []
    private var hidden = Set<[UInt8]>()
    private var publicCache: [SSHStoredKey] = []
    private var wasLocked = true

    /// The extensions ``SSHAgentRequest/query`` lists.
    public static let extensions = [SessionBind.extensionName, "query"]

    /// - Parameters:
    ///   - source: the vault's keys.
    ///   - approval: the decision on every signature (the vault's agent passes its consent rules; ``SSHDefaultApproval`` otherwise).
    ///   - knownHosts: the user's known_hosts, read when a session is bound.
    ///   - log: one line per signature made and per refusal (key fingerprint, destination, reason), never a secret.
    ///   - now: a monotonic clock in seconds, for `ssh-add -t` lifetimes.
    public init(
        source: any SSHKeySource, approval: any SSHSignApproval = SSHDefaultApproval(),
        knownHosts: @escaping @Sendable () -> KnownHosts, log: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> Double
    ) {
        self.source = source
        self.approval = approval
        self.knownHosts = knownHosts
        self.log = log
        self.now = now
    }

    /// Notes the vault's lock state: at a lock, keys held in memory are wiped
    /// and removed keys come back for the next unlock. Called by the server
    /// between requests and by every request.
    public func noteLockState() {
        let locked = source.isLocked
        mutex.lock()
        defer { mutex.unlock() }
        if locked && !wasLocked {
            memoryKeys.removeAll()
            hidden.removeAll()
            source.forgetPrivateKeys()
        }
        wasLocked = locked
    }

    /// The answer (a whole frame) to one message (the bytes after the frame's length).
    public func respond(to message: [UInt8], state: inout SSHConnectionState) -> [UInt8] {
        noteLockState()
        let request: SSHAgentRequest
        do {
            request = try SSHAgentRequest.decode(message)
        } catch {
            log("ssh-agent: refused a request that could not be read: \(error)")
            return SSHAgentResponse.failure
        }
        switch request {
        case .requestIdentities:
            return SSHAgentResponse.identities(
                identities(for: state).map { SSHIdentity(key: $0.key, comment: $0.comment) })
        case .sign(let blob, let data, let flags):
            // Every signature is decided for, and recorded with, its requester.
            _ = state.namedRequester()
            return sign(blob: blob, data: data, flags: flags, state: state)
        case .add(let key, let comment, let constraints):
            return add(key, comment: comment, constraints: constraints)
        case .remove(let blob):
            return remove(blob)
        case .removeAll:
            mutex.lock()
            memoryKeys.removeAll()
            hidden.formUnion(publicCache.map(\.key.blob))
            mutex.unlock()
            return SSHAgentResponse.success
        case .sessionBind(let bind):
            return self.bind(bind, state: &state)
        case .query:
            return SSHAgentResponse.query(SSHAgentService.extensions)
        case .lockOrUnlock:
            log("ssh-agent: ssh-add -x/-X refused: lock the vault with 'fob lock', unlock it with 'fob unlock'")
            return SSHAgentResponse.failure
        case .unknownExtension, .unsupported:
            return SSHAgentResponse.failure
        }
    }

    /// The keys offered on a connection: the vault's (or, while it is
    /// locked, the public halves last seen) and those held in memory, less
    /// removed ones, less those whose hosts or destination constraints do
    /// not allow the connection's bound destination.
    func identities(for state: SSHConnectionState) -> [SSHStoredKey] {
        guard !state.bindFailed else { return [] }
        let destination = self.destination(for: state)
        return allKeys().filter { permits($0, destination: destination, state: state, userAuthentication: false) }
    }

    private func allKeys() -> [SSHStoredKey] {
        let stored = try? source.storedKeys()
        mutex.lock()
        defer { mutex.unlock() }
        let time = now()
        memoryKeys.removeAll { $0.expires <= time }
        if let stored { publicCache = stored }
        let memory = memoryKeys.map {
            SSHStoredKey(
                name: "", key: $0.key.publicKey, comment: $0.comment, destinations: $0.constraints.destinations,
                confirm: $0.constraints.confirm)
        }
        let memoryBlobs = Set(memory.map(\.key.blob))
        return memory + publicCache.filter { !hidden.contains($0.key.blob) && !memoryBlobs.contains($0.key.blob) }
    }

    /// The destination of a connection's requests: the last bind's host key as known_hosts knows it, or unverified.
    public func destination(for state: SSHConnectionState) -> SSHDestination {
        guard let last = state.binds.last else { return .unverified }
        let forwarded = state.binds.contains { $0.isForwarding }
        let known = knownHosts().lookup(last.hostKey)
        if known.revoked { return SSHDestination(state: .revoked, hostKey: last.hostKey, isForwarded: forwarded) }
        guard known.isKnown else {
            return SSHDestination(state: .unknownHost, hostKey: last.hostKey, isForwarded: forwarded)
        }
        return SSHDestination(
            state: .verified, hostKey: last.hostKey, names: known.names, hashed: known.hashed, isForwarded: forwarded)
    }

    private func permits(
        _ key: SSHStoredKey, destination: SSHDestination, state: SSHConnectionState, userAuthentication: Bool
    ) -> Bool {
        if destination.state == .revoked { return false }
        let restricted = key.hosts.isRestricted || !key.destinations.isEmpty
        guard restricted else { return true }
        // Unbound: listed (ssh-add -l) and usable for signatures that are not logins.
        if state.binds.isEmpty { return !userAuthentication }
        if key.hosts.isRestricted && !key.hosts.allows(destination) { return false }
        return key.destinations.isEmpty || SSHAgentService.chainAllowed(state.binds, by: key.destinations)
    }

    /// Whether every hop of the bound chain (origin → first host → … → last
    /// host) is named by a destination constraint (non-CA keys only).
    static func chainAllowed(_ binds: [SessionBind], by constraints: [SSHDestinationConstraint]) -> Bool {
        var previous: SSHPublicKey? = nil
        for bind in binds {
            let hop = constraints.contains { constraint in
                let fromMatches =
                    previous.map { key in constraint.from.keys.contains { !$0.isCA && $0.key == key } }
                    ?? constraint.from.hostname.isEmpty
                return fromMatches && constraint.to.keys.contains { !$0.isCA && $0.key == bind.hostKey }
            }
            guard hop else { return false }
            previous = bind.hostKey
        }
        return true
    }

    private func bind(_ bind: SessionBind, state: inout SSHConnectionState) -> [UInt8] {
        if bind.hostKey.keyType == nil {
            // A host key type Fob cannot verify (P-384, P-521 …): not a forgery; the destination stays unverified.
            log("ssh-agent: session-bind not verified: host key type \(bind.hostKey.typeName) is not supported")
            return SSHAgentResponse.failure
        }
        guard bind.verifies else {
            state.bindFailed = true
            log(
                "ssh-agent: session-bind refused: the signature over the session identifier does not verify"
                    + " with host key \(bind.hostKey.fingerprint); this connection gets no keys")
            return SSHAgentResponse.failure
        }
        if state.binds.count >= 16 || state.binds.last?.isForwarding == false
            || state.binds.contains(where: { $0.sessionID == bind.sessionID })
        {
            log(
                "ssh-agent: session-bind refused: the connection is already bound for authentication or repeats a session"
            )
            return SSHAgentResponse.failure
        }
        state.binds.append(bind)
        return SSHAgentResponse.success
    }

    /// The session identifier of an SSH user authentication request
    /// (RFC 4252 §7: `string session identifier, byte 50, …`), or `nil` for other data.
    static func userAuthSessionID(_ data: [UInt8]) -> [UInt8]? {
        var reader = SSHReader(data)
        guard let id = try? reader.string("session identifier", limit: 64), !id.isEmpty,
            (try? reader.byte()) == 50
        else { return nil }
        return id
    }

    private func sign(blob: [UInt8], data: [UInt8], flags: UInt32, state: SSHConnectionState) -> [UInt8] {
        guard let key = try? SSHPublicKey(blob: blob) else { return SSHAgentResponse.failure }
        let refuse = { (reason: String) -> [UInt8] in
            self.log("ssh-agent: signature with \(key.fingerprint) refused: \(reason)")
            return SSHAgentResponse.failure
        }
        guard !state.bindFailed else { return refuse("the connection's session-bind did not verify") }
        let sessionID = SSHAgentService.userAuthSessionID(data)
        if let sessionID, let last = state.binds.last, last.sessionID != sessionID {
            return refuse("the login is for another session than the one the connection is bound to")
        }
        guard let stored = allKeys().first(where: { $0.key == key }) else { return refuse("no such key") }
        let destination = self.destination(for: state)
        guard permits(stored, destination: destination, state: state, userAuthentication: sessionID != nil) else {
            return refuse("the key is not for \(destination.summary)")
        }
        let context = SSHSignContext(
            key: key, comment: stored.comment, itemName: stored.name, destination: destination,
            confirm: stored.confirm, peerPID: state.peerPID, isUserAuthentication: sessionID != nil,
            requester: state.requester)
        if !stored.name.isEmpty && source.isLocked && !approval.unlock(for: context) {
            return refuse("the vault is locked; run 'fob unlock' (for \(destination.summary))")
        }
        if case .deny(let reason) = approval.approve(context) { return refuse(reason) }
        do {
            let privateKey = try stored.name.isEmpty ? memoryKey(key) : source.privateKey(named: stored.name)
            let signature = try privateKey.sign(data, flags: flags)
            log("ssh-agent: signed with \(key.fingerprint) (\(stored.comment)) for \(destination.summary)")
            return SSHAgentResponse.signature(signature)
        } catch {
            return refuse("\(error)")
        }
    }

    private func memoryKey(_ key: SSHPublicKey) throws(SSHKeySourceError) -> SSHPrivateKey {
        mutex.lock()
        defer { mutex.unlock() }
        guard let found = memoryKeys.first(where: { $0.key.publicKey == key }) else { throw .notFound }
        return found.key
    }

    private func add(_ key: SSHPrivateKey, comment: String, constraints: SSHKeyConstraints) -> [UInt8] {
        if let lifetime = constraints.lifetime {
            guard !source.isLocked else {
                log("ssh-agent: adding \(key.publicKey.fingerprint) refused: the vault is locked; run 'fob unlock'")
                return SSHAgentResponse.failure
            }
            mutex.lock()
            memoryKeys.removeAll { $0.key.publicKey == key.publicKey }
            memoryKeys.append(
                MemoryKey(key: key, comment: comment, constraints: constraints, expires: now() + Double(lifetime)))
            hidden.remove(key.publicKey.blob)
            mutex.unlock()
            return SSHAgentResponse.success
        }
        do {
            try source.store(key, comment: comment, constraints: constraints)
            mutex.lock()
            hidden.remove(key.publicKey.blob)
            mutex.unlock()
            return SSHAgentResponse.success
        } catch {
            log("ssh-agent: adding \(key.publicKey.fingerprint) to the vault refused: \(error)")
            return SSHAgentResponse.failure
        }
    }

    private func remove(_ blob: [UInt8]) -> [UInt8] {
        let known = allKeys().contains { $0.key.blob == blob }
        mutex.lock()
        defer { mutex.unlock() }
        memoryKeys.removeAll { $0.key.publicKey.blob == blob }
        hidden.insert(blob)
        return known ? SSHAgentResponse.success : SSHAgentResponse.failure
    }
}

/// Where a signature is for, as the agent knows it from the connection's
/// `session-bind@openssh.com` messages and the user's known_hosts.
public struct SSHDestination: Equatable, Sendable {
    /// How sure the agent is of the destination.
    public enum State: Equatable, Sendable {
        /// The client sent no session-bind: the destination is unknown ("unverified").
        case unverified
        /// The server proved its host key, and known_hosts names that key for ``SSHDestination/names``.
        case verified
        /// The server proved its host key, but no known_hosts line names it.
        case unknownHost
        /// The server's host key is marked `@revoked` in known_hosts.
        case revoked
    }

    /// How sure the agent is.
    public var state: State
    /// The server's host key when bound.
    public var hostKey: SSHPublicKey?
    /// The host patterns known_hosts gives for the host key (plain lines).
    public var names: [String]
    /// The hashed known_hosts entries for the host key.
    public var hashed: [HashedHost]
    /// Whether the request came through agent forwarding (a bind with `is_forwarding` on this connection).
    public var isForwarded: Bool

    /// A destination.
    public init(
        state: State, hostKey: SSHPublicKey? = nil, names: [String] = [], hashed: [HashedHost] = [],
        isForwarded: Bool = false
    ) {
        self.state = state
        self.hostKey = hostKey
        self.names = names
        self.hashed = hashed
        self.isForwarded = isForwarded
    }

    /// The destination of a connection with no session-bind.
    public static let unverified = SSHDestination(state: .unverified)

    /// The destination in words for prompts and logs: the first known name
    /// and "(verified)", the host key's fingerprint for an unknown host, or "unverified".
    public var summary: String {
        let forwarded = isForwarded ? ", forwarded" : ""
        switch state {
        case .unverified: return "unverified destination" + forwarded
        case .verified:
            let name = names.first ?? (hostKey.map { "host key " + $0.fingerprint } ?? "?")
            return name + " (verified" + forwarded + ")"
        case .unknownHost: return "unknown host with key " + (hostKey?.fingerprint ?? "?") + forwarded
        case .revoked: return "revoked host key " + (hostKey?.fingerprint ?? "?") + forwarded
        }
    }
}

/// The hosts a key is for: `fob ssh allow` patterns (OpenSSH's `*`/`?`
/// wildcards, `!` to exclude, host names or `[host]:port`) and host key
/// fingerprints (`SHA256:…`).
public struct SSHHostRules: Equatable, Sendable {
    /// The patterns and fingerprints as given; empty for a key allowed everywhere.
    public var patterns: [String]

    /// Rules from patterns.
    public init(patterns: [String]) { self.patterns = patterns }

    /// Whether the key names any host at all (a key without rules is offered everywhere).
    public var isRestricted: Bool { !patterns.isEmpty }

    /// Whether the key may be offered to and used for `destination`.
    /// An unrestricted key is allowed everywhere. A restricted key is
    /// allowed only for a bound, verified destination (or an unknown host
    /// whose key is named by fingerprint) that matches a positive pattern
    /// and no `!` pattern.
    public func allows(_ destination: SSHDestination) -> Bool {
        guard isRestricted else { return true }
        guard destination.state == .verified || destination.state == .unknownHost,
            let hostKey = destination.hostKey
        else { return false }
        var allowed = false
        for pattern in patterns {
            let negated = pattern.hasPrefix("!")
            let body = negated ? String(pattern.dropFirst()) : pattern
            if matches(body, destination: destination, hostKey: hostKey) {
                if negated { return false }
                allowed = true
            }
        }
        return allowed
    }

    private func matches(_ pattern: String, destination: SSHDestination, hostKey: SSHPublicKey) -> Bool {
        if pattern.hasPrefix("SHA256:") { return pattern == hostKey.fingerprint }
        guard destination.state == .verified else { return false }
        for name in destination.names {
            if SSHHostRules.wildcardMatch(pattern, name) { return true }
            // A pattern without a port also matches the same host on any port.
            if !pattern.hasPrefix("["), name.hasPrefix("["), let close = name.firstIndex(of: "]") {
                let host = String(name[name.index(after: name.startIndex)..<close])
                if SSHHostRules.wildcardMatch(pattern, host) { return true }
            }
        }
        if !pattern.contains("*") && !pattern.contains("?") {
            return destination.hashed.contains { $0.matches(pattern.lowercased()) }
        }
        return false
    }

    /// OpenSSH's wildcard match, ASCII case-insensitive: `*` any run, `?` any one character.
    public static func wildcardMatch(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.lowercased().utf8)
        let t = Array(text.lowercased().utf8)
        var (pi, ti) = (0, 0)
        var star: Int? = nil
        var mark = 0
        while ti < t.count {
            if pi < p.count && (p[pi] == UInt8(ascii: "?") || p[pi] == t[ti]) {
                pi += 1
                ti += 1
            } else if pi < p.count && p[pi] == UInt8(ascii: "*") {
                star = pi
                mark = ti
                pi += 1
            } else if let s = star {
                pi = s + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.count
    }
}

import CNettle
import FobSystem

/// What the user's known_hosts files say about one host key.
public struct KnownHostMatch: Equatable, Sendable {
    /// The host patterns of plain lines naming this key (negated ones left out).
    public var names: [String]
    /// The salt and hash of hashed (`|1|`) lines naming this key.
    public var hashed: [HashedHost]
    /// Whether a `@revoked` line names the key.
    public var revoked: Bool

    /// Whether any line trusts the key as this host's key.
    public var isKnown: Bool { !names.isEmpty || !hashed.isEmpty }
}

/// A hashed host name of known_hosts (`|1|` base64 salt `|` base64 HMAC-SHA1 of the name).
public struct HashedHost: Equatable, Sendable {
    /// The HMAC key.
    public var salt: [UInt8]
    /// HMAC-SHA1(salt, name).
    public var hash: [UInt8]

    /// Whether `name` (a host name or `[host]:port`) is the name hashed here.
    public func matches(_ name: String) -> Bool {
        var context = hmac_sha1_ctx()
        var digest = [UInt8](repeating: 0, count: 20)
        let bytes = Array(name.utf8)
        nettle_hmac_sha1_set_key(&context, salt.count, salt)
        nettle_hmac_sha1_update(&context, bytes.count, bytes)
        nettle_hmac_sha1_digest(&context, 20, &digest)
        return digest == hash
    }
}

/// The user's known_hosts (OpenSSH's sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT"):
/// plain and hashed host names, `@revoked` keys; `@cert-authority` lines
/// name a CA, never a host key, and are not used to trust one.
public struct KnownHosts: Sendable {
    private struct Line: Sendable {
        var patterns: [String]
        var hashed: HashedHost?
        var key: SSHPublicKey
        var revoked: Bool
    }

    private let lines: [Line]

    /// Parses known_hosts text; lines that cannot be read are skipped, as ssh does.
    public init(text: String) {
        var parsed: [Line] = []
        for raw in text.split(separator: "\n") {
            var fields = raw.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let first = fields.first, !first.hasPrefix("#") else { continue }
            var revoked = false
            if first.hasPrefix("@") {
                guard first == "@revoked" else { continue } // @cert-authority: a CA, not a host key
                revoked = true
                fields.removeFirst()
            }
            guard fields.count >= 3, let blob = Base64.decode(fields[2]), let key = try? SSHPublicKey(blob: blob),
                key.typeName == fields[1]
            else { continue }
            if fields[0].hasPrefix("|1|") {
                let parts = fields[0].split(separator: "|", omittingEmptySubsequences: false)
                guard parts.count == 4, let salt = Base64.decode(String(parts[2])),
                    let hash = Base64.decode(String(parts[3]))
                else { continue }
                parsed.append(
                    Line(patterns: [], hashed: HashedHost(salt: salt, hash: hash), key: key, revoked: revoked))
            } else {
                let patterns = fields[0].split(separator: ",").map(String.init)
                parsed.append(Line(patterns: patterns, hashed: nil, key: key, revoked: revoked))
            }
        }
        lines = parsed
    }

    /// Reads the files that exist among `paths` (a missing file is empty).
    public init(paths: [String]) {
        let text = paths.compactMap { FileDescriptorIO.readFile(atPath: $0, limit: 16 << 20) }
            .map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
        self.init(text: text)
    }

    /// The files ssh reads by default: `~/.ssh/known_hosts`, `~/.ssh/known_hosts2`,
    /// `/etc/ssh/ssh_known_hosts`, `/etc/ssh/ssh_known_hosts2`.
    public static func defaultPaths(home: String) -> [String] {
        [
            home + "/.ssh/known_hosts", home + "/.ssh/known_hosts2", "/etc/ssh/ssh_known_hosts",
            "/etc/ssh/ssh_known_hosts2",
        ]
    }

    /// What the files say about `key`.
    public func lookup(_ key: SSHPublicKey) -> KnownHostMatch {
        var match = KnownHostMatch(names: [], hashed: [], revoked: false)
        for line in lines where line.key == key {
            if line.revoked {
                match.revoked = true
                continue
            }
            if let hashed = line.hashed { match.hashed.append(hashed) }
            match.names += line.patterns.filter { !$0.hasPrefix("!") }
        }
        if match.revoked {
            match.names = []
            match.hashed = []
        }
        return match
    }
}

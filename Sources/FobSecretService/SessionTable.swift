import FobSystem

/// The open sessions of the connected clients, by object path: each one's
/// cipher and the connection (unique name) that opened it. A connection
/// holds at most ``perConnection`` sessions; its sessions end when it
/// leaves the bus. Paths are unguessable (``ObjectName/random()``), so
/// no client learns another's from its own.
final class SessionTable {
    /// The most sessions one connection may hold at once: 64 (libsecret
    /// and secretstorage open one per connection).
    static let perConnection = 64

    private var byPath: [String: (owner: String, cipher: SessionCipher)] = [:]
    private var counts: [String: Int] = [:]

    /// Whether no client holds a session.
    var isEmpty: Bool { byPath.isEmpty }

    /// Whether a session is at `path`.
    func contains(_ path: String) -> Bool { byPath[path] != nil }

    /// Checks that `owner` may open one more session, before any work is done for it.
    /// - Throws: `LimitsExceeded` at ``perConnection``.
    func admit(_ owner: String) throws(ProviderError) {
        guard counts[owner, default: 0] < SessionTable.perConnection else {
            throw .limitsExceeded(
                "this connection holds \(SessionTable.perConnection) sessions, the most it may; close one first")
        }
    }

    /// Opens a session for `owner`; returns its path.
    /// - Throws: `LimitsExceeded` at ``perConnection``.
    func open(owner: String, cipher: SessionCipher) throws(ProviderError) -> String {
        try admit(owner)
        let path = Provider.sessionPrefix + ObjectName.random()
        byPath[path] = (owner, cipher)
        counts[owner, default: 0] += 1
        return path
    }

    /// The cipher of the session at `path` when `sender` opened it.
    /// - Throws: `NoSession` for another connection's session or none.
    func cipher(_ path: String, sender: String) throws(ProviderError) -> SessionCipher {
        guard let session = byPath[path], session.owner == sender else { throw .noSession }
        return session.cipher
    }

    /// Closes the session at `path`, which `sender` must have opened.
    /// - Throws: `NoSession` as ``cipher(_:sender:)``.
    func close(_ path: String, sender: String) throws(ProviderError) {
        _ = try cipher(path, sender: sender)
        byPath[path] = nil
        counts[sender] = counts[sender].map { $0 - 1 }.flatMap { $0 > 0 ? $0 : nil }
    }

    /// Ends every session of `owner` (their keys are freed and wiped).
    func drop(_ owner: String) {
        guard counts.removeValue(forKey: owner) != nil else { return }
        byPath = byPath.filter { $0.value.owner != owner }
    }
}

/// Names for objects that come and go (sessions, prompts).
enum ObjectName {
    /// 32 lowercase hex digits of 16 random bytes (libsodium): a path element no client can guess.
    static func random() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var name: [UInt8] = []
        name.reserveCapacity(32)
        for byte in Sodium.randomBytes(16) {
            name.append(digits[Int(byte >> 4)])
            name.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: name, as: UTF8.self)
    }
}

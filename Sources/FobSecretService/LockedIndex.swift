import CSecretService
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The locked-search index kept beyond the provider's process, so that a
/// provider started while the vault is locked (activated at login before
/// `fob unlock`, or restarted) still answers `SearchItems`, with the
/// matches listed as locked.
///
/// - The key: 32 random bytes (libsodium) in the kernel's user keyring
///   (add_key(2)), as the "user" key `fob:secret-service-index:ID`, where
///   ID names the vault (see ``vaultID(_:)``). Like the `afterFirstUnlock`
///   class key it exists only after the vault was once seen unlocked, and
///   it is never written to a disk: the kernel holds it until the user's
///   last process ends, a reboot, or ``keyLifetime`` after the provider
///   last saw the vault unlocked. A lock leaves it.
/// - The index: `$XDG_RUNTIME_DIR/fob/secret-service-index-ID` (a tmpfs,
///   0600): for each item its persistent ID and the 16-byte keyed BLAKE2b
///   hash of each attribute pair (see ``Provider/pairHash(_:)``), followed
///   by a 32-byte keyed BLAKE2b of all of it under a subkey; a file whose
///   tag does not verify is ignored.
struct LockedIndex {
    /// How long the key lives after the provider last saw the vault unlocked: 7 days.
    static let keyLifetime: UInt32 = 7 * 24 * 3600

    let keyDescription: String
    let file: String

    /// The index of the vault at `vaultPath`, or `nil` without `XDG_RUNTIME_DIR`.
    init?(vaultPath: String, environment: [String: String]) {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        let id = LockedIndex.vaultID(vaultPath)
        keyDescription = "fob:secret-service-index:" + id
        file = runtime + "/fob/secret-service-index-" + id
    }

    /// 16 hex digits of the BLAKE2b of the vault's path: one key and file per vault.
    static func vaultID(_ vaultPath: String) -> String {
        Sodium.genericHash(Array(vaultPath.utf8), length: 16).prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
        }.joined()
    }

    /// The key from the user keyring, or `nil` when there is none (or no keyring).
    func loadKey() -> SecretBytes? {
        let id = fob_ss_key_search(keyDescription)
        guard id > 0 else { return nil }
        var length = 0
        let key = SecretBytes(count: 32, guarded: true) { buffer in
            length = fob_ss_key_read(id, buffer.baseAddress, 32)
        }
        return length == 32 ? key : nil
    }

    /// Puts `key` into the user keyring (replacing one of the same name) and
    /// makes it expire ``keyLifetime`` from now; `false` when the kernel refuses.
    @discardableResult
    func storeKey(_ key: SecretBytes) -> Bool {
        let id = key.withUnsafeBytes { fob_ss_key_add(keyDescription, $0.bindMemory(to: UInt8.self).baseAddress, 32) }
        guard id > 0 else { return false }
        _ = fob_ss_key_set_timeout(id, LockedIndex.keyLifetime)
        return true
    }

    /// The index file's bytes for `index`, tagged under `key`.
    static func encode(_ index: [UUID: Set<[UInt8]>], key: SecretBytes) -> [UInt8] {
        var bytes: [UInt8] = []
        for (id, hashes) in index.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            withUnsafeBytes(of: id.uuid) { bytes.append(contentsOf: $0) }
            let count = UInt16(min(hashes.count, Int(UInt16.max)))
            bytes += [UInt8(count >> 8), UInt8(count & 0xFF)]
            for hash in hashes.sorted(by: { $0.lexicographicallyPrecedes($1) }).prefix(Int(count)) { bytes += hash }
        }
        return bytes + tag(bytes, key: key)
    }

    /// The index in `bytes`, or `nil` when its tag does not verify under
    /// `key` (another key, a changed file) or its layout is wrong.
    static func decode(_ bytes: [UInt8], key: SecretBytes) -> [UUID: Set<[UInt8]>]? {
        guard bytes.count >= 32 else { return nil }
        let body = Array(bytes.dropLast(32))
        let expected = tag(body, key: key)
        let given = Array(bytes.suffix(32))
        // Compared in constant time (SecretBytes' equality is sodium_memcmp).
        guard SecretBytes(expected) == SecretBytes(given) else { return nil }
        return parse(body)
    }

    /// The entries of an index file's body (no tag): 16-byte ID, 2-byte
    /// big-endian count, that many 16-byte hashes; `nil` when it does not add up.
    static func parse(_ body: [UInt8]) -> [UUID: Set<[UInt8]>]? {
        var index: [UUID: Set<[UInt8]>] = [:]
        var at = 0
        while at < body.count {
            guard body.count - at >= 18 else { return nil }
            let b = Array(body[at..<(at + 16)])
            let id = UUID(
                uuid: (
                    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]
                ))
            let count = Int(body[at + 16]) << 8 | Int(body[at + 17])
            at += 18
            guard body.count - at >= count * 16 else { return nil }
            index[id] = Set((0..<count).map { Array(body[(at + $0 * 16)..<(at + $0 * 16 + 16)]) })
            at += count * 16
        }
        return index
    }

    /// The keyed BLAKE2b (32 bytes) of `body` under a subkey of `key` (not the pairs' key itself).
    static func tag(_ body: [UInt8], key: SecretBytes) -> [UInt8] {
        let subkey = SecretBytes(Sodium.genericHash(Array("fob secret-service index tag".utf8), key: key, length: 32))
        return Sodium.genericHash(body, key: subkey, length: 32)
    }

    /// Writes the index (0600, by a rename, so a reader sees the old or the new one whole).
    func save(_ index: [UUID: Set<[UInt8]>], key: SecretBytes) {
        let directory = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
        mkdir(directory, 0o700)
        let temporary = file + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let bytes = LockedIndex.encode(index, key: key)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == bytes.count { rename(temporary, file) } else { unlink(temporary) }
    }

    /// The saved index, when it verifies under `key`.
    func load(key: SecretBytes) -> [UUID: Set<[UInt8]>]? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        return LockedIndex.decode(Array(data), key: key)
    }
}

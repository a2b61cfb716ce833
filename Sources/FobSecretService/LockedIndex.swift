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
///   hash of each attribute pair (see ``LockedSearch/pairHash(_:)``), followed
///   by a 32-byte keyed BLAKE2b of all of it under a subkey; a file whose
///   tag does not verify is ignored.
struct LockedIndex {
    /// How long the key lives after the provider last saw the vault unlocked: 7 days.
    static let keyLifetime: UInt32 = 7 * 24 * 3600

    let keyDescription: String
    let file: String
    /// The file of the locked items' details (``LockedDetails``) beside the index.
    let detailsFile: String

    /// The index of the vault at `vaultPath`, or `nil` without `XDG_RUNTIME_DIR`.
    init?(vaultPath: String, environment: [String: String]) {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        let id = LockedIndex.vaultID(vaultPath)
        keyDescription = "fob:secret-service-index:" + id
        file = runtime + "/fob/secret-service-index-" + id
        detailsFile = runtime + "/fob/secret-service-details-" + id
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
        var body: [UInt8] = []
        for (id, hashes) in index.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            append(id, hashes: Array(hashes), to: &body)
        }
        return body + tag(body, key: key)
    }

    /// Appends one item's entry to an index body (the layout of
    /// ``parse(_:)``): its persistent ID, the count of its hashes (at most
    /// 65,535 are kept) and the 16-byte hashes, sorted. The provider keeps
    /// its index in this form: 66 bytes for an item of three attributes,
    /// where a dictionary of sets of arrays took an allocation for each set
    /// and each hash.
    static func append(_ id: UUID, hashes: [[UInt8]], to body: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { body.append(contentsOf: $0) }
        let kept = hashes.filter { $0.count == 16 }.sorted { $0.lexicographicallyPrecedes($1) }.prefix(Int(UInt16.max))
        body += [UInt8(kept.count >> 8), UInt8(kept.count & 0xFF)]
        for hash in kept { body += hash }
    }

    /// The persistent IDs of the entries of `body` (one that ``parse(_:)``
    /// accepts) holding every hash of `wanted`, in the body's order.
    static func matches(_ body: [UInt8], _ wanted: [[UInt8]]) -> [UUID] {
        var found: [UUID] = []
        body.withUnsafeBytes { raw in
            var at = 0
            while raw.count - at >= 18 {
                let count = Int(raw[at + 16]) << 8 | Int(raw[at + 17])
                let hashes = at + 18
                let end = hashes + count * 16
                guard end <= raw.count else { return }
                let holdsAll = wanted.allSatisfy { hash in
                    (0..<count).contains { i in
                        hash.elementsEqual(
                            UnsafeRawBufferPointer(rebasing: raw[(hashes + i * 16)..<(hashes + i * 16 + 16)]))
                    }
                }
                if holdsAll {
                    var id = UUID().uuid
                    withUnsafeMutableBytes(of: &id) {
                        $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[at..<(at + 16)]))
                    }
                    found.append(UUID(uuid: id))
                }
                at = end
            }
        }
        return found
    }

    /// The index in `bytes`, or `nil` when its tag does not verify under
    /// `key` (another key, a changed file) or its layout is wrong.
    static func decode(_ bytes: [UInt8], key: SecretBytes) -> [UUID: Set<[UInt8]>]? {
        verifiedBody(bytes, key: key).flatMap(parse)
    }

    /// The body of an index file (what ``append(_:hashes:to:)`` builds), or
    /// `nil` when its tag does not verify under `key` or its layout is wrong.
    static func verifiedBody(_ bytes: [UInt8], key: SecretBytes) -> [UInt8]? {
        guard bytes.count >= 32 else { return nil }
        let body = Array(bytes.dropLast(32))
        let expected = tag(body, key: key)
        let given = Array(bytes.suffix(32))
        // Compared in constant time (SecretBytes' equality is sodium_memcmp).
        guard SecretBytes(expected) == SecretBytes(given), parse(body) != nil else { return nil }
        return body
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
        write(LockedIndex.encode(index, key: key))
    }

    /// Writes an index body (``append(_:hashes:to:)``) with its tag under `key`, as ``save(_:key:)``.
    func save(body: [UInt8], key: SecretBytes) {
        write(body + LockedIndex.tag(body, key: key))
    }

    private func write(_ bytes: [UInt8]) { LockedIndex.writeFile(file, bytes) }

    /// Writes `bytes` to `file` (0600, by a rename, so a reader sees the old or the new one whole),
    /// making its directory (0700) first.
    static func writeFile(_ file: String, _ bytes: [UInt8]) {
        let directory = String(file[..<(file.lastIndex(of: "/") ?? file.endIndex)])
        mkdir(directory, 0o700)
        let temporary = file + ".new"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == bytes.count { rename(temporary, file) } else { unlink(temporary) }
    }

    /// The saved index, when it verifies under `key`.
    func load(key: SecretBytes) -> [UUID: Set<[UInt8]>]? {
        loadBody(key: key).flatMap(LockedIndex.parse)
    }

    /// The saved index's body, when it verifies under `key`.
    func loadBody(key: SecretBytes) -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        return LockedIndex.verifiedBody(Array(data), key: key)
    }
}

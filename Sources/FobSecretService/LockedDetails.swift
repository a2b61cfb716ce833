import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// What a locked item still shows, as in gnome-keyring and the spec: its
/// label, attributes, Created and Modified. Kept sealed, never in clear:
/// per item, XChaCha20-Poly1305 (libsodium, ``Sodium/seal(_:ad:key:)``)
/// under a subkey of the locked-search index's key (``LockedIndex``), with
/// the persistent ID as associated data; opened one item at a time when a
/// client reads a property while the vault is locked. Saved beside the
/// index (`$XDG_RUNTIME_DIR/fob/secret-service-details-ID`, 0600) so a
/// provider started while the vault is locked shows them too.
///
/// An entry's plaintext: created and modified (8 bytes each, big-endian
/// seconds since 1970), then the label and each attribute's name and value
/// as a 4-byte big-endian length and UTF-8 bytes. The file: per item its
/// 16-byte ID, a 4-byte big-endian length and the sealed entry.
struct LockedDetails {
    /// What a locked item shows.
    struct Shown: Equatable {
        let label: String
        let attributes: [String: String]
        let created: UInt64
        let modified: UInt64
    }

    private let key: SecretBytes
    private var sealed: [UUID: (revision: UInt64, bytes: [UInt8])] = [:]
    /// Where they are saved, or `nil` to keep them in memory only.
    let file: String?

    /// - Parameters:
    ///   - indexKey: the locked-search index's key (a subkey of it seals).
    ///   - file: where to save and load, or `nil`.
    init(indexKey: SecretBytes, file: String?) {
        key = SecretBytes(
            Sodium.genericHash(Array("fob secret-service locked details".utf8), key: indexKey, length: 32))
        self.file = file
    }

    /// The number of items held.
    var count: Int { sealed.count }

    /// Seals the entries of items new or changed since the last update and
    /// drops those of items gone; `true` when anything changed.
    mutating func update(from items: ItemCatalog) -> Bool {
        var next: [UUID: (revision: UInt64, bytes: [UInt8])] = [:]
        next.reserveCapacity(items.count)
        var changed = false
        for i in 0..<items.count {
            let (id, revision) = items.identity(i)
            guard next[id] == nil else { continue }
            if let kept = sealed[id], kept.revision == revision {
                next[id] = kept
                continue
            }
            let summary = items[i]
            var plain = LockedDetails.encode(summary)
            defer { plain.wipe() }
            let bytes = plain.withUnsafeBytes { Sodium.seal($0, ad: LockedDetails.ad(id), key: key) }
            next[id] = (revision, bytes)
            changed = true
        }
        changed = changed || next.count != sealed.count
        sealed = next
        return changed
    }

    /// What the item with this persistent ID shows, or `nil` when none is held.
    func shown(_ id: UUID) -> Shown? {
        guard let entry = sealed[id], let plain = Sodium.open(entry.bytes, ad: LockedDetails.ad(id), key: key) else {
            return nil
        }
        return plain.withUnsafeBytes { LockedDetails.decode(Array($0)) }
    }

    private static func ad(_ id: UUID) -> [UInt8] { withUnsafeBytes(of: id.uuid) { Array($0) } }

    static func encode(_ summary: ItemSummary) -> [UInt8] {
        var out: [UInt8] = []
        for value in [summary.created, summary.modified] {
            out += (0..<8).reversed().map { UInt8(value >> ($0 * 8) & 0xFF) }
        }
        func put(_ text: String) {
            let n = UInt32(clamping: text.utf8.count)
            out += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            out += text.utf8
        }
        put(summary.label)
        for pair in summary.attributes {
            put(pair.key)
            put(pair.value)
        }
        return out
    }

    static func decode(_ bytes: [UInt8]) -> Shown? {
        guard bytes.count >= 16 else { return nil }
        var at = 16
        func number(_ start: Int) -> UInt64 { bytes[start..<(start + 8)].reduce(0) { $0 << 8 | UInt64($1) } }
        func text() -> String? {
            guard bytes.count - at >= 4 else { return nil }
            let n = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            at += 4
            guard bytes.count - at >= n else { return nil }
            defer { at += n }
            return String(decoding: bytes[at..<(at + n)], as: UTF8.self)
        }
        guard let label = text() else { return nil }
        var attributes: [String: String] = [:]
        while at < bytes.count {
            guard let name = text(), let value = text() else { return nil }
            attributes[name] = value
        }
        return Shown(label: label, attributes: attributes, created: number(0), modified: number(8))
    }

    /// Writes every entry to ``file`` (0600, by a rename).
    func save() {
        guard let file else { return }
        var bytes: [UInt8] = []
        for (id, entry) in sealed {
            bytes += LockedDetails.ad(id)
            let n = UInt32(clamping: entry.bytes.count)
            bytes += [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            bytes += entry.bytes
        }
        LockedIndex.writeFile(file, bytes)
    }

    /// Reads the entries of ``file``; those that do not open under the key are left out.
    mutating func load() {
        guard let file, let data = FileManager.default.contents(atPath: file) else { return }
        let bytes = Array(data)
        var at = 0
        while bytes.count - at >= 20 {
            var raw = UUID().uuid
            withUnsafeMutableBytes(of: &raw) { $0.copyBytes(from: bytes[at..<(at + 16)]) }
            let n = bytes[(at + 16)..<(at + 20)].reduce(0) { $0 << 8 | Int($1) }
            at += 20
            guard bytes.count - at >= n else { return }
            let id = UUID(uuid: raw)
            let entry = Array(bytes[at..<(at + n)])
            if Sodium.open(entry, ad: LockedDetails.ad(id), key: key) != nil { sealed[id] = (0, entry) }
            at += n
        }
    }
}

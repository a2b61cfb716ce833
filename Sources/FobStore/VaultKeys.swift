import CSodium

/// How much of a vault's key material is in memory (see ``Vault/lock(keepingAfterFirstUnlock:)``).
public enum LockLevel: Sendable, Equatable {
    /// Every key: every item can be read and written.
    case unlocked
    /// Only the keys of `afterFirstUnlock` items and of the whole-vault
    /// commitment: those items can be read and written, `whenUnlocked` items
    /// are `.interactionNotAllowed`, listings leave them out.
    case afterFirstUnlockOnly
    /// No key: every item operation is `.interactionNotAllowed`.
    case locked
}

/// The subkeys of a vault key (`crypto_kdf_derive_from_key`, context
/// "fobvault"), each 32 bytes in `sodium_malloc` memory.
///
/// | id | use |
/// | --- | --- |
/// | 1 | `lookup`: keyed BLAKE2b-256 of the primary key (formats 1 and 2) |
/// | 2 | records of format 1 (read only, for the migration) |
/// | 3 | records of `whenUnlocked` items |
/// | 4 | records of `afterFirstUnlock` items |
/// | 5 | the per-item element of the whole-vault commitment |
/// | 6 | the MAC of the whole-vault commitment |
/// | 7 | seals the access log key (meta row `access_log_key`) |
///
/// A partial lock drops the vault key and subkey 3 and keeps 1, 4, 5 and 6.
struct VaultKeys {
    enum ID {
        static let lookup: UInt64 = 1
        static let recordV1: UInt64 = 2
        static let whenUnlocked: UInt64 = 3
        static let afterFirstUnlock: UInt64 = 4
        static let element: UInt64 = 5
        static let commitment: UInt64 = 6
        static let accessLog: UInt64 = 7
    }

    /// The vault key itself; `nil` after a partial lock.
    var vault: SecretBytes?
    /// Seals `whenUnlocked` records; `nil` after a partial lock.
    var whenUnlocked: SecretBytes?
    let lookup: SecretBytes
    let afterFirstUnlock: SecretBytes
    let element: SecretBytes
    let commitment: SecretBytes

    init(vaultKey: SecretBytes) {
        vault = vaultKey
        whenUnlocked = Crypto.subkey(of: vaultKey, id: ID.whenUnlocked)
        lookup = Crypto.subkey(of: vaultKey, id: ID.lookup)
        afterFirstUnlock = Crypto.subkey(of: vaultKey, id: ID.afterFirstUnlock)
        element = Crypto.subkey(of: vaultKey, id: ID.element)
        commitment = Crypto.subkey(of: vaultKey, id: ID.commitment)
    }

    /// Whether every key is held.
    var isComplete: Bool { vault != nil && whenUnlocked != nil }

    /// The record key of an accessibility class, or `nil` when it was dropped.
    func recordKey(for accessible: Accessibility) -> SecretBytes? {
        accessible == .afterFirstUnlock ? afterFirstUnlock : whenUnlocked
    }

    /// The record keys held, `whenUnlocked` first (the default class).
    var recordKeys: [(Accessibility, SecretBytes)] {
        var out: [(Accessibility, SecretBytes)] = []
        if let whenUnlocked { out.append((.whenUnlocked, whenUnlocked)) }
        out.append((.afterFirstUnlock, afterFirstUnlock))
        return out
    }
}

/// 32 bytes (a BLAKE2b-256 output or a `lookup`) as four words, cheap to hash,
/// compare and XOR.
struct Digest: Hashable, Sendable {
    var w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64

    static let zero = Digest(w0: 0, w1: 0, w2: 0, w3: 0)

    init(w0: UInt64, w1: UInt64, w2: UInt64, w3: UInt64) {
        (self.w0, self.w1, self.w2, self.w3) = (w0, w1, w2, w3)
    }

    /// The first 32 bytes of `bytes` (which must hold at least 32).
    init(_ bytes: UnsafeRawBufferPointer) {
        precondition(bytes.count >= 32)
        w0 = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        w1 = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        w2 = bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        w3 = bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
    }

    init(_ bytes: [UInt8]) { self = bytes.withUnsafeBytes { Digest($0) } }

    static func ^ (a: Digest, b: Digest) -> Digest {
        Digest(w0: a.w0 ^ b.w0, w1: a.w1 ^ b.w1, w2: a.w2 ^ b.w2, w3: a.w3 ^ b.w3)
    }

    var bytes: [UInt8] {
        var copy = self
        return withUnsafeBytes(of: &copy) { Array($0) }
    }
}

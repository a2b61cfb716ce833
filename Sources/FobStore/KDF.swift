import CSodium

/// Argon2id13 cost parameters (`crypto_pwhash`), stored in the vault so old
/// vaults keep opening when defaults change.
public struct KDFParameters: Sendable, Equatable {
    /// Number of passes (`opslimit`).
    public var opslimit: UInt64
    /// Memory in bytes (`memlimit`).
    public var memlimit: Int

    /// Explicit limits; see ``isValid`` for libsodium's bounds.
    public init(opslimit: UInt64, memlimit: Int) {
        self.opslimit = opslimit
        self.memlimit = memlimit
    }

    /// libsodium's named presets.
    public enum Preset: String, Sendable, CaseIterable {
        /// 2 passes, 64 MiB (`crypto_pwhash_*_INTERACTIVE`).
        case interactive
        /// 3 passes, 256 MiB (`crypto_pwhash_*_MODERATE`): the default.
        case moderate
        /// 4 passes, 1 GiB (`crypto_pwhash_*_SENSITIVE`).
        case sensitive
    }

    /// The parameters of a libsodium preset.
    public init(_ preset: Preset) {
        switch preset {
        case .interactive:
            self.init(
                opslimit: UInt64(crypto_pwhash_opslimit_interactive()), memlimit: crypto_pwhash_memlimit_interactive())
        case .moderate:
            self.init(opslimit: UInt64(crypto_pwhash_opslimit_moderate()), memlimit: crypto_pwhash_memlimit_moderate())
        case .sensitive:
            self.init(
                opslimit: UInt64(crypto_pwhash_opslimit_sensitive()), memlimit: crypto_pwhash_memlimit_sensitive())
        }
    }

    /// The default for new vaults: ``Preset/moderate``.
    public static var `default`: KDFParameters { KDFParameters(.moderate) }

    /// The most passes Fob accepts: 32 (8 times the sensitive preset's 4).
    /// libsodium would accept 2^32 - 1, which takes days; a file that asks for
    /// more is refused as damaged before any key derivation starts.
    public static let maxOpslimit: UInt64 = 32
    /// The most memory Fob accepts: 4 GiB in bytes (4 times the sensitive
    /// preset's 1 GiB). libsodium would accept 4 TiB, which exhausts memory.
    public static let maxMemlimit: Int = 4 << 30

    /// Whether libsodium accepts these limits for Argon2id and they are within
    /// ``maxOpslimit`` and ``maxMemlimit``.
    public var isValid: Bool {
        opslimit >= UInt64(crypto_pwhash_opslimit_min()) && opslimit <= UInt64(crypto_pwhash_opslimit_max())
            && memlimit >= crypto_pwhash_memlimit_min() && memlimit <= crypto_pwhash_memlimit_max()
            && opslimit <= KDFParameters.maxOpslimit && memlimit <= KDFParameters.maxMemlimit
    }
}

import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The highest write counter seen per vault, kept outside the vault file,
/// so that an old copy of the whole vault put back (by rename, by a restore)
/// is refused, even by a process that opens it afresh.
///
/// One file per vault, `DIRECTORY/ID` (mode 0600, in a 0700 directory),
/// holding the counter in decimal; ID is 32 hexadecimal digits of BLAKE2b
/// keyed with the vault key (``id(of:)``), so it names the vault without
/// revealing anything, and only a process that unlocked the vault can
/// compute it. Writing is best effort: where the directory cannot be made
/// (or `HOME`, without `XDG_STATE_HOME`, does not exist), nothing is kept
/// and nothing is refused. A missing `XDG_STATE_HOME` is made.
public struct VaultWatermarks: Sendable {
    /// `${XDG_STATE_HOME:-$HOME/.local/state}/fob/watermarks`.
    public let directory: String
    /// `HOME`, which must exist (it is never made here); `nil` with
    /// `XDG_STATE_HOME`, which is made when missing, as the XDG base
    /// directory specification asks of a program writing there.
    private let base: String?

    /// - Parameter environment: reads `XDG_STATE_HOME` and `HOME`.
    public init(environment: [String: String]) {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            base = nil
            directory = state + "/fob/watermarks"
        } else {
            let home = environment["HOME"] ?? "/nonexistent"
            base = home
            directory = home + "/.local/state/fob/watermarks"
        }
    }

    /// The id of a fully unlocked vault: 16 bytes of BLAKE2b keyed with its
    /// vault key, in hexadecimal (a new vault key, after `fob passwd`, is a new id).
    /// - Throws: `.interactionNotAllowed` unless fully unlocked.
    public static func id(of vault: Vault) throws(KeychainError) -> String {
        let key = try vault.vaultKeyCopy()
        return Sodium.hex(Sodium.genericHash(Array("fob vault id".utf8), key: key, length: 16))
    }

    /// The counter kept for `id`, or `nil` when none is (or it cannot be read).
    public func counter(of id: String) -> UInt64? {
        guard let text = try? String(contentsOfFile: directory + "/" + id, encoding: .utf8) else { return nil }
        return UInt64(text.trimmingSpacesAndNewlines())
    }

    /// Keeps `counter` for `id`: written to a new 0600 file renamed over the
    /// old one. Best effort (see the type's description).
    public func set(_ counter: UInt64, of id: String) {
        var st = stat()
        if let base { guard stat(base, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { return } }
        // Every directory made on the way (XDG_STATE_HOME included) is 0700.
        guard
            (try? FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])) != nil
        else { return }
        let path = directory + "/" + id
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let text = Array("\(counter)\n".utf8)
        let written = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == text.count && rename(temporary, path) == 0 { return }
        unlink(temporary)
    }

    /// Keeps `counter` for `id` when it is higher than the one kept.
    public func raise(_ counter: UInt64, of id: String) {
        if let kept = self.counter(of: id), kept >= counter { return }
        set(counter, of: id)
    }

    /// The error of a vault that went back to an earlier write.
    public static func rollback(counter: UInt64, seen: UInt64) -> KeychainError {
        .decode(
            "the vault went back to an earlier state (write \(counter), after write \(seen) was seen): an old copy was put back; if you restored a backup on purpose, run 'fob unlock --accept-rollback'"
        )
    }

    /// Checks a vault just unlocked: refuses it (locking it) when its write
    /// counter is below the one kept for it, else keeps the higher counter.
    /// - Parameters:
    ///   - vault: fully unlocked.
    ///   - remembered: a counter this process saw for the vault (used when none is kept on disk).
    /// - Returns: the vault's id and counter (to pass to ``raise(_:of:)`` after later writes).
    /// - Throws: `.decode` (exit 93) for a vault that went back.
    @discardableResult
    public func check(_ vault: Vault, remembered: [String: UInt64] = [:]) throws(KeychainError) -> (
        id: String, counter: UInt64
    ) {
        let id = try VaultWatermarks.id(of: vault)
        let counter = try VaultWatermarks.counterAfter(reading: self.counter(of: id) ?? remembered[id], vault: vault)
        if !vault.isBackupCopy { raise(counter, of: id) }
        return (id, counter)
    }

    /// The vault's write counter read after `seen` (the counter kept), so
    /// that a write another process made meanwhile, and kept, is counted:
    /// refuses (locking the vault) when the counter is still below `seen`.
    /// A backup opened away from its vault (``Vault/isBackupCopy``, read-only)
    /// is older by nature and never refused.
    /// - Throws: `.decode` for a vault that went back; what ``Vault/revalidate()`` throws.
    static func counterAfter(reading seen: UInt64?, vault: Vault) throws(KeychainError) -> UInt64 {
        try vault.revalidate()
        let counter = vault.writeCounter ?? 0
        if let seen, counter < seen, !vault.isBackupCopy {
            vault.lock()
            throw rollback(counter: counter, seen: seen)
        }
        return counter
    }
}

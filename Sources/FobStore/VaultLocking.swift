import CSQLite
import FoundationEssentials
@preconcurrency import Glibc

/// Unlocking, full and partial locking, and what tells the vault to lock:
/// a replaced file or a vault key changed by another process.
extension Vault {
    // MARK: - Lock state

    /// Whether no key at all is in memory (``lockLevel`` is `.locked`). A
    /// partially locked vault is not locked: it still serves `afterFirstUnlock` items.
    public var isLocked: Bool { keys == nil }

    /// How much key material is held.
    public var lockLevel: LockLevel {
        guard let keys else { return .locked }
        return keys.isComplete ? .unlocked : .afterFirstUnlockOnly
    }

    /// The write counter of the verified commitment (it grows by one with
    /// every write transaction, from any process); `nil` while locked.
    public var writeCounter: UInt64? { integrity?.counter }

    /// Derives the password key, opens the vault key, and verifies every row
    /// against the whole-vault commitment. A format-1 or format-2 vault is
    /// first migrated to format 3 in one transaction (see ``readableFormats``):
    /// format 1 with a new vault key, format 2 with the same one; every item
    /// starts at revision 1.
    /// - Parameter password: the master password (normalised to NFC UTF-8 before the KDF).
    /// - Throws: `.authFailed` for a wrong password (the lock state does not
    ///   change); `.decode` for damaged or tampered metadata, schema or items
    ///   (items that fail verification leave the vault locked); `.io`.
    public func unlock(password: SecretBytes) throws(KeychainError) {
        let normalized = try Vault.normalize(password, checkLength: false)
        let format = try readFormat()
        let meta = try readMeta(format: format)
        let (passwordKey, opened) = try meta.openVaultKey(password: normalized)
        guard let vaultKey = opened else {
            // A format label set back (an older fob would then write without revisions).
            for other in Vault.readableFormats where other > format {
                let ad = VaultMeta.keyAD(format: other, kdf: meta.kdf, salt: meta.salt)
                if Crypto.open(meta.sealedKey, ad: ad, key: passwordKey) != nil {
                    throw .decode("a format-\(other) vault key in a file marked format \(format)")
                }
            }
            throw .authFailed
        }
        switch format {
        case 1: try migrateFromFormat1(vaultKey: vaultKey, passwordKey: passwordKey, meta: meta)
        case 2: try migrateFromFormat2(vaultKey: vaultKey, passwordKey: passwordKey, meta: meta)
        default: try adopt(keys: VaultKeys(vaultKey: vaultKey), meta: meta, state: nil)
        }
    }

    /// Unlocks with the 32-byte vault key itself, as a process that unlocked
    /// this vault with the master password hands it over (``vaultKeyCopy()``),
    /// so that the key derivation runs once. The key is checked against the
    /// whole-vault commitment, which only the right key verifies.
    /// - Parameter vaultKey: 32 bytes.
    /// - Throws: `.authFailed` for another key (or a damaged commitment);
    ///   `.param` for a format-1 vault (its migration needs the password)
    ///   or a key of another size; `.decode`, `.io`.
    public func unlock(vaultKey: SecretBytes) throws(KeychainError) {
        guard vaultKey.count == Crypto.keyBytes else { throw .param("a vault key is \(Crypto.keyBytes) bytes") }
        let format = try readFormat()
        guard format == Vault.formatVersion else {
            throw .param("a format-\(format) vault is unlocked with its password")
        }
        let meta = try readMeta(format: format)
        do {
            try adopt(
                keys: VaultKeys(
                    vaultKey: SecretBytes(count: vaultKey.count, guarded: true) { out in
                        vaultKey.withUnsafeBytes { UnsafeMutableRawBufferPointer(out).copyBytes(from: $0) }
                    }), meta: meta, state: nil)
        } catch .decode {
            throw .authFailed
        }
    }

    /// A copy of the vault key, in guarded memory, for handing to the agent
    /// over its socket (``unlock(vaultKey:)``).
    /// - Returns: 32 bytes.
    /// - Throws: `.interactionNotAllowed` unless fully unlocked.
    public func vaultKeyCopy() throws(KeychainError) -> SecretBytes {
        guard let key = keys?.vault else { throw Vault.lockedError }
        return SecretBytes(count: key.count, guarded: true) { out in
            key.withUnsafeBytes { UnsafeMutableRawBufferPointer(out).copyBytes(from: $0) }
        }
    }

    /// Takes `keys` as the vault's and verifies (or, with `state`, trusts the
    /// state just written) the commitment; on failure the vault stays locked.
    func adopt(keys: VaultKeys, meta: VaultMeta, state: IntegrityState?) throws(KeychainError) {
        self.keys = keys
        unlockedMeta = meta
        integrity = state
        if let state { highestCounter = state.counter }
        identity = Vault.fileIdentity(url)
        do {
            try ensureFresh()
        } catch {
            lock()
            throw error
        }
    }

    /// Drops every key; `sodium_free` wipes their memory. Same as
    /// `lock(keepingAfterFirstUnlock: false)`.
    public func lock() { lock(keepingAfterFirstUnlock: false) }

    /// Locks fully, or partially, as iOS does after the first unlock.
    ///
    /// - `false`: drops every key and the verified commitment (``lockLevel`` `.locked`).
    /// - `true` (when unlocked): drops the vault key and the `whenUnlocked`
    ///   record key, and keeps the lookup key, the `afterFirstUnlock` record
    ///   key and the two commitment keys, so the whole-vault commitment is
    ///   still verified and kept up to date (``lockLevel`` `.afterFirstUnlockOnly`).
    ///   Then: `afterFirstUnlock` items are read, added, updated and deleted as
    ///   before; a `whenUnlocked` item named by its whole primary key is
    ///   `.interactionNotAllowed`; queries that scan (listings, update and
    ///   delete by attributes) see only `afterFirstUnlock` items, as if the
    ///   others did not exist; adding or saving a `whenUnlocked` item, and
    ///   ``changePassword(to:kdf:)``, are `.interactionNotAllowed`.
    ///   Only ``unlock(password:)`` restores the dropped keys.
    /// - Parameter keepingAfterFirstUnlock: whether to keep the `afterFirstUnlock` keys.
    public func lock(keepingAfterFirstUnlock: Bool) {
        guard keepingAfterFirstUnlock, var partial = keys else {
            keys = nil
            integrity = nil
            unlockedMeta = nil
            highestCounter = nil
            return
        }
        partial.vault = nil
        partial.whenUnlocked = nil
        keys = partial
    }

    /// Whether the file at ``url`` is no longer the one unlocked: its
    /// (st_dev, st_ino) differ from those at unlock, or it is gone. `false`
    /// while locked. One `stat` call.
    public func fileIdentityChanged() -> Bool {
        guard keys != nil, let identity else { return false }
        guard let now = Vault.fileIdentity(url) else { return true }
        return now.0 != identity.0 || now.1 != identity.1
    }

    /// Checks, cheaply, that this vault may keep serving: the file is the
    /// one unlocked, and, when another connection has committed since the
    /// last check, the vault key is unchanged and every row still matches
    /// the commitment. Does nothing while locked.
    /// - Throws: `.interactionNotAllowed` after locking, when the file was
    ///   replaced or its vault key changed (`fob passwd` elsewhere); `.decode`
    ///   for tampering; `.io`.
    public func revalidate() throws(KeychainError) {
        guard keys != nil else { return }
        if fileIdentityChanged() {
            lock()
            throw .interactionNotAllowed("the vault file was replaced; unlock again")
        }
        try ensureFresh()
    }

    static func fileIdentity(_ url: URL) -> (dev_t, ino_t)? {
        var st = stat()
        return stat(url.path, &st) == 0 ? (st.st_dev, st.st_ino) : nil
    }

    /// The Argon2id parameters of this vault: those authenticated by the
    /// last unlock while unlocked, else as stored (bounds-checked).
    /// - Throws: `.decode`, `.io`.
    public func kdfParameters() throws(KeychainError) -> KDFParameters {
        if let unlockedMeta { return unlockedMeta.kdf }
        return try readMeta(format: readFormat()).kdf
    }

    /// Changes the master password and rotates the vault key: a new random
    /// vault key is sealed under the new password, and every record is
    /// re-encrypted (and every lookup recomputed) under its subkeys, in one
    /// transaction. An old copy of the file and the old password open none of
    /// the items written after.
    /// - Parameters:
    ///   - newPassword: 1 to ``maxPasswordBytes`` bytes, normalised to NFC.
    ///   - kdf: new Argon2id costs, or `nil` to keep those authenticated at unlock.
    /// - Throws: `.interactionNotAllowed` when locked or partially locked, or
    ///   when another process changed the vault key since unlock (the vault
    ///   then locks); `.param` for a bad password or KDF limits outside
    ///   ``KDFParameters/isValid``; `.decode` for tampering; `.io`.
    public func changePassword(to newPassword: SecretBytes, kdf: KDFParameters? = nil) throws(KeychainError) {
        _ = try completeKeys()
        guard let meta = unlockedMeta else { throw Vault.lockedError }
        let normalized = try Vault.normalize(newPassword)
        let params = kdf ?? meta.kdf
        guard params.isValid else { throw .param("KDF limits out of range") }
        let salt = Sodium.randomBytes(Crypto.saltBytes)
        let passwordKey = try Crypto.deriveKey(
            password: normalized, salt: salt, opslimit: params.opslimit, memlimit: params.memlimit)
        try rotate(passwordKey: passwordKey, salt: salt, kdf: params)
    }
}

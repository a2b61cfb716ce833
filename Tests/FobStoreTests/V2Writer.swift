import Foundation
import Testing

@testable import FobStore

/// Writes format-2 vaults (before per-item revisions) for the migration tests:
/// a vault made by this build is rewritten as a format-2 build wrote it.
enum V2Writer {
    /// Rewrites the unlocked format-3 `vault` (created with `password`) as
    /// `format` (2 by default), and locks it: every record without its
    /// revision and sealed with associated data `lookup ‖ format`, the
    /// commitment recomputed with the same write counter, the vault key
    /// sealed with that format's associated data, and `user_version` set.
    /// Format 3 gives a sound file whose records lack their revision, which
    /// no build writes.
    static func downgrade(_ vault: Vault, password: SecretBytes, format: Int32 = 2) throws {
        let key = try vault.vaultKeyCopy()
        let keys = VaultKeys(vaultKey: key)
        let meta = try #require(vault.unlockedMeta)
        let counter = try #require(vault.writeCounter)
        let url = vault.url
        vault.lock()
        RawVault.checkpoint(url)
        var accumulator = Digest.zero
        let rows = RawVault.rows(url)
        for row in rows {
            let ad3 = row.lookup.withUnsafeBytes { Vault.recordAD($0, format: 3) }
            let opened = keys.recordKeys.lazy.compactMap { Crypto.open(row.record, ad: ad3, key: $0.1) }.first
            let plain = try #require(opened)
            var item = try plain.withUnsafeBytes { raw in
                try Result { () throws(KeychainError) in try RecordCodec.decode(raw, withSecret: true) }.get()
            }
            item.revision = 0
            let ad2 = row.lookup.withUnsafeBytes { Vault.recordAD($0, format: format) }
            let recordKey = try #require(keys.recordKey(for: item.accessible))
            let sealed = RecordCodec.encode(item).withUnsafeBytes { Crypto.seal($0, ad: ad2, key: recordKey) }
            #expect(RawVault.run(url, "UPDATE items SET record = ?1 WHERE id = \(row.id)", [sealed]))
            accumulator = accumulator ^ Vault.element(lookup: row.lookup, record: sealed, key: keys.element)
        }
        let integrity = Vault.integrityValue(
            counter: counter, count: rows.count, accumulator: accumulator, key: keys.commitment)
        let passwordKey = try Crypto.deriveKey(
            password: password, salt: meta.salt, opslimit: meta.kdf.opslimit, memlimit: meta.kdf.memlimit)
        let sealedKey = key.withUnsafeBytes {
            Crypto.seal($0, ad: VaultMeta.keyAD(format: format, kdf: meta.kdf, salt: meta.salt), key: passwordKey)
        }
        #expect(RawVault.run(url, "UPDATE meta SET value = ?1 WHERE name = 'vault_key'", [sealedKey]))
        #expect(RawVault.run(url, "UPDATE meta SET value = ?1 WHERE name = 'integrity'", [integrity]))
        #expect(RawVault.execute(url, "PRAGMA user_version=\(format);"))
        RawVault.checkpoint(url)
    }
}

import CSQLite
import Foundation

@testable import FobStore

/// Writes format-1 vaults of any size, the way fob 0.1.0 did (schema,
/// `user_version` 1, the vault key sealed with associated data
/// "fob vault key v1 argon2id13 OPS MEM" ‖ salt, records under subkey 2 with
/// `lookup ‖ 1`). ``V1Fixture`` is the real file; this is for volume.
enum V1Writer {
    static func write(to url: URL, password: String, items: [Item], kdf: KDFParameters = .testing) throws {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { throw KeychainError.io("cannot create \(url.path)") }
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw KeychainError.io(String(cString: sqlite3_errmsg(db)))
            }
        }
        func insert(_ sql: String, _ a: [UInt8], _ b: [UInt8]) throws {
            var stmt: OpaquePointer?
            sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
            defer { sqlite3_finalize(stmt) }
            for (index, blob) in [a, b].enumerated() {
                blob.withUnsafeBytes {
                    _ = sqlite3_bind_blob(
                        stmt, Int32(index + 1), $0.baseAddress, Int32($0.count), fob_sqlite_transient())
                }
            }
            guard sqlite3_step(stmt) == SQLITE_DONE else { throw KeychainError.io(String(cString: sqlite3_errmsg(db))) }
        }
        try exec(
            "PRAGMA journal_mode=WAL; BEGIN; PRAGMA application_id=\(Vault.applicationID); PRAGMA user_version=1;"
                + Vault.schemaSQL)
        let salt = Sodium.randomBytes(Crypto.saltBytes)
        let passwordKey = try Crypto.deriveKey(
            password: .text(password), salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
        let vaultKey = SecretBytes.random(count: Crypto.keyBytes)
        let ad = Array("fob vault key v1 argon2id13 \(kdf.opslimit) \(kdf.memlimit)".utf8) + salt
        let meta: [(String, [UInt8])] = [
            ("kdf", Array("argon2id13".utf8)), ("opslimit", Array(String(kdf.opslimit).utf8)),
            ("memlimit", Array(String(kdf.memlimit).utf8)), ("salt", salt),
            ("vault_key", vaultKey.withUnsafeBytes { Crypto.seal($0, ad: ad, key: passwordKey) }),
        ]
        for (name, value) in meta {
            try insert("INSERT INTO meta(name, value) VALUES (CAST(?1 AS TEXT), ?2)", Array(name.utf8), value)
        }
        let lookupKey = Crypto.subkey(of: vaultKey, id: 1)
        let recordKey = Crypto.subkey(of: vaultKey, id: 2)
        for item in items {
            let lookup = Crypto.keyedHash(RecordCodec.primaryKey(of: item), key: lookupKey)
            let recordAD = lookup + [1, 0, 0, 0]
            let record = RecordCodec.encode(item).withUnsafeBytes { Crypto.seal($0, ad: recordAD, key: recordKey) }
            try insert("INSERT INTO items(lookup, record) VALUES (?1, ?2)", lookup, record)
        }
        try exec("COMMIT; PRAGMA wal_checkpoint(TRUNCATE);")
        chmod(url.path, 0o600)
    }
}

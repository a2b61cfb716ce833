import CSQLite
import FoundationEssentials

/// The `meta` table of a vault, as read from the file.
///
/// Rows (name → value): `kdf` = "argon2id13", `opslimit` and `memlimit` as
/// decimal text, `salt` (16 bytes), `vault_key` (nonce ‖ XChaCha20-Poly1305
/// of the 32-byte vault key ‖ tag: 72 bytes), and from format 2 `integrity`:
/// write counter (UInt64 LE) ‖ item count (UInt64 LE) ‖ MAC (32 bytes).
struct VaultMeta: Equatable {
    let format: Int32
    let kdf: KDFParameters
    let salt: [UInt8]
    let sealedKey: [UInt8]
    /// `nil` in format 1.
    let integrity: [UInt8]?

    /// The associated data of the sealed vault key: the format, the KDF and
    /// its parameters, and the salt; editing any of them fails authentication.
    var keyAD: [UInt8] { VaultMeta.keyAD(format: format, kdf: kdf, salt: salt) }

    static func keyAD(format: Int32, kdf: KDFParameters, salt: [UInt8]) -> [UInt8] {
        Array("fob vault key v\(format) argon2id13 \(kdf.opslimit) \(kdf.memlimit)".utf8) + salt
    }

    /// Derives the password key from `normalized` (Argon2id with this
    /// meta's salt and costs) and opens the sealed vault key with it.
    /// - Returns: the password key, and the vault key or `nil` when the
    ///   password is wrong (or the meta was edited).
    /// - Throws: `.io` when the derivation cannot allocate its memory.
    func openVaultKey(password normalized: SecretBytes) throws(KeychainError)
        -> (passwordKey: SecretBytes, vaultKey: SecretBytes?)
    {
        let passwordKey = try Crypto.deriveKey(
            password: normalized, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
        let vaultKey = Crypto.open(sealedKey, ad: keyAD, key: passwordKey)
        return (passwordKey, vaultKey.flatMap { $0.count == Crypto.keyBytes ? $0 : nil })
    }

    /// The size of `vault_key`: nonce, a 32-byte key, tag.
    static let sealedKeyBytes = Crypto.nonceBytes + Crypto.keyBytes + Crypto.tagBytes
    /// The size of `integrity`: counter, count, MAC.
    static let integrityBytes = 8 + 8 + 32
    /// The longest value the `meta` table may hold; anything longer is damage.
    static let maxValueBytes = 128
}

extension Vault {
    /// The schema of formats 1 and 2, exactly: (type, name, table, SQL).
    /// Anything else (a trigger, a view, another table or index, a changed
    /// column or constraint, a missing UNIQUE index) is refused as damage.
    static let expectedSchema: Set<[String]> = [
        ["table", "meta", "meta", "CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL)"],
        ["index", "sqlite_autoindex_meta_1", "meta", ""],
        [
            "table", "items", "items",
            "CREATE TABLE items(id INTEGER PRIMARY KEY, lookup BLOB NOT NULL UNIQUE, record BLOB NOT NULL)",
        ],
        ["index", "sqlite_autoindex_items_1", "items", ""],
    ]

    /// The SQL that creates ``expectedSchema``.
    static let schemaSQL = """
        CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL);
        CREATE TABLE items(id INTEGER PRIMARY KEY, lookup BLOB NOT NULL UNIQUE, record BLOB NOT NULL);
        """

    /// What differs from ``expectedSchema``, one line each; empty when exact.
    func schemaProblems() throws(KeychainError) -> [String] {
        let found: [[String]] = try guarded { () throws(SQLiteError) in
            let stmt = try db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master")
            var rows: [[String]] = []
            while try stmt.step() { rows.append((0..<4).map { stmt.text(Int32($0)) ?? "" }) }
            return rows
        }
        var problems: [String] = []
        for row in found where !Vault.expectedSchema.contains(row) {
            problems.append("unexpected \(row[0]) \"\(displaySafe(row[1]))\" on \"\(displaySafe(row[2]))\"")
        }
        let names = Set(found.map { $0[1] })
        for row in Vault.expectedSchema where !found.contains(row) {
            problems.append(
                names.contains(row[1]) ? "\(row[0]) \"\(row[1])\" was changed" : "missing \(row[0]) \"\(row[1])\"")
        }
        return problems.sorted()
    }

    /// Throws `.decode` unless the schema is exactly Fob's.
    func checkSchema() throws(KeychainError) {
        let problems = try schemaProblems()
        guard problems.isEmpty else {
            throw .decode("the vault's schema is not Fob's: " + problems.joined(separator: "; "))
        }
    }

    /// `PRAGMA application_id` and `user_version`, checked.
    /// - Returns: the format version (one of ``readableFormats``).
    /// - Throws: `.decode` for a foreign file or an unknown format.
    func readFormat() throws(KeychainError) -> Int32 {
        let (appID, version): (Int64, Int64) = try guarded { () throws(SQLiteError) in
            (try db.scalar("PRAGMA application_id"), try db.scalar("PRAGMA user_version"))
        }
        guard appID == Int64(Vault.applicationID) else { throw .decode("not a Fob vault: \(url.path)") }
        guard version >= Int64(Vault.readableFormats.lowerBound), version <= Int64(Vault.readableFormats.upperBound)
        else {
            if version > Int64(Vault.formatVersion) {
                throw .decode(
                    "vault format \(version) is not supported by this fob (format \(Vault.formatVersion)): "
                        + "a newer fob wrote it; use that version or a later one")
            }
            throw .decode("vault format \(version) is not supported by this fob (format \(Vault.formatVersion))")
        }
        return Int32(version)
    }

    /// Reads and bounds the `meta` table: every value at most
    /// ``VaultMeta/maxValueBytes`` (checked before copying), the KDF within
    /// ``KDFParameters/isValid``, sizes exact. Nothing here is authenticated
    /// yet: the KDF parameters and salt are the sealed key's associated data.
    /// - Throws: `.decode` for anything missing, too long or out of range.
    func readMeta(format: Int32) throws(KeychainError) -> VaultMeta {
        let values: [String: [UInt8]] = try guarded { () throws(SQLiteError) in
            let stmt = try db.prepare("SELECT name, value FROM meta")
            var out: [String: [UInt8]] = [:]
            while try stmt.step() {
                guard stmt.byteCount(0) <= VaultMeta.maxValueBytes, stmt.byteCount(1) <= VaultMeta.maxValueBytes else {
                    throw SQLiteError(code: SQLITE_CORRUPT, message: "vault metadata too long")
                }
                out[stmt.text(0) ?? ""] = stmt.blob(1)
            }
            return out
        }
        func number(_ name: String) -> UInt64? {
            values[name].flatMap { String(bytes: $0, encoding: .utf8) }.flatMap { UInt64($0) }
        }
        guard values["kdf"] == Array("argon2id13".utf8) else {
            throw .decode("unknown key derivation in vault metadata")
        }
        guard let ops = number("opslimit"), let mem = number("memlimit"),
            let salt = values["salt"], salt.count == Crypto.saltBytes,
            let sealed = values["vault_key"], sealed.count == VaultMeta.sealedKeyBytes
        else {
            throw .decode("vault metadata incomplete")
        }
        guard mem <= UInt64(KDFParameters.maxMemlimit), ops <= KDFParameters.maxOpslimit,
            KDFParameters(opslimit: ops, memlimit: Int(mem)).isValid
        else {
            throw .decode(
                "vault KDF limits out of range (at most \(KDFParameters.maxOpslimit) passes and \(KDFParameters.maxMemlimit >> 30) GiB)"
            )
        }
        let integrity = values["integrity"]
        if format >= 2 {
            guard let integrity, integrity.count == VaultMeta.integrityBytes else {
                throw .decode("vault commitment missing")
            }
        }
        return VaultMeta(
            format: format, kdf: KDFParameters(opslimit: ops, memlimit: Int(mem)), salt: salt,
            sealedKey: sealed, integrity: format >= 2 ? integrity : nil)
    }

    /// Writes the KDF rows and the vault key sealed under `passwordKey`
    /// (format ``formatVersion``).
    func writeMeta(salt: [UInt8], kdf: KDFParameters, vaultKey: SecretBytes, passwordKey: SecretBytes)
        throws(SQLiteError)
    {
        let ad = VaultMeta.keyAD(format: Vault.formatVersion, kdf: kdf, salt: salt)
        let sealed = vaultKey.withUnsafeBytes { Crypto.seal($0, ad: ad, key: passwordKey) }
        try writeMetaValues([
            ("kdf", Array("argon2id13".utf8)),
            ("opslimit", Array(String(kdf.opslimit).utf8)),
            ("memlimit", Array(String(kdf.memlimit).utf8)),
            ("salt", salt),
            ("vault_key", sealed),
        ])
    }

    func writeMetaValues(_ values: [(String, [UInt8])]) throws(SQLiteError) {
        let stmt = try cached("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)")
        defer { stmt.reset() }
        for (name, value) in values {
            stmt.reset()
            try stmt.bind(1, name)
            try stmt.bind(2, value)
            try stmt.step()
        }
    }
}

extension Vault {
    /// The meta row of the access log key: nonce ‖ XChaCha20-Poly1305 of 32
    /// random bytes ‖ tag (72 bytes), sealed under subkey 7 of the vault key
    /// with associated data "fob access log key". `fob passwd` re-seals it
    /// under the new vault key in the same transaction, so the log stays readable.
    static let accessLogKeyRow = "access_log_key"
    static let accessLogKeyAD = Array("fob access log key".utf8)

    /// The key of this vault's access log (``AccessLogKeys``): 32 bytes.
    /// - Parameter create: make one (a meta row written in its own
    ///   transaction) when the vault has none yet.
    /// - Returns: the key, or `nil` when there is none and `create` is false.
    /// - Throws: `.interactionNotAllowed` unless fully unlocked; `.decode`
    ///   when the row does not open (edited, or sealed under another key); `.io`.
    public func accessLogKey(create: Bool) throws(KeychainError) -> SecretBytes? {
        guard let vaultKey = keys?.vault else { throw Vault.lockedError }
        return try accessLogKey(vaultKey: vaultKey, create: create)
    }

    /// ``accessLogKey(create:)`` under `vaultKey`, for a check that opens
    /// the vault key without unlocking (``Vault/verify(at:password:accessLogHeadDirectory:recording:)``).
    func accessLogKey(vaultKey: SecretBytes, create: Bool) throws(KeychainError) -> SecretBytes? {
        if let sealed = try readMetaValue(Vault.accessLogKeyRow) {
            return try Vault.openAccessLogKey(sealed, vaultKey: vaultKey)
        }
        guard create else { return nil }
        let key = SecretBytes.random(count: Crypto.keyBytes)
        try guarded { () throws(SQLiteError) in
            try db.execute("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                // Another process may have made one meanwhile: keep the first.
                let stmt = try db.prepare("INSERT OR IGNORE INTO meta(name, value) VALUES (?, ?)")
                try stmt.bind(1, Vault.accessLogKeyRow)
                try stmt.bind(2, Vault.sealAccessLogKey(key, vaultKey: vaultKey))
                try stmt.step()
                try db.execute("COMMIT")
            } catch {
                _ = try? db.execute("ROLLBACK")
                throw error
            }
        }
        guard let sealed = try readMetaValue(Vault.accessLogKeyRow) else {
            throw .io("the access log key was not kept")
        }
        return try Vault.openAccessLogKey(sealed, vaultKey: vaultKey)
    }

    /// The value of one meta row, or `nil` when there is none.
    func readMetaValue(_ name: String) throws(KeychainError) -> [UInt8]? {
        try guarded { () throws(SQLiteError) in
            let stmt = try db.prepare("SELECT value FROM meta WHERE name = ?")
            try stmt.bind(1, name)
            guard try stmt.step(), stmt.byteCount(0) <= VaultMeta.maxValueBytes else { return nil }
            return stmt.blob(0)
        }
    }

    static func sealAccessLogKey(_ key: SecretBytes, vaultKey: SecretBytes) -> [UInt8] {
        let wrapping = Crypto.subkey(of: vaultKey, id: VaultKeys.ID.accessLog)
        return key.withUnsafeBytes { Crypto.seal($0, ad: accessLogKeyAD, key: wrapping) }
    }

    static func openAccessLogKey(_ sealed: [UInt8], vaultKey: SecretBytes) throws(KeychainError) -> SecretBytes {
        let wrapping = Crypto.subkey(of: vaultKey, id: VaultKeys.ID.accessLog)
        guard let key = Crypto.open(sealed, ad: accessLogKeyAD, key: wrapping), key.count == Crypto.keyBytes else {
            throw .decode("the vault's access log key does not open (its meta row was changed)")
        }
        return key
    }

    /// Re-seals the access log key (when there is one) from `oldKey` to
    /// `newKey`, inside the key rotation's transaction.
    func resealAccessLogKey(from oldKey: SecretBytes, to newKey: SecretBytes) throws(KeychainError) {
        guard let sealed = try readMetaValue(Vault.accessLogKeyRow) else { return }
        let key = try Vault.openAccessLogKey(sealed, vaultKey: oldKey)
        try guarded { () throws(SQLiteError) in
            try writeMetaValues([(Vault.accessLogKeyRow, Vault.sealAccessLogKey(key, vaultKey: newKey))])
        }
    }
}

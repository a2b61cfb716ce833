import FoundationEssentials

/// The vault's access default: the ``AccessRule/Mode`` of every item whose
/// rule has no mode of its own.
///
/// It is the `meta` row `access_default`: the mode's byte ‖ a 32-byte keyed
/// BLAKE2b of `"fob access default v1"` and that byte under the
/// commitment subkey (``VaultKeys``), so an edit of the file without the
/// vault key is refused as damage. A vault made before rules has no row and
/// keeps ``AccessRule/Mode/any`` until the user chooses; a new vault starts
/// at ``AccessRule/Mode/ask``.
extension Vault {
    /// The mode a new vault starts with.
    public static let newVaultAccessDefault = AccessRule.Mode.ask

    /// The `meta` value that stores `mode`.
    static func accessDefaultValue(_ mode: AccessRule.Mode, key: SecretBytes) -> [UInt8] {
        [mode.rawValue] + Crypto.keyedHash(Array("fob access default v1".utf8) + [mode.rawValue], key: key)
    }

    /// The vault's access default.
    /// - Returns: the stored mode; ``AccessRule/Mode/any`` when the vault has
    ///   none (it was made before access rules).
    /// - Throws: `.interactionNotAllowed` while locked; `.decode` when the
    ///   row was edited or damaged.
    public func accessDefault() throws(KeychainError) -> AccessRule.Mode {
        let keys = try unlockedKeys()
        let value: [UInt8]? = try guarded { () throws(SQLiteError) in
            let stmt = try cached("SELECT value FROM meta WHERE name = 'access_default'")
            defer { stmt.reset() }
            return try stmt.step() ? stmt.blob(0) : nil
        }
        guard let value else { return .any }
        guard value.count == 33, let mode = AccessRule.Mode(rawValue: value[0]),
            sodiumEqual(value, Vault.accessDefaultValue(mode, key: keys.commitment))
        else { throw .decode("the vault's access default was changed without its key") }
        return mode
    }

    /// The access default as the file stores it, read without the vault
    /// key and so not checked against its commitment: for what is only
    /// shown (the terminal UI's notice that a vault still reads `any`),
    /// never for a decision, which takes ``accessDefault()``.
    /// - Returns: the stored mode; ``AccessRule/Mode/any`` when the vault has none.
    /// - Throws: `.decode` for a row that holds no mode; `.io`.
    public func storedAccessDefault() throws(KeychainError) -> AccessRule.Mode {
        guard let value = try readMetaValue("access_default") else { return .any }
        guard value.count == 33, let mode = AccessRule.Mode(rawValue: value[0]) else {
            throw .decode("the vault's access default is damaged")
        }
        return mode
    }

    /// Whether the file stores an access default: `false` for a vault made
    /// before access rules, which follows ``AccessRule/Mode/any`` until the
    /// user chooses. Read without the vault key, for what is only shown.
    /// - Throws: `.io`.
    public func storesAccessDefault() throws(KeychainError) -> Bool {
        try readMetaValue("access_default") != nil
    }

    /// Sets the vault's access default, in one write transaction.
    /// - Throws: `.interactionNotAllowed` while locked; `.io`.
    public func setAccessDefault(_ mode: AccessRule.Mode) throws(KeychainError) {
        try write { (keys) throws(KeychainError) in
            try guarded { () throws(SQLiteError) in
                try writeMetaValues([("access_default", Vault.accessDefaultValue(mode, key: keys.commitment))])
            }
        }
    }
}

/// Constant-time equality of two byte arrays of the same length.
private func sodiumEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for i in 0..<a.count { difference |= a[i] ^ b[i] }
    return difference == 0
}

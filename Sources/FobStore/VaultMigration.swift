import CSQLite
import FoundationEssentials

/// Rewriting every record at once: the migrations of formats 1 and 2 to
/// format 3 and the vault-key rotation of `changePassword`. Each runs in one
/// `BEGIN IMMEDIATE` transaction: a crash or error half-way leaves the file
/// as it was.
extension Vault {
    /// Migrates a format-1 vault: opens every record with the format-1 keys
    /// (subkeys 1 and 2 of `vaultKey`, associated data `lookup ‖ 1`), then
    /// under a new random vault key recomputes every lookup, seals every
    /// record (revision 1) under its class's key, writes the commitment,
    /// re-seals the new key under the same password key (same salt and KDF),
    /// and sets `user_version` to ``formatVersion``. When another process
    /// migrated first, unlocks the migrated file with `passwordKey` instead.
    /// - Throws: `.decode` for a damaged format-1 record (nothing changes); `.io`.
    func migrateFromFormat1(vaultKey: SecretBytes, passwordKey: SecretBytes, meta: VaultMeta) throws(KeychainError) {
        try migrate(from: 1, meta: meta, passwordKey: passwordKey) { () throws(KeychainError) in
            let lookupKey = Crypto.subkey(of: vaultKey, id: VaultKeys.ID.lookup)
            let recordKey = Crypto.subkey(of: vaultKey, id: VaultKeys.ID.recordV1)
            let items = try readAll { (record, lookup) throws(KeychainError) -> Item in
                let ad = Vault.recordAD(lookup, format: 1)
                let item = try scratch.withBuffer(count: record.count - Crypto.nonceBytes - Crypto.tagBytes) {
                    plain throws(KeychainError) in
                    guard Crypto.open(record, ad: ad, key: recordKey, into: plain) else { throw Vault.recordFailed }
                    return try RecordCodec.decode(UnsafeRawBufferPointer(plain), withSecret: true)
                }
                let primary = RecordCodec.primaryKey(of: item)
                guard Crypto.keyedHash(primary, key: lookupKey).elementsEqual(lookup) else {
                    throw .decode("an item record does not match its key")
                }
                return item
            }
            return (SecretBytes.random(count: Crypto.keyBytes), items, 1)
        }
    }

    /// Migrates a format-2 vault to format 3 (per-item revisions): verifies
    /// every row against the format-2 commitment, then, with the same vault
    /// key, seals every record again with revision 1 and associated data
    /// `lookup ‖ 3`, writes the commitment (write counter + 1), re-seals the
    /// vault key with the format-3 associated data under `passwordKey`, and
    /// sets `user_version` to 3. A format-2 `fob` then refuses the file
    /// ("vault format 3 is not supported by this fob"), so that no write
    /// leaves a revision unchanged. When another process migrated first,
    /// unlocks the migrated file instead.
    /// - Throws: `.decode` for a damaged record or commitment (nothing changes); `.io`.
    func migrateFromFormat2(vaultKey: SecretBytes, passwordKey: SecretBytes, meta: VaultMeta) throws(KeychainError) {
        try migrate(from: 2, meta: meta, passwordKey: passwordKey) { () throws(KeychainError) in
            let keys = VaultKeys(vaultKey: vaultKey)
            let state = try scanCommitment(meta: meta, keys: keys, dataVersion: dataVersion())
            let items = try readAll { (record, lookup) throws(KeychainError) -> Item in
                guard let item = try openRecord(record, lookup: lookup, keys: keys, withSecret: true, format: 2) else {
                    throw Vault.recordFailed
                }
                return item
            }
            guard items.count == state.elements.count else { throw Vault.commitmentMismatch }
            return (vaultKey, items, state.counter + 1)
        }
    }

    /// The transaction of a migration from `format`: checks that the file is
    /// still that format with the metadata `meta`, reads every item with
    /// `read` (which returns the vault key to keep, the rows, and the write
    /// counter to store), gives every item without a revision revision 1,
    /// writes them all under the vault key, re-seals the vault key under
    /// `passwordKey` with the current format's associated data, and commits
    /// `user_version` = ``formatVersion``; then takes the new keys.
    private func migrate(
        from format: Int32, meta: VaultMeta, passwordKey: SecretBytes,
        read: () throws(KeychainError) -> (vaultKey: SecretBytes, items: [(Int64, Item)], counter: UInt64)
    ) throws(KeychainError) {
        try guarded { () throws(SQLiteError) in try db.execute("BEGIN IMMEDIATE") }
        var transactionOpen = true
        do throws(KeychainError) {
            let found = try readFormat()
            if found == Vault.formatVersion {
                try guarded { () throws(SQLiteError) in try db.execute("COMMIT") }
                transactionOpen = false
                let current = try readMeta(format: found)
                guard let key = Crypto.open(current.sealedKey, ad: current.keyAD, key: passwordKey),
                    key.count == Crypto.keyBytes
                else {
                    throw KeychainError.authFailed
                }
                try adopt(keys: VaultKeys(vaultKey: key), meta: current, state: nil)
                return
            }
            guard found == format else { throw KeychainError.decode("the vault's format changed during the migration") }
            try checkSchema()
            guard try readMeta(format: format) == meta else {
                throw KeychainError.decode("vault metadata changed during the migration")
            }
            let (newKey, readItems, counter) = try read()
            var items = readItems
            for index in items.indices where items[index].1.revision == 0 { items[index].1.revision = 1 }
            let keys = VaultKeys(vaultKey: newKey)
            var state = try rewriteAll(items, keys: keys)
            state.counter = counter
            try guarded { () throws(SQLiteError) in
                try writeMeta(salt: meta.salt, kdf: meta.kdf, vaultKey: newKey, passwordKey: passwordKey)
                try writeMetaValues([
                    (
                        "integrity",
                        Vault.integrityValue(
                            counter: state.counter, count: state.elements.count,
                            accumulator: state.accumulator, key: keys.commitment)
                    )
                ])
                try db.execute("PRAGMA user_version=\(Vault.formatVersion); COMMIT")
            }
            transactionOpen = false
            try adopt(keys: keys, meta: readMeta(format: Vault.formatVersion), state: state)
        } catch {
            if transactionOpen { _ = try? db.execute("ROLLBACK") }
            throw error
        }
    }

    /// Rotates the vault key (see ``changePassword(to:kdf:)``): re-seals a new
    /// key under `passwordKey` with `salt` and `kdf`, and rewrites every row.
    func rotate(passwordKey: SecretBytes, salt: [UInt8], kdf: KDFParameters) throws(KeychainError) {
        let newKey = SecretBytes.random(count: Crypto.keyBytes)
        let newKeys = VaultKeys(vaultKey: newKey)
        var rotated: IntegrityState?
        try write { (keys) throws(KeychainError) in
            guard keys.isComplete else {
                throw .interactionNotAllowed("the vault is locked: only afterFirstUnlock items are available")
            }
            guard let state = integrity else { throw Vault.commitmentMismatch }
            let items = try readAll { (record, lookup) throws(KeychainError) -> Item in
                guard
                    state.elements[Digest(lookup)] == Vault.element(lookup: lookup, record: record, key: keys.element),
                    let item = try openRecord(record, lookup: lookup, keys: keys, withSecret: true)
                else {
                    throw Vault.commitmentMismatch
                }
                return item
            }
            guard items.count == state.elements.count else { throw Vault.commitmentMismatch }
            var next = try rewriteAll(items, keys: newKeys)
            next.counter = state.counter + 1
            if let oldKey = keys.vault { try resealAccessLogKey(from: oldKey, to: newKey) }
            try guarded { () throws(SQLiteError) in
                try writeMeta(salt: salt, kdf: kdf, vaultKey: newKey, passwordKey: passwordKey)
                try writeMetaValues([
                    (
                        "integrity",
                        Vault.integrityValue(
                            counter: next.counter, count: next.elements.count,
                            accumulator: next.accumulator, key: newKeys.commitment)
                    )
                ])
            }
            // Nothing for `write` to add: the commitment above is under the new keys.
            journal?.previous.removeAll()
            rotated = next
        }
        guard let rotated else { return }
        keys = newKeys
        unlockedMeta = try readMeta(format: Vault.formatVersion)
        integrity = rotated
        highestCounter = rotated.counter
    }

    /// Every row, opened by `open(record, lookup)`, with its id.
    private func readAll(_ open: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(KeychainError) -> Item)
        throws(KeychainError) -> [(Int64, Item)]
    {
        let stmt = try guarded { () throws(SQLiteError) in try db.prepare("SELECT id, lookup, record FROM items") }
        var out: [(Int64, Item)] = []
        while try guarded({ () throws(SQLiteError) in try stmt.step() }) {
            let lookup = stmt.rawBlob(1)
            let record = stmt.rawBlob(2)
            guard lookup.count == 32, record.count >= Crypto.nonceBytes + Crypto.tagBytes,
                record.count <= Vault.maxRecordBytes
            else {
                throw Vault.recordFailed
            }
            out.append((stmt.int(0), try open(record, lookup)))
        }
        return out
    }

    /// Writes every item back under `keys` (new lookup, new record) and
    /// returns the commitment of the result (counter 1; callers set theirs).
    private func rewriteAll(_ items: [(Int64, Item)], keys: VaultKeys) throws(KeychainError) -> IntegrityState {
        var state = IntegrityState.empty(dataVersion: try dataVersion())
        state.counter = 1
        state.elements.reserveCapacity(items.count)
        try guarded { () throws(SQLiteError) in
            let stmt = try db.prepare("UPDATE items SET lookup = ?, record = ? WHERE id = ?")
            for (id, item) in items {
                let lookup = Vault.lookup(for: item, keys: keys)
                let record: [UInt8]
                do { record = try Vault.seal(item, lookup: lookup, keys: keys) } catch {
                    throw SQLiteError(code: SQLITE_TOOBIG, message: "\(error)")
                }
                stmt.reset()
                try stmt.bind(1, lookup)
                try stmt.bind(2, record)
                try stmt.bind(3, id)
                try stmt.step()
                guard sqlite3_changes(db.handle) == 1 else {
                    throw SQLiteError(code: SQLITE_CORRUPT, message: "a row vanished while rewriting")
                }
                let element = Vault.element(lookup: lookup, record: record, key: keys.element)
                guard state.elements.updateValue(element, forKey: Digest(lookup)) == nil else {
                    throw SQLiteError(code: SQLITE_CORRUPT, message: "two items with one key")
                }
                state.accumulator = state.accumulator ^ element
            }
        }
        return state
    }
}

import CSQLite
import FoundationEssentials

/// Reading and writing single rows: sealing and opening records, and
/// checking each row against the verified whole-vault commitment.
extension Vault {
    struct Row {
        let id: Int64
        let lookup: Digest
        let item: Item
    }

    static let secretTooLarge = KeychainError.param("secret larger than 1 MiB (\(Item.maxSecretBytes) bytes)")
    static let recordFailed = KeychainError.decode("an item record failed authentication")
    static let lockedError = KeychainError.interactionNotAllowed("the vault is locked")

    /// Refuses an item without a secret, or with a secret or attributes over their limits.
    static func check(_ item: Item) throws(KeychainError) {
        guard let secret = item.secret else { throw .param("an item needs a secret (kSecValueData)") }
        guard secret.count <= Item.maxSecretBytes else { throw secretTooLarge }
        try item.checkLimits()
        if item.kind == .oauth, secret.withUnsafeBytes({ contains($0, clientSecretFileMember) }) {
            throw .param(
                "\(item.displayName) names a file to read (client_secret_file); an oauth item keeps its "
                    + "client secret itself: sign in with `fob oauth login … --client-secret-file F`")
        }
        let attributes =
            item.service.utf8.count + item.account.utf8.count + item.accessGroup.utf8.count
            + (item.label?.utf8.count ?? 0) + (item.comment?.utf8.count ?? 0) + (item.generic?.count ?? 0)
        guard attributes <= maxAttributeBytes else {
            throw .param("item attributes larger than 1 MiB (\(maxAttributeBytes) bytes) in all")
        }
    }

    /// The JSON member by which older `oauth` items named the file their
    /// client secret was read from at each refresh. A stored item never
    /// names a file to read (an imported one could name any file), so an
    /// `oauth` item whose secret holds this member is refused.
    static let clientSecretFileMember = Array("\"client_secret_file\"".utf8)

    /// Whether `needle` occurs in `haystack`.
    static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count, let first = needle.first else { return needle.isEmpty }
        var start = 0
        while start + needle.count <= haystack.count {
            if haystack[start] == first, needle.indices.allSatisfy({ haystack[start + $0] == needle[$0] }) {
                return true
            }
            start += 1
        }
        return false
    }

    static func lookup(for item: Item, keys: VaultKeys) -> [UInt8] {
        Crypto.keyedHash(RecordCodec.primaryKey(of: item), key: keys.lookup)
    }

    /// `lookup ‖ format (UInt32 LE)`: a record cannot move to another row or format.
    static func recordAD(_ lookup: UnsafeRawBufferPointer, format: Int32) -> [UInt8] {
        Array(lookup) + (0..<4).map { UInt8(truncatingIfNeeded: UInt32(format) >> (8 * UInt32($0))) }
    }

    /// Seals `item` under the record key of its accessibility class.
    /// - Throws: `.interactionNotAllowed` for a `whenUnlocked` item while
    ///   partially locked; `.param` for a record over ``maxRecordBytes``.
    static func seal(_ item: Item, lookup: [UInt8], keys: VaultKeys) throws(KeychainError) -> [UInt8] {
        guard let key = keys.recordKey(for: item.accessible) else {
            throw .interactionNotAllowed("the vault is locked: \(item.displayName) is accessible only when unlocked")
        }
        let plain = RecordCodec.encode(item)
        guard plain.count <= maxRecordBytes - Crypto.nonceBytes - Crypto.tagBytes else {
            throw .param("item larger than \(maxRecordBytes) bytes")
        }
        let ad = lookup.withUnsafeBytes { recordAD($0, format: formatVersion) }
        return plain.withUnsafeBytes { Crypto.seal($0, ad: ad, key: key) }
    }

    /// Opens a record with each record key held (whenUnlocked, then
    /// afterFirstUnlock), checks that its class matches the key and that its
    /// primary key hashes to `lookup`.
    /// - Returns: the item, or `nil` when the record is not sealed under a key
    ///   held (a `whenUnlocked` item while partially locked).
    /// - Throws: `.decode` when no key opens it although all are held, or it is inconsistent.
    /// - Parameter format: the format the record was sealed in (a migration reads format 2).
    func openRecord(
        _ record: UnsafeRawBufferPointer, lookup: UnsafeRawBufferPointer, keys: VaultKeys,
        withSecret: Bool, format: Int32 = Vault.formatVersion
    ) throws(KeychainError) -> Item? {
        guard record.count >= Crypto.nonceBytes + Crypto.tagBytes, record.count <= Vault.maxRecordBytes else {
            throw Vault.recordFailed
        }
        let ad = Vault.recordAD(lookup, format: format)
        for (accessible, key) in keys.recordKeys {
            let opened = try scratch.withBuffer(count: record.count - Crypto.nonceBytes - Crypto.tagBytes) {
                plain throws(KeychainError) -> Item? in
                guard Crypto.open(record, ad: ad, key: key, into: plain) else { return nil }
                recordsDecrypted += 1
                return try RecordCodec.decode(UnsafeRawBufferPointer(plain), withSecret: withSecret)
            }
            guard let item = opened else { continue }
            guard item.accessible == accessible else {
                throw .decode("an item record is sealed under another class's key")
            }
            // A record moved under another row's lookup fails the AEAD above; a
            // record whose contents disagree with its own lookup is caught here.
            guard Vault.lookup(for: item, keys: keys).elementsEqual(lookup) else {
                throw .decode("an item record does not match its key")
            }
            return item
        }
        if keys.whenUnlocked == nil { return nil }
        throw Vault.recordFailed
    }

    enum ReadOutcome {
        case rows([Row])
        /// A row differs from the verified commitment, in the snapshot the
        /// commitment was verified in: the file was tampered with.
        case stale
    }

    /// Rows matching `query` that can be opened, each checked against the
    /// verified commitment: one indexed read when the whole primary key is
    /// given, else a scan that decrypts every record.
    /// - Throws: `.decode` for tampering; `.interactionNotAllowed` when locked,
    ///   or for a `whenUnlocked` item named by its whole key while partially locked.
    func rows(matching query: ItemQuery, withSecrets: Bool) throws(KeychainError) -> [Row] {
        let keys = try unlockedKeys()
        // One snapshot for the freshness check and the read: a row that then
        // differs from the verified commitment can only be tampering.
        return try inTransaction { () throws(KeychainError) -> [Row] in
            try ensureFresh()
            switch try readRows(matching: query, keys: keys, withSecrets: withSecrets) {
            case .rows(let rows): return rows
            case .stale:
                integrity = nil
                throw Vault.commitmentMismatch
            }
        }
    }

    private func readRows(matching query: ItemQuery, keys: VaultKeys, withSecrets: Bool) throws(KeychainError)
        -> ReadOutcome
    {
        guard let state = integrity else { return .stale }
        // The lookups the whole primary key can have (two when the query
        // leaves the synchronizable flag open), or nil for a scan.
        let exact: [[UInt8]]?
        let stmt: SQLiteStatement
        do {
            if let candidates = query.primaryKeyCandidates {
                // One indexed read per distinct lookup, in byte order (as the
                // unique index would return them): `lookup IN (?, ?)` made
                // SQLite build a temporary table for the list at every call,
                // a tenth of the agent's work for one `fob get`.
                var lookups = candidates.map { Crypto.keyedHash($0, key: keys.lookup) }
                if lookups.count == 2 {
                    if lookups[0] == lookups[1] {
                        lookups.removeLast()
                    } else if lookups[1].lexicographicallyPrecedes(lookups[0]) {
                        lookups.swapAt(0, 1)
                    }
                }
                stmt = try cached("SELECT id, lookup, record FROM items WHERE lookup = ?")
                exact = lookups
            } else {
                stmt = try cached("SELECT id, lookup, record FROM items")
                exact = nil
            }
        } catch {
            throw error.keychainError
        }
        // A statement left mid-way would hold a read snapshot open.
        defer { stmt.reset() }
        var out: [Row] = []
        var seen = 0
        var seenLookups = Set<Digest>()
        for pass in 0..<(exact?.count ?? 1) {
            if let exact {
                stmt.reset()
                do { try stmt.bind(1, exact[pass]) } catch { throw error.keychainError }
            }
            while try guarded({ () throws(SQLiteError) in try stmt.step() }) {
                seen += 1
                let lookup = stmt.rawBlob(1)
                let record = stmt.rawBlob(2)
                guard lookup.count == 32, record.count <= Vault.maxRecordBytes else { return .stale }
                let digest = Digest(lookup)
                seenLookups.insert(digest)
                guard state.elements[digest] == Vault.element(lookup: lookup, record: record, key: keys.element) else {
                    return .stale
                }
                guard let item = try openRecord(record, lookup: lookup, keys: keys, withSecret: withSecrets) else {
                    if exact != nil {
                        throw .interactionNotAllowed(
                            "the vault is locked: \(query.displayName) is accessible only when unlocked")
                    }
                    continue
                }
                if query.matches(item) {
                    var kept = item
                    if !withSecrets { kept.secret = nil }
                    out.append(Row(id: stmt.int(0), lookup: digest, item: kept))
                }
            }
        }
        if let exact {
            // A row the commitment holds must not be missing from the table.
            for lookup in exact where state.elements[Digest(lookup)] != nil && !seenLookups.contains(Digest(lookup)) {
                return .stale
            }
        } else if seen != state.elements.count {
            return .stale
        }
        return .rows(out)
    }

    /// Inserts a sealed row, checks that the table holds exactly it, and
    /// adds it to the commitment. A UNIQUE collision is `.duplicateItem`.
    func insertRow(lookup: [UInt8], record: [UInt8], name: String, keys: VaultKeys) throws(KeychainError) {
        let id: Int64
        do {
            let stmt = try cached("INSERT INTO items(lookup, record) VALUES (?, ?)")
            defer { stmt.reset() }
            try stmt.bind(1, lookup)
            try stmt.bind(2, record)
            try stmt.step()
            id = sqlite3_last_insert_rowid(db.handle)
        } catch {
            if error.primary == SQLITE_CONSTRAINT { throw .duplicateItem(name) }
            throw error.keychainError
        }
        try confirm(id: id, lookup: lookup, record: record)
        noteWrite(lookup: Digest(lookup), element: Vault.element(lookup: lookup, record: record, key: keys.element))
    }

    /// Replaces row `id` (whose lookup was `old`) with a sealed record under a
    /// possibly new lookup; a collision is `.duplicateItem`.
    func replaceRow(id: Int64, old: Digest, lookup: [UInt8], record: [UInt8], name: String, keys: VaultKeys)
        throws(KeychainError)
    {
        do {
            let stmt = try cached("UPDATE items SET lookup = ?, record = ? WHERE id = ?")
            defer { stmt.reset() }
            try stmt.bind(1, lookup)
            try stmt.bind(2, record)
            try stmt.bind(3, id)
            try stmt.step()
        } catch {
            if error.primary == SQLITE_CONSTRAINT { throw .duplicateItem(name) }
            throw error.keychainError
        }
        try confirm(id: id, lookup: lookup, record: record)
        noteWrite(lookup: old, element: nil)
        noteWrite(lookup: Digest(lookup), element: Vault.element(lookup: lookup, record: record, key: keys.element))
    }

    /// Deletes row `id` and checks that it is gone.
    func deleteRow(id: Int64, lookup: Digest) throws(KeychainError) {
        try guarded { () throws(SQLiteError) in
            let stmt = try cached("DELETE FROM items WHERE id = ?")
            defer { stmt.reset() }
            try stmt.bind(1, id)
            try stmt.step()
        }
        try confirm(id: id, lookup: nil, record: nil)
        noteWrite(lookup: lookup, element: nil)
    }

    /// Reads row `id` back inside the write transaction: it must hold exactly
    /// what was written (or be gone), so nothing in the file can silently
    /// revert a write.
    private func confirm(id: Int64, lookup: [UInt8]?, record: [UInt8]?) throws(KeychainError) {
        let matches = try guarded { () throws(SQLiteError) -> Bool in
            let stmt = try cached("SELECT lookup, record FROM items WHERE id = ?")
            defer { stmt.reset() }
            try stmt.bind(1, id)
            guard try stmt.step() else { return lookup == nil }
            guard let lookup, let record else { return false }
            return stmt.rawBlob(0).elementsEqual(lookup) && stmt.rawBlob(1).elementsEqual(record)
        }
        guard matches else { throw .decode("the vault did not keep a write (the file has been tampered with)") }
    }
}

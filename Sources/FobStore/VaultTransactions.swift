import CSQLite
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Keys, transactions, statements and passwords: what every operation uses.
extension Vault {
    // MARK: - Internals

    /// Items sort by service, account, then access group, each by its UTF-8 bytes:
    /// the order of `fob ls` and of `SecItemCopyMatching` with `kSecMatchLimitAll`.
    static func ordering(_ a: (String, String, String), _ b: (String, String, String)) -> Bool {
        if a.0 != b.0 { return a.0.utf8.lexicographicallyPrecedes(b.0.utf8) }
        if a.1 != b.1 { return a.1.utf8.lexicographicallyPrecedes(b.1.utf8) }
        return a.2.utf8.lexicographicallyPrecedes(b.2.utf8)
    }

    func unlockedKeys() throws(KeychainError) -> VaultKeys {
        guard let keys else { throw Vault.lockedError }
        return keys
    }

    /// The keys when every key is held (not partially locked).
    func completeKeys() throws(KeychainError) -> VaultKeys {
        let keys = try unlockedKeys()
        guard keys.isComplete else {
            throw .interactionNotAllowed("the vault is locked: only afterFirstUnlock items are available")
        }
        return keys
    }

    /// Converts SQLite errors into the store's.
    func guarded<R>(_ body: () throws(SQLiteError) -> R) throws(KeychainError) -> R {
        do { return try body() } catch { throw error.keychainError }
    }

    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT` with the commitment made
    /// current first and advanced (counter + 1, new MAC) in the same
    /// transaction; rolls back, and undoes the in-memory commitment, on any error.
    func write<R>(_ body: (VaultKeys) throws(KeychainError) -> R) throws(KeychainError) -> R {
        _ = try unlockedKeys()
        lastWrite = []
        try guarded { () throws(SQLiteError) in try db.execute("BEGIN IMMEDIATE") }
        var committing = false
        do throws(KeychainError) {
            try ensureFresh()
            let keys = try unlockedKeys()
            guard let state = integrity else { throw Vault.commitmentMismatch }
            journal = IntegrityJournal(accumulator: state.accumulator, counter: state.counter)
            let result = try body(keys)
            if journal?.previous.isEmpty == false { try writeCommitment(keys: keys) }
            committing = true
            try guarded { () throws(SQLiteError) in try db.execute("COMMIT") }
            journal = nil
            if let counter = integrity?.counter { highestCounter = max(highestCounter ?? 0, counter) }
            return result
        } catch {
            _ = try? db.execute("ROLLBACK")
            // After a failed COMMIT the outcome is unknown: verify again on next use.
            if committing { integrity = nil } else if let journal { undo(journal) }
            journal = nil
            lastWrite = []
            throw error
        }
    }

    /// Records one item written by the transaction in progress (``lastWrite``), without its secret.
    func noteWrite(_ write: ItemWrite) {
        lastWrite.append(write.withoutSecrets)
    }

    /// A prepared statement kept for the life of the connection, reset for reuse.
    func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let stmt = statements[sql] {
            stmt.reset()
            return stmt
        }
        let stmt = try db.prepare(sql)
        statements[sql] = stmt
        return stmt
    }

    /// NFC-normalises a master password given as UTF-8 (bytes that are not
    /// UTF-8 are used as they are) and checks its length.
    /// - Throws: `.param` for an empty password or one over ``maxPasswordBytes``.
    static func normalize(_ password: SecretBytes, checkLength: Bool = true) throws(KeychainError) -> SecretBytes {
        if checkLength {
            guard password.count > 0 else { throw .param("the master password is empty") }
        }
        let ascii = password.withUnsafeBytes { $0.allSatisfy { $0 < 0x80 } }
        var result = password
        if !ascii, let text = password.unsafeString {
            // NFC (Unicode normalization form C) by the standard library's tables.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(text.utf8.count)
            text._withNFCCodeUnits { bytes.append($0) }
            result = SecretBytes(bytes)
            bytes.wipe()
        }
        if checkLength {
            guard result.count <= maxPasswordBytes else {
                throw .param("the master password is longer than \(maxPasswordBytes) bytes")
            }
        }
        return result
    }

    /// Creates an empty file at `url` with mode 0600, refusing to replace one.
    /// - Throws: `.io` when a file or a directory exists there, or it cannot
    ///   be created.
    static func createPrivateFile(at url: URL) throws(KeychainError) {
        let fd = Glibc.open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            var status = stat()
            if errno == EISDIR
                || (errno == EEXIST && stat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR)
            {
                throw .io("\(url.path) is a directory; name the new file itself (such as \(url.path)/vault-copy.db)")
            }
            if errno == EEXIST { throw .io("a file already exists at \(url.path); not overwriting it") }
            throw .io("cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, 0o600)
        close(fd)
    }

    static func makeParentDirectories(of url: URL) throws(KeychainError) {
        var missing: [String] = []
        var dir = url.deletingLastPathComponent().path
        while !dir.isEmpty, dir != "/", !FileManager.default.fileExists(atPath: dir) {
            missing.append(dir)
            dir = PathText.deletingLastComponent(dir)
        }
        for path in missing.reversed() {
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw .io("cannot create \(path): \(String(cString: strerror(errno)))")
            }
            chmod(path, 0o700)
        }
    }
}

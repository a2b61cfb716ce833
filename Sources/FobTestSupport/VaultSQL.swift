import CSQLite

extension VaultFile {
    /// Runs one SQL statement on the database at `path`, with `blobs` bound
    /// to ?1, ?2, …, the way an attacker with the file and no key can edit it.
    /// - Returns: whether SQLite ran it to completion.
    @discardableResult
    public static func execute(_ path: String, _ sql: String, blobs: [[UInt8]] = []) -> Bool {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let db else {
            sqlite3_close(db)
            return false
        }
        defer { sqlite3_close(db) }
        if blobs.isEmpty { return sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else { return false }
        defer { sqlite3_finalize(statement) }
        for (index, blob) in blobs.enumerated() {
            blob.withUnsafeBytes {
                _ = sqlite3_bind_blob(
                    statement, Int32(index + 1), $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                    Int32($0.count), fob_sqlite_transient())
            }
        }
        return sqlite3_step(statement) == SQLITE_DONE
    }

    /// Moves the WAL into the main file (`PRAGMA wal_checkpoint(TRUNCATE)`),
    /// so that the file alone is the whole vault and can be copied.
    public static func checkpoint(_ path: String) {
        execute(path, "PRAGMA wal_checkpoint(TRUNCATE);")
    }
}

extension VaultFile {
    /// (lookup, record) of every row of the `items` table, by id.
    public static func rows(_ path: String) -> [(lookup: [UInt8], record: [UInt8])] {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            sqlite3_close(db)
            return []
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT lookup, record FROM items ORDER BY id", -1, &statement, nil) == SQLITE_OK,
            let statement
        else { return [] }
        defer { sqlite3_finalize(statement) }
        var result: [(lookup: [UInt8], record: [UInt8])] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            func blob(_ column: Int32) -> [UInt8] {
                let count = Int(sqlite3_column_bytes(statement, column))
                guard count > 0, let pointer = sqlite3_column_blob(statement, column) else { return [] }
                return Array(UnsafeRawBufferPointer(start: pointer, count: count))
            }
            result.append((blob(0), blob(1)))
        }
        return result
    }
}

/// Another process's write transaction on a vault file, as a second SQLite
/// connection holding `BEGIN IMMEDIATE` until ``release()``.
public final class VaultWriteLock: @unchecked Sendable {
    private var db: OpaquePointer?

    /// Takes the write lock on the database at `path`.
    /// - Returns: `nil` when the file cannot be opened or is already locked.
    public init?(path: String) {
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK,
            sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK
        else {
            sqlite3_close(db)
            return nil
        }
    }

    /// Ends the transaction and closes the connection.
    public func release() {
        guard let db else { return }
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        sqlite3_close(db)
        self.db = nil
    }

    deinit { release() }
}

import CSQLite
@preconcurrency import Glibc

/// A SQLite result code that is not OK, with the library's message (which
/// never contains bound values).
struct SQLiteError: Error {
    let code: Int32
    let message: String
    /// The operating-system error behind an I/O failure (`sqlite3_system_errno`), or 0.
    var systemErrno: Int32 = 0

    var primary: Int32 { code & 0xff }

    /// Whether the disk (or the user's quota, or the file-size limit) is
    /// full: `SQLITE_FULL`, or an I/O error whose cause is `ENOSPC`,
    /// `EDQUOT` or `EFBIG` (growing `-shm` or `-wal`).
    var isDiskFull: Bool {
        primary == SQLITE_FULL || (primary == SQLITE_IOERR && [ENOSPC, EDQUOT, EFBIG].contains(systemErrno))
    }

    /// Maps to the store's errors: damaged files to `.decode`, a full disk or
    /// other I/O to `.io`, a lock held too long to `.io`.
    var keychainError: KeychainError {
        switch primary {
        case SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_FORMAT, SQLITE_SCHEMA: return .decode(message)
        case SQLITE_FULL: return .io("disk full: \(message)")
        case SQLITE_BUSY, SQLITE_LOCKED: return .io("\(KeychainError.busyPrefix): \(message)")
        case SQLITE_READONLY:
            return .io(
                "cannot write the vault: it is read-only here (a read-only file system, or no write access "
                    + "to the file or its directory): \(message)")
        case SQLITE_PERM, SQLITE_CANTOPEN: return .io("cannot write the vault: \(message)")
        case SQLITE_TOOBIG: return .param("value too large")
        // A full disk can surface as an I/O error (growing -shm or -wal) rather than SQLITE_FULL.
        case SQLITE_IOERR where [ENOSPC, EDQUOT, EFBIG].contains(systemErrno):
            return .io("disk full: \(message) (\(String(cString: strerror(systemErrno))))")
        default: return .io("\(message) (SQLite \(code))")
        }
    }
}

/// One SQLite connection; opened in `init`, closed in `deinit`.
final class SQLiteConnection {
    let handle: OpaquePointer
    /// Why a connection meant for writing was opened read-only (a full disk
    /// kept SQLite from making `-wal` and `-shm`), or nil. A write through
    /// it then reports that cause, not "read-only".
    var readOnlyCause: SQLiteError?

    /// Opens `path` for reading and writing, or only for reading.
    ///
    /// A read-only connection opens the URI `file:PATH?mode=ro`, which reads
    /// a WAL database when its `-shm` file can be read; when it cannot (a
    /// read-only file system where no `-shm` exists), it opens
    /// `file:PATH?immutable=1`, which reads the main file without locks or
    /// shared memory (<https://www.sqlite.org/uri.html>, "immutable").
    /// - Parameters:
    ///   - path: the database file.
    ///   - create: create it when missing (read-write only).
    ///   - readOnly: open without write access.
    /// - Throws: ``SQLiteError`` when the file cannot be opened.
    init(path: String, create: Bool, readOnly: Bool = false) throws(SQLiteError) {
        handle = try readOnly ? SQLiteConnection.openReadOnly(path) : SQLiteConnection.open(path, create: create)
    }

    /// `mode=ro`, else `immutable=1` (see ``init(path:create:readOnly:)``).
    private static func openReadOnly(_ path: String) throws(SQLiteError) -> OpaquePointer {
        if let db = try? open(uri(path, query: "mode=ro"), readOnly: true) {
            // The first read maps the -shm file: that is where mode=ro fails.
            if sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK { return db }
            sqlite3_close_v2(db)
        }
        return try open(uri(path, query: "immutable=1"), readOnly: true)
    }

    /// `file:` and `path` with every byte but unreserved ones and `/`
    /// percent-encoded, then `?query` (RFC 3986; SQLite URI filenames).
    static func uri(_ path: String, query: String) -> String {
        var out = "file:"
        for byte in path.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "/-._~".contains(c) {
                out.append(c)
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out + "?" + query
    }

    private static func open(_ name: String, readOnly: Bool = false, create: Bool = false) throws(SQLiteError)
        -> OpaquePointer
    {
        var db: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY | SQLITE_OPEN_URI : SQLITE_OPEN_READWRITE
        let flags = access | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message)
        }
        sqlite3_extended_result_codes(db, 1)
        // Before the first read: a lock another process holds for a moment
        // (a checkpoint, a commit, the last connection closing) is waited
        // for, not reported as "vault busy".
        sqlite3_busy_timeout(db, Vault.busyTimeoutMilliseconds)
        return db
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw error(rc) }
        return SQLiteStatement(stmt, connection: self)
    }

    func error(_ rc: Int32) -> SQLiteError {
        if rc & 0xff == SQLITE_READONLY, let readOnlyCause { return readOnlyCause }
        return SQLiteError(
            code: rc, message: String(cString: sqlite3_errmsg(handle)), systemErrno: sqlite3_system_errno(handle))
    }

    /// An integer from a one-row query such as `PRAGMA data_version`.
    func scalar(_ sql: String) throws(SQLiteError) -> Int64 {
        let s = try prepare(sql)
        guard try s.step() else { return 0 }
        return s.int(0)
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}

extension String {
    /// The text with `0` in front until it is `width` characters long.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}

/// A prepared statement; finalized in `deinit`.
final class SQLiteStatement {
    let handle: OpaquePointer
    let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds a blob; one over `Int32.max` bytes is `SQLITE_TOOBIG` (`.param`), never a trap.
    func bind(_ index: Int32, _ bytes: [UInt8]) throws(SQLiteError) {
        guard bytes.count <= Int(Int32.max) else { throw SQLiteError(code: SQLITE_TOOBIG, message: "value too large") }
        let rc = bytes.withUnsafeBytes {
            sqlite3_bind_blob(
                handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32($0.count),
                fob_sqlite_transient())
        }
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    func bind(_ index: Int32, _ value: Int64) throws(SQLiteError) {
        let rc = sqlite3_bind_int64(handle, index, value)
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    func bind(_ index: Int32, _ text: String) throws(SQLiteError) {
        guard text.utf8.count <= Int(Int32.max) else {
            throw SQLiteError(code: SQLITE_TOOBIG, message: "value too large")
        }
        let rc = sqlite3_bind_text(handle, index, text, -1, fob_sqlite_transient())
        guard rc == SQLITE_OK else { throw connection.error(rc) }
    }

    /// Advances; `true` when a row is available, `false` when done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc)
        }
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func blob(_ column: Int32) -> [UInt8] {
        let n = Int(sqlite3_column_bytes(handle, column))
        guard n > 0, let p = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// The size of the column's value in bytes, without copying it.
    func byteCount(_ column: Int32) -> Int { Int(sqlite3_column_bytes(handle, column)) }

    /// The column's bytes in place: valid until the next `step`, `reset` or
    /// another access to the same column.
    func rawBlob(_ column: Int32) -> UnsafeRawBufferPointer {
        let n = Int(sqlite3_column_bytes(handle, column))
        return UnsafeRawBufferPointer(start: n > 0 ? sqlite3_column_blob(handle, column) : nil, count: n)
    }

    func text(_ column: Int32) -> String? {
        guard let p = sqlite3_column_text(handle, column) else { return nil }
        return String(cString: p)
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}

import CSQLite
import Foundation
import Testing

@testable import FobStore

/// Edits a vault file with SQLite directly, as an attacker with a copy of
/// the file (and no key) can.
enum RawVault {
    /// Runs `sql` on the file; `true` when SQLite accepted it.
    @discardableResult
    static func execute(_ url: URL, _ sql: String) -> Bool {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { return false }
        defer { sqlite3_close(db) }
        return sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK
    }

    /// Moves everything from the WAL into the main file, so the file alone is the vault.
    static func checkpoint(_ url: URL) { execute(url, "PRAGMA wal_checkpoint(TRUNCATE);") }

    /// A copy of the vault (checkpointed first) at `destination`.
    static func copy(_ url: URL, to destination: URL) throws {
        checkpoint(url)
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.copyItem(at: url, to: destination)
    }

    /// (id, lookup, record) of every row, by id.
    static func rows(_ url: URL) -> [(id: Int64, lookup: [UInt8], record: [UInt8])] {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { return [] }
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT id, lookup, record FROM items ORDER BY id", -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        var out: [(Int64, [UInt8], [UInt8])] = []
        while sqlite3_step(stmt) == SQLITE_ROW {
            func blob(_ column: Int32) -> [UInt8] {
                let n = Int(sqlite3_column_bytes(stmt, column))
                guard n > 0, let p = sqlite3_column_blob(stmt, column) else { return [] }
                return Array(UnsafeRawBufferPointer(start: p, count: n))
            }
            out.append((sqlite3_column_int64(stmt, 0), blob(1), blob(2)))
        }
        return out
    }

    /// Runs `sql` with blobs bound to ?1, ?2, …; `true` when it completed.
    @discardableResult
    static func run(_ url: URL, _ sql: String, _ blobs: [[UInt8]]) -> Bool {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { return false }
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK else { return false }
        defer { sqlite3_finalize(stmt) }
        for (index, blob) in blobs.enumerated() {
            blob.withUnsafeBytes {
                _ = sqlite3_bind_blob(
                    stmt, Int32(index + 1), $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                    Int32($0.count), fob_sqlite_transient())
            }
        }
        return sqlite3_step(stmt) == SQLITE_DONE
    }

    /// `PRAGMA user_version`.
    static func userVersion(_ url: URL) -> Int64 {
        var db: OpaquePointer?
        guard sqlite3_open(url.path, &db) == SQLITE_OK else { return -1 }
        defer { sqlite3_close(db) }
        var stmt: OpaquePointer?
        sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &stmt, nil)
        defer { sqlite3_finalize(stmt) }
        return sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : -1
    }
}

/// Expects `body` to throw `.decode` (exit status 93).
func expectDecode(
    _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("no error: \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
    } catch let error as KeychainError {
        guard case .decode = error else {
            Issue.record("\(error) is not errSecDecode \(comment?.rawValue ?? "")", sourceLocation: sourceLocation)
            return
        }
        #expect(error.exitStatus == 93, sourceLocation: sourceLocation)
    } catch {
        Issue.record("\(error)", sourceLocation: sourceLocation)
    }
}

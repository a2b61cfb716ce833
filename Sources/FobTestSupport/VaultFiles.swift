import CSQLite
import FobStore
import Foundation

/// Looks inside a vault file with SQLite directly, the way an attacker or a
/// crash-recovery check would, without Fob's keys.
public enum VaultFile {
    /// `PRAGMA integrity_check` of the database at `path`: `"ok"` when sound,
    /// else SQLite's report (or the open error).
    public static func integrityCheck(_ path: String) -> String {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(db)
            return "open failed: \(message)"
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK, let statement else {
            return "prepare failed: \(String(cString: sqlite3_errmsg(db)))"
        }
        defer { sqlite3_finalize(statement) }
        var lines: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            if let text = sqlite3_column_text(statement, 0) { lines.append(String(cString: text)) }
        }
        return lines.isEmpty ? "no result: \(String(cString: sqlite3_errmsg(db)))" : lines.joined(separator: "\n")
    }

    /// The `record` blobs of the `items` table, in row order.
    public static func records(_ path: String) -> [[UInt8]] {
        rows(path).map(\.record)
    }

    /// The bytes of the vault file and of its `-wal`, `-shm` and `.lock`
    /// companions that exist.
    public static func allBytes(_ path: String) -> [UInt8] {
        ["", "-wal", "-shm", "-journal", ".lock"].reduce(into: [UInt8]()) { bytes, suffix in
            if let data = FileManager.default.contents(atPath: path + suffix) { bytes += data }
        }
    }

    /// Where `needle` starts in `haystack`, or `nil`.
    public static func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return start }
        }
        return nil
    }
}

/// A vault in a temporary directory for end-to-end tests: created with the
/// fast testing KDF, its password in a file, and the environment that points
/// `fob` at both (`FOB_VAULT`, `FOB_PASSWORD_FILE`).
public struct ProcessTestVault {
    /// Keeps the directory alive.
    public let directory: TemporaryDirectory
    /// The master password.
    public let password: String
    /// The vault file.
    public var path: String { directory.file("vault.db").path }
    /// A file holding the master password and a newline.
    public var passwordFile: String { directory.file("password").path }
    /// `FOB_VAULT` and `FOB_PASSWORD_FILE` for ``FobProcess``.
    public var environment: [String: String] { ["FOB_VAULT": path, "FOB_PASSWORD_FILE": passwordFile] }

    /// - Parameters:
    ///   - password: the master password.
    ///   - create: whether to create the vault (else only the password file).
    ///   - directory: where to put it (a new temporary directory by default).
    public init(
        password: String = "correct horse", create: Bool = true, directory: TemporaryDirectory = TemporaryDirectory()
    ) throws {
        self.directory = directory
        self.password = password
        try Data((password + "\n").utf8).write(to: directory.file("password"))
        if create {
            _ = try Vault.create(
                at: directory.file("vault.db"), password: .text(password), kdf: .testing, accessDefault: .any)
        }
    }

    /// Runs `fob` with ``environment`` (plus `environment`).
    public func run(
        _ arguments: [String], stdin: [UInt8] = [], environment: [String: String] = [:],
        timeout: Double = 60
    ) throws -> ProcessResult {
        try FobProcess.run(
            arguments, environment: self.environment.merging(environment) { $1 }, stdin: stdin, timeout: timeout)
    }

    /// Runs `fob` with standard input from `input`'s UTF-8 bytes.
    public func run(_ arguments: [String], input: String, environment: [String: String] = [:]) throws -> ProcessResult {
        try run(arguments, stdin: Array(input.utf8), environment: environment)
    }

    /// Opens and unlocks the vault in this process.
    public func open() throws -> Vault {
        let vault = try Vault(url: directory.file("vault.db"))
        try vault.unlock(password: .text(password))
        return vault
    }
}

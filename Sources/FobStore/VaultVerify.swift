import CSQLite
import CSodium
import FobSystem
import FoundationEssentials

/// What ``Vault/verify(at:password:)`` found.
public struct IntegrityReport: Sendable, Equatable {
    /// One damaged item: named by service and account when its record could
    /// be decrypted, else by row id and the first 4 bytes of its lookup (hex).
    public struct DamagedItem: Sendable, Equatable, CustomStringConvertible {
        /// The `items.id` of the row.
        public let rowID: Int64
        /// The first 8 hex digits of the row's `lookup` (empty when it has none).
        public let lookupPrefix: String
        /// `service "S", account "A"` when the record could be decrypted, else `nil`.
        public let name: String?
        /// What is wrong, such as "record fails authentication".
        public let problem: String

        /// `service "S", account "A" (row 3): problem`, or `row 3 (lookup 1a2b3c4d…): problem`.
        public var description: String {
            if let name { return "\(name) (row \(rowID)): \(problem)" }
            return "row \(rowID) (lookup \(lookupPrefix)…): \(problem)"
        }
    }

    /// The vault's format (`user_version`).
    public var format: Int32 = Vault.formatVersion
    /// Rows in the items table.
    public var itemCount = 0
    /// The commitment's write counter (`nil` in format 1 or when unreadable).
    public var writeCounter: UInt64?
    /// SQLite's `PRAGMA integrity_check` lines when not "ok"; empty when sound.
    public var sqliteProblems: [String] = []
    /// Differences from Fob's schema (triggers, views, other tables, missing indexes).
    public var schemaProblems: [String] = []
    /// Items whose record fails authentication or is inconsistent.
    public var damagedItems: [DamagedItem] = []
    /// Whether the whole-vault commitment matches the rows (`nil` in format 1, which has none).
    public var commitmentVerified: Bool?
    /// What is wrong with the access log beside the vault (``AccessLogReader``).
    public var accessLogProblems: [AccessLogProblem] = []
    /// The access log's entries that authenticated, or `nil` when the vault has no log.
    public var accessLogEntries: Int?
    /// What the log check noticed that is not wrong (rotation dropped old files; a write cut short).
    public var accessLogNotes: [String] = []
    /// The items whose records were decrypted (their secrets read, not shown).
    var decryptedItems: [ItemKey] = []

    /// Whether nothing is wrong.
    public var isSound: Bool {
        sqliteProblems.isEmpty && schemaProblems.isEmpty && damagedItems.isEmpty && commitmentVerified != false
            && accessLogProblems.isEmpty
    }

    /// Every problem, one line each, items named as in ``DamagedItem/description``.
    public var problems: [String] {
        sqliteProblems.map { "SQLite integrity: \($0)" } + schemaProblems.map { "schema: \($0)" }
            + damagedItems.map(\.description)
            + (commitmentVerified == false ? ["whole vault: \(Vault.commitmentMismatchText)"] : [])
            + accessLogProblems.map(\.description)
    }
}

extension Vault {
    static let commitmentMismatchText =
        "the items do not match the vault's commitment (an item was rolled back, removed, restored or added outside fob)"

    /// Checks a vault without trusting anything in it and without changing
    /// it (a format-1 vault is not migrated): SQLite's `PRAGMA
    /// integrity_check`, the exact schema, every record's authentication
    /// (and that its primary key hashes to its lookup and its class matches
    /// its key, and from format 3 that it holds a revision), and from format 2
    /// the whole-vault commitment.
    /// Then the access log beside it (``AccessLogReader``): every file's
    /// header, the chain through every entry and across files, and the head
    /// state kept in `accessLogHeadDirectory`.
    /// Every record decrypted is a read of its secret: after the check,
    /// `recording` is given the access log's key (made when the vault has
    /// none yet, from format 2) and the items decrypted, to record them.
    /// - Parameters:
    ///   - url: the vault file.
    ///   - password: the master password.
    ///   - accessLogHeadDirectory: where the log's head state is kept (``AccessLogHead``), or `nil`.
    ///   - recording: records the reads (the log's 32-byte key, the items decrypted); `nil`: nothing recorded.
    /// - Returns: the findings; ``IntegrityReport/isSound`` when there are none.
    /// - Throws: `.noSuchKeychain`; `.authFailed` for a wrong password;
    ///   `.decode` when the file is not a Fob vault or its metadata is
    ///   unreadable (nothing can be checked then); `.io`.
    public static func verify(
        at url: URL, password: SecretBytes, accessLogHeadDirectory: String? = nil,
        recording: ((_ logKey: SecretBytes, _ decrypted: [ItemKey]) -> Void)? = nil
    ) throws(KeychainError) -> IntegrityReport {
        guard exists(at: url) else { throw .noSuchKeychain(url.path) }
        let vault = try Vault(url: url, creating: false, now: Date.init)
        var report = IntegrityReport()
        report.format = try vault.readFormat()
        let lines: [String] =
            (try? vault.guarded { () throws(SQLiteError) in
                let stmt = try vault.db.prepare("PRAGMA integrity_check")
                var out: [String] = []
                while try stmt.step() { out.append(stmt.text(0) ?? "") }
                return out
            }) ?? ["cannot run the integrity check"]
        if lines != ["ok"] { report.sqliteProblems = lines.map(displaySafe) }
        report.schemaProblems = (try? vault.schemaProblems()) ?? ["cannot read the schema"]
        let meta = try vault.readMeta(format: report.format)
        let normalized = try normalize(password, checkLength: false)
        guard let vaultKey = try meta.openVaultKey(password: normalized).vaultKey else { throw .authFailed }
        try vault.inspectRows(vaultKey: vaultKey, meta: meta, into: &report)
        vault.inspectAccessLog(vaultKey: vaultKey, headDirectory: accessLogHeadDirectory, into: &report)
        // A format-1 vault is not changed by a check: it gets no log key here.
        if let recording, let logKey = try? vault.accessLogKey(vaultKey: vaultKey, create: report.format >= 2) {
            recording(logKey, report.decryptedItems)
        }
        return report
    }

    private func inspectAccessLog(vaultKey: SecretBytes, headDirectory: String?, into report: inout IntegrityReport) {
        let location = AccessLogLocation(vaultURL: url)
        let sealed: [UInt8]?
        do { sealed = try readMetaValue(Vault.accessLogKeyRow) } catch {
            report.accessLogProblems = [.unreadable(file: "meta", reason: "\(error)")]
            return
        }
        guard let sealed else {
            if location.exists { report.accessLogProblems = [.keyMissing] }
            return
        }
        let logKey: SecretBytes
        do { logKey = try Vault.openAccessLogKey(sealed, vaultKey: vaultKey) } catch {
            report.accessLogProblems = [.keyMissing]
            return
        }
        let keys = AccessLogKeys(logKey: logKey)
        let head = headDirectory.flatMap { AccessLogHead.read(AccessLogHead.path(directory: $0, keys: keys)) }
        let log = AccessLogReader.read(location, keys: keys, head: head)
        report.accessLogProblems = log.problems
        report.accessLogNotes = log.notes
        report.accessLogEntries = log.records.count
    }

    private func inspectRows(vaultKey: SecretBytes, meta: VaultMeta, into report: inout IntegrityReport)
        throws(KeychainError)
    {
        let keys = VaultKeys(vaultKey: vaultKey)
        let v1Record = Crypto.subkey(of: vaultKey, id: VaultKeys.ID.recordV1)
        var elements = Set<Digest>()
        var accumulator = Digest.zero
        var consistent = true
        do {
            let stmt = try db.prepare("SELECT id, lookup, record FROM items ORDER BY id")
            while try stmt.step() {
                report.itemCount += 1
                let id = stmt.int(0)
                let lookup = stmt.rawBlob(1)
                let record = stmt.rawBlob(2)
                let prefix = HexText.bytes(lookup.prefix(4))
                func damaged(_ problem: String, _ name: String? = nil) {
                    report.damagedItems.append(.init(rowID: id, lookupPrefix: prefix, name: name, problem: problem))
                }
                guard lookup.count == 32 else {
                    damaged("lookup is \(lookup.count) bytes, not 32")
                    consistent = false
                    continue
                }
                guard record.count >= Crypto.nonceBytes + Crypto.tagBytes, record.count <= Vault.maxRecordBytes else {
                    damaged("record of \(record.count) bytes is out of bounds")
                    consistent = false
                    continue
                }
                let element = Vault.element(lookup: lookup, record: record, key: keys.element)
                if !elements.insert(element).inserted { consistent = false }
                accumulator = accumulator ^ element
                if let problem = inspect(
                    record: record, lookup: lookup, format: meta.format, keys: keys, v1Record: v1Record,
                    decrypted: &report.decryptedItems)
                {
                    damaged(problem.text, problem.name)
                }
            }
        } catch {
            report.sqliteProblems.append("cannot read every item: \(error.message)")
            consistent = false
        }
        guard meta.format >= 2, let stored = meta.integrity else { return }
        let counter = Vault.readLE64(stored[0..<8])
        report.writeCounter = counter
        let expected = Vault.integrityValue(
            counter: counter, count: report.itemCount, accumulator: accumulator, key: keys.commitment)
        report.commitmentVerified = consistent && sodium_memcmp(expected, stored, expected.count) == 0
    }

    /// Why one record is damaged, with its name when it could be decrypted; `nil` when sound.
    private func inspect(
        record: UnsafeRawBufferPointer, lookup: UnsafeRawBufferPointer, format: Int32,
        keys: VaultKeys, v1Record: SecretBytes, decrypted: inout [ItemKey]
    ) -> (text: String, name: String?)? {
        let candidates: [(Accessibility?, SecretBytes)] =
            format == 1 ? [(nil, v1Record)] : keys.recordKeys.map { ($0.0, $0.1) }
        let ad = Vault.recordAD(lookup, format: format)
        for (accessible, key) in candidates {
            let outcome: Result<Item?, KeychainError>
            do {
                outcome = .success(
                    try scratch.withBuffer(count: record.count - Crypto.nonceBytes - Crypto.tagBytes) {
                        plain throws(KeychainError) -> Item? in
                        guard Crypto.open(record, ad: ad, key: key, into: plain) else { return nil }
                        return try RecordCodec.decode(UnsafeRawBufferPointer(plain), withSecret: false)
                    })
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(nil): continue
            case .failure(let error): return ("record authenticates but cannot be read: \(error)", nil)
            case .success(let item?):
                decrypted.append(ItemKey(item))
                if let accessible, item.accessible != accessible {
                    return (
                        "sealed under the \(accessible.rawValue) key but marked \(item.accessible.rawValue)",
                        item.displayName
                    )
                }
                guard Vault.lookup(for: item, keys: keys).elementsEqual(lookup) else {
                    return ("record does not match its lookup", item.displayName)
                }
                if format >= 3, item.revision == 0 { return ("record has no revision", item.displayName) }
                return nil
            }
        }
        return ("record fails authentication", nil)
    }
}

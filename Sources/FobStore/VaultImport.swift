import CSQLite
import FoundationEssentials
@preconcurrency import Glibc

/// One change of an import plan, applied by ``Vault/applyImport(_:)``.
public enum ImportChange: Sendable {
    /// Adds the item with the dates it carries (an import keeps the source's
    /// creation and modification dates), at revision 1 or at the revision it
    /// carries when not 0 (an item put back after its delete, at the
    /// revision after its last).
    case add(Item)
    /// Replaces the stored item with the primary key of `existing` by `with`
    /// (which keeps its own dates and may have another key).
    case replace(existing: Item, with: Item)
    /// Deletes the stored item with the primary key of `existing`, which
    /// must still have the revision `existing` carries (when not 0): a
    /// deletion that travelled from another device (sync).
    case delete(existing: Item)
}

extension Vault {
    /// Applies an import plan in one `BEGIN IMMEDIATE` transaction: every
    /// change or none.
    /// - Parameter changes: adds, replacements and deletions; an item added under a
    ///   key already stored (or added twice) fails the whole plan.
    ///   - progress: called with the number of changes prepared so far, every 250 and at the end.
    ///   Added items get revision 1, or the revision they carry (an undone
    ///   delete gives the one after the deleted item's); a replacement the revision after the
    ///   one of `existing`, which the stored item must still have (when
    ///   `existing` carries one, that is not 0).
    /// - Throws: `.duplicateItem` for an added key that exists (nothing is
    ///   changed); `.itemNotFound` when an item to replace is gone;
    ///   `.revisionMismatch` when it changed since the plan read it;
    ///   `.param` for an item over a limit or without a secret;
    ///   `.interactionNotAllowed` when locked; `.decode`; `.io`.
    public func applyImport(_ changes: [ImportChange], progress: ((Int) -> Void)? = nil) throws(KeychainError) {
        let keys = try unlockedKeys()
        // Seal outside the transaction: it is the slow part.
        var sealed: [(old: Item?, item: Item, lookup: [UInt8], record: [UInt8])] = []
        sealed.reserveCapacity(changes.count)
        for change in changes {
            var (old, item): (Item?, Item)
            switch change {
            case .add(let new): (old, item) = (nil, new)
            case .replace(let existing, let new): (old, item) = (existing, new)
            case .delete(let existing):
                sealed.append((existing, existing, [], []))
                continue
            }
            // A new item is revision 1, unless it carries one: an item put
            // back after its delete (an undo) carries the one after its last,
            // so its revision line goes on rather than starting again. A
            // replacement takes the next revision of the one the plan read
            // (checked again in the transaction).
            if old != nil || item.revision == 0 {
                item.revision = try Vault.nextRevision(after: old?.revision ?? 0)
            }
            try Vault.check(item)
            let lookup = Vault.lookup(for: item, keys: keys)
            sealed.append((old, item, lookup, try Vault.seal(item, lookup: lookup, keys: keys)))
            if sealed.count % 250 == 0 { progress?(sealed.count) }
        }
        progress?(sealed.count)
        try write { (keys) throws(KeychainError) in
            for row in sealed {
                if let old = row.old, row.record.isEmpty {
                    guard let stored = try rows(matching: ItemQuery.exact(for: old), withSecrets: false).first else {
                        throw .itemNotFound(old.displayName)
                    }
                    try Vault.checkRevision(of: stored.item, expected: old.revision == 0 ? nil : old.revision)
                    try deleteRow(id: stored.id, lookup: stored.lookup)
                    noteWrite(.deleted(stored.item))
                } else if let old = row.old {
                    guard let stored = try rows(matching: ItemQuery.exact(for: old), withSecrets: false).first else {
                        throw .itemNotFound(old.displayName)
                    }
                    var (item, record) = (row.item, row.record)
                    if stored.item.revision != old.revision {
                        // A plan that read the item at a known revision replaces
                        // only that revision; one that knew none takes the next.
                        guard old.revision == 0 else {
                            throw .revisionMismatch(
                                old.displayName, expected: old.revision, current: stored.item.revision)
                        }
                        item.revision = try Vault.nextRevision(after: stored.item.revision)
                        record = try Vault.seal(item, lookup: row.lookup, keys: keys)
                    }
                    try replaceRow(
                        id: stored.id, old: stored.lookup, lookup: row.lookup, record: record,
                        name: item.displayName, keys: keys)
                    noteWrite(.changed(old: stored.item, new: item))
                } else {
                    try insertRow(lookup: row.lookup, record: row.record, name: row.item.displayName, keys: keys)
                    noteWrite(.added(row.item))
                }
            }
        }
    }

    /// Every item with its secret, sorted by service then account (for an export).
    /// - Throws: `.decode`, `.interactionNotAllowed`.
    public func allItemsWithSecrets() throws(KeychainError) -> [Item] {
        do { return try items(matching: ItemQuery(itemClass: nil), withSecrets: true) } catch .itemNotFound {
            return []
        }
    }

    /// Writes a consistent copy of the vault file to `destination` with
    /// SQLite's online backup API (`sqlite3_backup_init`/`step`/`finish`,
    /// <https://www.sqlite.org/backup.html>), while other connections may
    /// write; the copy is still encrypted and opens with the same master
    /// password. Creates the file with mode 0600 and refuses to overwrite one.
    /// Needs no password: the pages are copied as they are.
    ///
    /// The copy records, in its `meta` row `backup_of`, the real path of the
    /// vault it copies. Opened anywhere else (``isBackupCopy``), it is
    /// read-only and the rollback watermark is not applied to it; put back at
    /// that path (a copy renamed over the vault), it is the vault again and
    /// goes through the watermark like any old copy. ``restore(to:)`` puts
    /// it back on purpose.
    /// - Throws: `.io` when a file exists at `destination` or it cannot be
    ///   written; `.decode` for a damaged source.
    public func backup(to destination: URL) throws(KeychainError) {
        try Vault.createPrivateFile(at: destination)
        do throws(KeychainError) {
            let target = try guarded { () throws(SQLiteError) in
                try SQLiteConnection(path: destination.path, create: false)
            }
            try Vault.copyPages(from: db, to: target)
            try guarded { () throws(SQLiteError) in
                let stmt = try target.prepare("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)")
                try stmt.bind(1, Vault.backupOfRow)
                try stmt.bind(2, Array(Vault.realPath(url).utf8))
                try stmt.step()
            }
        } catch {
            for suffix in ["", "-wal", "-shm", "-journal"] { unlink(destination.path + suffix) }
            throw error
        }
        chmod(destination.path, 0o600)
    }

    /// Puts this vault (a backup) back as the vault at `destination`: its
    /// pages are copied over the file there with SQLite's backup API (which
    /// takes the other connections' locks and their write-ahead log into
    /// account), or into a new 0600 file, and the copy's `backup_of` row is
    /// dropped. Discard any ``Vault`` open on `destination` in this process
    /// afterwards. The rollback watermark is the caller's to lower.
    /// - Throws: `.io` when `destination` cannot be written; `.decode` for a damaged file.
    public func restore(to destination: URL) throws(KeychainError) {
        if !Vault.exists(at: destination) { try Vault.createPrivateFile(at: destination) }
        let target = try guarded { () throws(SQLiteError) in
            try SQLiteConnection(path: destination.path, create: false)
        }
        sqlite3_busy_timeout(target.handle, Vault.busyTimeoutMilliseconds)
        try Vault.copyPages(from: db, to: target)
        try guarded { () throws(SQLiteError) in
            let stmt = try target.prepare("DELETE FROM meta WHERE name = ?")
            try stmt.bind(1, Vault.backupOfRow)
            try stmt.step()
        }
        chmod(destination.path, 0o600)
    }

    /// The `meta` row naming the vault a backup copies.
    static let backupOfRow = "backup_of"

    /// Whether `a` and `b` name one file (same device and inode).
    public static func sameFile(_ a: URL, _ b: URL) -> Bool {
        var sa = stat()
        var sb = stat()
        return stat(a.path, &sa) == 0 && stat(b.path, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino
    }

    /// `path` with symbolic links and `..` resolved, or as given when it cannot be.
    static func realPath(_ url: URL) -> String {
        guard let resolved = Glibc.realpath(url.path, nil) else { return url.standardizedFileURL.path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Marks a vault just opened as a backup when its `backup_of` row names
    /// another file than its own: read-only (`PRAGMA query_only`), a write
    /// failing as `.io` that names `fob restore`.
    func markBackupCopy() throws(KeychainError) {
        guard let value = try readMetaValue(Vault.backupOfRow), let source = String(bytes: value, encoding: .utf8),
            source != Vault.realPath(url)
        else { return }
        isBackupCopy = true
        try guarded { () throws(SQLiteError) in try db.execute("PRAGMA query_only=ON") }
        db.readOnlyCause = SQLiteError(
            code: SQLITE_PERM,
            message: "\(url.path) is a backup of \(source) and opens read-only; 'fob restore' puts it back")
    }

    /// Copies every page of `source` into `target` (the online backup API).
    static func copyPages(from source: SQLiteConnection, to target: SQLiteConnection) throws(KeychainError) {
        guard let backup = sqlite3_backup_init(target.handle, "main", source.handle, "main") else {
            throw KeychainError.io("cannot start the backup: \(String(cString: sqlite3_errmsg(target.handle)))")
        }
        var rc: Int32
        repeat {
            rc = sqlite3_backup_step(backup, 256)
            if rc == SQLITE_BUSY || rc == SQLITE_LOCKED { sqlite3_sleep(20) }
        } while rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED
        let finish = sqlite3_backup_finish(backup)
        guard rc == SQLITE_DONE, finish == SQLITE_OK else {
            throw SQLiteError(code: rc == SQLITE_DONE ? finish : rc, message: String(cString: sqlite3_errstr(rc)))
                .keychainError
        }
    }
}

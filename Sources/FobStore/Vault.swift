import CSQLite
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// An encrypted item store with Keychain semantics in one SQLite file.
///
/// File format 3 (see docs/vault-format.md): `PRAGMA application_id` =
/// ``applicationID``, `user_version` = ``formatVersion``; table `meta`
/// (Argon2id parameters, 16-byte salt, the sealed 32-byte vault key, the
/// whole-vault commitment) and table `items(id, lookup UNIQUE, record)`, where
/// `lookup` is a keyed BLAKE2b-256 of the primary key and `record` is
/// nonce (24) ‖ XChaCha20-Poly1305 ciphertext ‖ tag (16) under the key of the
/// item's accessibility class, with `lookup ‖ formatVersion` as associated
/// data. Every record carries the item's revision (``Item/revision``). The schema must be exactly Fob's: a trigger, view, extra table or
/// missing index is refused as `.decode`.
///
/// The set of items is authenticated as a whole (see ``IntegrityState``):
/// unlocking verifies every row against a keyed commitment in `meta`; later
/// reads check each row they touch against the verified state, and verify
/// the whole file again only when another connection has committed
/// (`PRAGMA data_version`). Every write updates the commitment in its own
/// transaction. A record rolled back, a row deleted or brought back, or a
/// write reverted by the file is `.decode`, never data.
///
/// Several processes may use one vault at once: writes run in
/// `BEGIN IMMEDIATE` transactions under a busy timeout, in WAL mode with
/// `synchronous=FULL`.
///
/// An instance is one connection and must stay on one thread at a time.
public final class Vault {
    /// `PRAGMA application_id` of a Fob vault: "Fob!" in ASCII.
    public static let applicationID: Int32 = 0x466F_6221
    /// `PRAGMA user_version`: the vault format this build writes. Format 3
    /// added the per-item revision (``Item/revision``, record tag 29); a
    /// format-2 build refuses it, so that no write leaves a revision behind.
    public static let formatVersion: Int32 = 3
    /// The formats this build opens; formats 1 and 2 are migrated to 3 by the first ``unlock(password:)``.
    public static let readableFormats: ClosedRange<Int32> = 1...3
    /// The longest master password accepted: 65,536 bytes of UTF-8.
    public static let maxPasswordBytes = 65_536
    /// How long any statement waits for a lock another process holds (a write,
    /// a checkpoint, the last connection closing) before failing as busy: milliseconds.
    public static let busyTimeoutMilliseconds: Int32 = 30_000
    /// The most bytes an item's attributes other than the secret may take in
    /// all (service, account, access group, label, comment, generic): 1 MiB.
    public static let maxAttributeBytes = 1 << 20
    /// The largest `record` blob, in bytes: a 1 MiB secret, 1 MiB of
    /// attributes, 64 KiB for the layout, nonce and tag. Larger records are
    /// refused on write (`.param`) and, read from a file, before anything is
    /// allocated for them (`.decode`).
    public static let maxRecordBytes = Item.maxSecretBytes + maxAttributeBytes + (64 << 10)

    /// The vault file.
    public let url: URL
    let db: SQLiteConnection
    /// Whether this file is a backup (``backup(to:)``) opened away from the
    /// vault it copies: read-only, and not held to the rollback watermark.
    public internal(set) var isBackupCopy = false
    let now: @Sendable () -> Date
    var keys: VaultKeys? { didSet { contentGeneration &+= 1 } }
    /// The metadata authenticated by the last unlock (its KDF settings are
    /// the ones `changePassword` keeps; its sealed key tells a rotation elsewhere).
    var unlockedMeta: VaultMeta?
    /// The verified commitment; `nil` when it must be verified again.
    var integrity: IntegrityState? { didSet { contentGeneration &+= 1 } }
    /// Changes whenever what this vault would list may have changed: a write
    /// through this instance, another process's commit once a read has seen
    /// it (``revalidate()`` does), a lock, a partial lock or an unlock. An
    /// unchanged number means that a listing read earlier, under the same
    /// number, is still what a new read would return. Starts at 0.
    public private(set) var contentGeneration: UInt64 = 0
    /// How many item records this instance has decrypted (each successful
    /// open of a record, whatever the detail kept): a test or benchmark reads
    /// it before and after an operation to count the records it opened.
    public internal(set) var recordsDecrypted = 0
    /// The items the last successful write transaction of this instance
    /// added, changed (renamed too) or deleted, in the order it wrote them,
    /// each without its secret; empty after a failed write. Replaced by each
    /// write (``add(_:)``, ``save(service:account:accessGroup:itemClass:secret:attributes:)``,
    /// ``update(matching:with:)``, ``delete(matching:)``, ``applyImport(_:progress:)``,
    /// ``deleteItems(busyTimeoutMilliseconds:where:)``), so that a caller
    /// can tell what it changed without reading the items back.
    public internal(set) var lastWrite: [ItemWrite] = []
    var journal: IntegrityJournal?
    /// The highest write counter this vault has verified or written since its
    /// last full lock: a file whose counter falls below it was put back to an
    /// earlier state while in use.
    var highestCounter: UInt64?
    /// (st_dev, st_ino) of the file at unlock.
    var identity: (dev_t, ino_t)?
    let scratch = ScratchBuffer()
    var statements: [String: SQLiteStatement] = [:]

    /// The default vault: `$XDG_DATA_HOME/fob/vault.db`, else `~/.local/share/fob/vault.db`.
    /// - Parameter environment: the process environment (injectable for tests).
    public static func defaultURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("fob/vault.db")
        }
        let home = environment["HOME"] ?? PathText.homeDirectory(environment: environment)
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/fob/vault.db")
    }

    /// Whether a file exists at `url`.
    public static func exists(at url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path)
    }

    // MARK: - Create and open

    /// Creates a new vault (format ``formatVersion``), unlocked, with a random
    /// vault key sealed by the Argon2id key of `password` and the commitment
    /// of the empty set.
    ///
    /// Creates missing parent directories with mode 0700 and the file with
    /// mode 0600 whatever the umask; refuses to overwrite anything.
    /// - Parameters:
    ///   - password: the master password (normalised to NFC UTF-8); 1 to ``maxPasswordBytes`` bytes.
    ///   - kdf: Argon2id costs; ``KDFParameters/default`` unless given.
    ///   - now: the clock for item dates.
    ///   - accessDefault: the vault's access default (``newVaultAccessDefault`` unless given).
    /// - Throws: `.param` for an empty or too long password or KDF limits
    ///   outside ``KDFParameters/isValid``; `.io` if a file exists at `url` or
    ///   cannot be written.
    public static func create(
        at url: URL, password: SecretBytes, kdf: KDFParameters = .default,
        now: @escaping @Sendable () -> Date = Date.init, accessDefault: AccessRule.Mode = newVaultAccessDefault
    ) throws(KeychainError) -> Vault {
        Sodium.ensureInitialised()
        let normalized = try normalize(password)
        guard kdf.isValid else { throw .param("KDF limits out of range") }
        try makeParentDirectories(of: url)
        try createPrivateFile(at: url)
        do {
            let vault = try Vault(url: url, creating: true, now: now)
            let salt = Sodium.randomBytes(Crypto.saltBytes)
            let passwordKey = try Crypto.deriveKey(
                password: normalized, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
            let vaultKey = SecretBytes.random(count: Crypto.keyBytes)
            let keys = VaultKeys(vaultKey: vaultKey)
            try vault.guarded { () throws(SQLiteError) in
                try vault.db.execute(
                    """
                    PRAGMA journal_mode=WAL;
                    BEGIN IMMEDIATE;
                    PRAGMA application_id=\(applicationID);
                    PRAGMA user_version=\(formatVersion);
                    \(schemaSQL)
                    """)
                try vault.writeMeta(salt: salt, kdf: kdf, vaultKey: vaultKey, passwordKey: passwordKey)
                try vault.writeMetaValues([
                    ("integrity", integrityValue(counter: 0, count: 0, accumulator: .zero, key: keys.commitment)),
                    ("access_default", accessDefaultValue(accessDefault, key: keys.commitment)),
                    // Made now, so the first command that records a read does not write the vault.
                    (accessLogKeyRow, sealAccessLogKey(SecretBytes.random(count: Crypto.keyBytes), vaultKey: vaultKey)),
                ])
                try vault.db.execute("COMMIT")
            }
            try vault.adopt(
                keys: keys, meta: vault.readMeta(format: formatVersion),
                state: .empty(dataVersion: vault.dataVersion()))
            return vault
        } catch {
            for suffix in ["", "-wal", "-shm"] { unlink(url.path + suffix) }
            throw error
        }
    }

    /// Opens an existing vault, locked, and checks what can be checked
    /// without the password: the application id, the format (1 to 3), the
    /// exact schema, and the metadata's sizes and KDF limits.
    /// - Throws: `.noSuchKeychain` if there is no file; `.decode` if it is not
    ///   a Fob vault, is damaged, has another schema, KDF settings outside
    ///   ``KDFParameters/isValid``, or a newer format; `.io` if it cannot be read.
    public convenience init(url: URL, now: @escaping @Sendable () -> Date = Date.init) throws(KeychainError) {
        guard Vault.exists(at: url) else { throw .noSuchKeychain(url.path) }
        try self.init(url: url, creating: false, now: now)
        let format = try readFormat()
        try checkSchema()
        _ = try readMeta(format: format)
        try markBackupCopy()
    }

    init(url: URL, creating: Bool, now: @escaping @Sendable () -> Date) throws(KeychainError) {
        Sodium.ensureInitialised()
        self.url = url
        self.now = now
        var status = stat()
        if stat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
            throw .io(
                "\(url.path) is a directory, not a vault file; name the vault file itself with --vault or FOB_VAULT")
        }
        do {
            let readOnly = !creating && !Vault.canWrite(url)
            var connection = try SQLiteConnection(path: url.path, create: false, readOnly: readOnly)
            // On a full disk the first read cannot make `-wal` and `-shm`:
            // the vault is opened read-only instead, as on a read-only file
            // system, so every item can still be read (a write then fails
            // saying the disk is full).
            if !creating, !readOnly {
                do { try connection.execute("PRAGMA schema_version") } catch  where error.isDiskFull {
                    connection = try SQLiteConnection(path: url.path, create: false, readOnly: true)
                    connection.readOnlyCause = error
                }
            }
            // wal_autocheckpoint=1: every commit is copied into the main file
            // (a passive checkpoint), so a copy of vault.db alone, taken while
            // an agent or a terminal UI keeps the vault open, holds every write.
            try connection.execute(
                "PRAGMA synchronous=FULL; PRAGMA secure_delete=ON; PRAGMA trusted_schema=OFF; PRAGMA wal_autocheckpoint=1;"
            )
            db = connection
        } catch {
            throw error.keychainError
        }
    }

    deinit { keys = nil }

    /// Whether this process can write the vault: the file and its directory
    /// (where SQLite makes `-wal` and `-shm`) are writable, on a file system
    /// mounted read-write. A vault that is not (a mounted backup, a file of
    /// mode 0400) is opened read-only: it can be read and listed, and a
    /// write fails as `.io` naming the cause.
    static func canWrite(_ url: URL) -> Bool {
        let directory = url.deletingLastPathComponent().path
        return access(url.path, W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK) == 0
    }

    // MARK: - Keychain operations

    /// Adds an item (`SecItemAdd`).
    /// - Throws: `.duplicateItem` if an item with the same class, access group,
    ///   service and account exists; `.param` for a missing or oversized secret
    ///   or attributes, or a reserved access group (`fob.sync`);
    ///   `.interactionNotAllowed` when locked (or for a
    ///   `whenUnlocked` item while partially locked); `.decode`; `.io` when the disk is full.
    public func add(_ item: Item) throws(KeychainError) {
        try add(contentsOf: [item])
    }

    /// Adds several items in one transaction (an import): all or none.
    /// - Throws: `.duplicateItem` for the first item whose key exists (nothing is added);
    ///   `.param`, `.interactionNotAllowed`, `.decode`, `.io` as ``add(_:)``.
    public func add(contentsOf items: [Item]) throws(KeychainError) {
        let keys = try unlockedKeys()
        let stamp = now()
        var sealed: [(lookup: [UInt8], record: [UInt8], name: String, item: Item)] = []
        sealed.reserveCapacity(items.count)
        for var item in items {
            try Vault.check(item)
            try Vault.checkNotReserved(item.accessGroup)
            item.created = stamp
            item.modified = stamp
            item.revision = 1
            let lookup = Vault.lookup(for: item, keys: keys)
            sealed.append((lookup, try Vault.seal(item, lookup: lookup, keys: keys), item.displayName, item))
        }
        try write { (keys) throws(KeychainError) in
            for row in sealed {
                try insertRow(lookup: row.lookup, record: row.record, name: row.name, keys: keys)
                noteWrite(.added(row.item))
            }
        }
    }

    /// Items matching `query` (`SecItemCopyMatching`), sorted by service then
    /// account. While partially locked, only `afterFirstUnlock` items are seen.
    /// - Parameters:
    ///   - limit: `.one` returns the first match only.
    ///   - withSecrets: whether to decrypt the secret into each item.
    /// - Throws: `.itemNotFound` when nothing matches; `.decode` for a record
    ///   that fails authentication or items that differ from the commitment;
    ///   `.interactionNotAllowed` when locked.
    public func items(matching query: ItemQuery, limit: MatchLimit = .all, withSecrets: Bool = false)
        throws(KeychainError) -> [Item]
    {
        let found = try rows(matching: query, withSecrets: withSecrets)
        guard !found.isEmpty else { throw .itemNotFound(query.displayName) }
        // Sorts positions by the primary-key texts rather than moving whole
        // items around (an item is a large value: a listing spent a quarter
        // of its time copying them).
        let keys = found.map { ($0.item.service, $0.item.account, $0.item.accessGroup) }
        let order = keys.indices.sorted { Vault.ordering(keys[$0], keys[$1]) }
        return limit == .one ? [found[order[0]].item] : order.map { found[$0].item }
    }

    /// The one item with this primary key, with its secret.
    /// - Throws: `.itemNotFound`, `.decode`, `.interactionNotAllowed`.
    public func item(service: String, account: String, accessGroup: String = "") throws(KeychainError) -> Item {
        try items(
            matching: .key(service: service, account: account, accessGroup: accessGroup), limit: .one, withSecrets: true
        )[0]
    }

    /// Every item (that can be opened), without secrets, sorted by service
    /// then account; empty when there are none.
    /// - Throws: `.decode`, `.interactionNotAllowed`.
    public func allItems() throws(KeychainError) -> [Item] {
        do { return try items(matching: ItemQuery(itemClass: nil)) } catch .itemNotFound { return [] }
    }

    /// Changes every item matching `query` (`SecItemUpdate`) in one
    /// transaction; each changed item's ``Item/revision`` grows by one. Changes
    /// of the service, account or access group rename the item (`fob mv`),
    /// keeping everything else: secret, attributes, creation date, persistent ID.
    /// - Returns: how many items changed.
    /// - Throws: `.itemNotFound` when nothing matches; `.revisionMismatch`
    ///   when ``ItemChanges/expectedRevision`` is given and a matching item
    ///   has another revision (nothing changes); `.duplicateItem` when a
    ///   changed primary key collides; `.param`, `.interactionNotAllowed`, `.decode`, `.io`.
    @discardableResult
    public func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        if let secret = changes.secret, secret.count > Item.maxSecretBytes { throw Vault.secretTooLarge }
        if let group = changes.accessGroup { try Vault.checkNotReserved(group) }
        return try write { (keys) throws(KeychainError) -> Int in
            let matches = try rows(matching: query, withSecrets: true)
            guard !matches.isEmpty else { throw .itemNotFound(query.displayName) }
            for row in matches { try Vault.checkRevision(of: row.item, expected: changes.expectedRevision) }
            let stamp = now()
            for row in matches { try rewrite(row, with: changes, now: stamp, keys: keys) }
            return matches.count
        }
    }

    /// Deletes every item matching `query` (`SecItemDelete`) in one transaction.
    /// - Returns: how many items were deleted.
    /// - Throws: `.itemNotFound` when nothing matches; `.revisionMismatch`
    ///   when ``ItemQuery/expectedRevision`` is given and a matching item has
    ///   another revision (nothing is deleted); `.interactionNotAllowed`, `.decode`, `.io`.
    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        try write { (_) throws(KeychainError) -> Int in
            let matches = try rows(matching: query, withSecrets: false)
            guard !matches.isEmpty else { throw .itemNotFound(query.displayName) }
            for row in matches { try Vault.checkRevision(of: row.item, expected: query.expectedRevision) }
            for row in matches {
                try deleteRow(id: row.id, lookup: row.lookup)
                noteWrite(.deleted(row.item))
            }
            return matches.count
        }
    }

    /// What ``save(service:account:accessGroup:itemClass:secret:attributes:)`` did.
    public enum SaveOutcome: Sendable, Equatable { case added, updated }

    /// Adds the item (revision 1), or updates it (its revision + 1) when one
    /// with this primary key exists, in one `BEGIN IMMEDIATE` transaction:
    /// never reports a duplicate, also when processes race.
    /// - Parameters:
    ///   - secret: the new secret, up to 1 MiB.
    ///   - attributes: other attributes to set (kind defaults to `.password` for a new item; its key fields are ignored);
    ///     its ``ItemChanges/expectedRevision`` makes the save conditional.
    /// - Throws: `.revisionMismatch` when an expected revision is given and
    ///   the item has another (0: when it exists); `.itemNotFound` when one
    ///   other than 0 is given and the item is missing; `.param`,
    ///   `.interactionNotAllowed`, `.io`, `.decode`.
    @discardableResult
    public func save(
        service: String, account: String, accessGroup: String = "", itemClass: ItemClass = .genericPassword,
        secret: SecretBytes, attributes: ItemChanges = ItemChanges()
    ) throws(KeychainError) -> SaveOutcome {
        var changes = attributes
        changes.service = nil
        changes.account = nil
        changes.accessGroup = nil
        changes.secret = secret
        try Vault.checkNotReserved(accessGroup)
        let query = ItemQuery(itemClass: itemClass, service: service, account: account, accessGroup: accessGroup)
        return try write { (keys) throws(KeychainError) -> SaveOutcome in
            let stamp = now()
            if let row = try rows(matching: query, withSecrets: true).first {
                try Vault.checkRevision(of: row.item, expected: changes.expectedRevision)
                try rewrite(row, with: changes, now: stamp, keys: keys)
                return .updated
            }
            if let expected = changes.expectedRevision, expected != 0 { throw .itemNotFound(query.displayName) }
            var item = Item(
                itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
                created: stamp, modified: stamp, secret: secret)
            changes.apply(to: &item, now: stamp)
            item.revision = 1
            try Vault.check(item)
            let lookup = Vault.lookup(for: item, keys: keys)
            try insertRow(
                lookup: lookup, record: Vault.seal(item, lookup: lookup, keys: keys), name: item.displayName, keys: keys
            )
            noteWrite(.added(item))
            return .added
        }
    }

    /// Applies `changes` to a stored row and writes it back under its
    /// (possibly new) lookup; a key that collides is `.duplicateItem`.
    private func rewrite(_ row: Row, with changes: ItemChanges, now stamp: Date, keys: VaultKeys) throws(KeychainError)
    {
        var item = row.item
        changes.apply(to: &item, now: stamp)
        item.revision = try Vault.nextRevision(after: row.item.revision)
        try Vault.check(item)
        let lookup = Vault.lookup(for: item, keys: keys)
        try replaceRow(
            id: row.id, old: row.lookup, lookup: lookup, record: Vault.seal(item, lookup: lookup, keys: keys),
            name: item.displayName, keys: keys)
        noteWrite(.changed(old: row.item, new: item))
    }

    /// Refuses a reserved access group (``ItemQuery/reservedAccessGroups``)
    /// for an item that an add, save or update would write: only sync
    /// writes there, through ``applyImport(_:progress:)``.
    /// - Throws: `.param` naming the group.
    static func checkNotReserved(_ accessGroup: String) throws(KeychainError) {
        guard ItemQuery.reservedAccessGroups.contains(accessGroup) else { return }
        throw .param("the access group \"\(accessGroup)\" is reserved for Fob's own records (sync's state)")
    }

    /// The revision a write gives an item stored at `revision` (1 for a new item, at 0).
    /// - Throws: `.param` at the last revision a `UInt64` holds (never reached in practice).
    static func nextRevision(after revision: UInt64) throws(KeychainError) -> UInt64 {
        guard revision < UInt64.max else { throw .param("the item has reached its last revision") }
        return revision + 1
    }

    /// Throws `.revisionMismatch` unless `expected` is `nil` or `item`'s revision.
    static func checkRevision(of item: Item, expected: UInt64?) throws(KeychainError) {
        guard let expected, expected != item.revision else { return }
        throw .revisionMismatch(item.displayName, expected: expected, current: item.revision)
    }

    /// SQLite's `PRAGMA data_version`: changes when another connection (or
    /// process) commits, so a viewer can poll it cheaply to refresh.
    /// - Throws: `.io`, `.decode`.
    public func dataVersion() throws(KeychainError) -> Int64 {
        try guarded { () throws(SQLiteError) in
            let stmt = try cached("PRAGMA data_version")
            defer { stmt.reset() }
            guard try stmt.step() else { return 0 }
            return stmt.int(0)
        }
    }

    /// The number of stored items (readable without unlocking; not authenticated).
    public func count() throws(KeychainError) -> Int {
        try guarded { () throws(SQLiteError) in Int(try db.scalar("SELECT count(*) FROM items")) }
    }

    /// Runs `body` while holding an exclusive advisory lock (`flock`) on
    /// `<vault>.lock` (mode 0600), so that only one process at a time does
    /// the work (for example one OAuth refresh per vault). The lock file is
    /// opened with ``PrivateFile/open(_:truncate:create:)``: a symbolic link
    /// or non-regular file in its place is refused, never followed.
    /// - Throws: `.io` if the lock file cannot be opened (or is a symbolic
    ///   link, FIFO or device), or what `body` throws.
    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        try Vault.withExclusiveLock(vaultURL: url, body)
    }

    /// ``withExclusiveLock(_:)`` for the vault file at `vaultURL`, without
    /// an open vault: it touches only the lock file, so a background thread
    /// may hold the lock while another thread uses the vault.
    /// - Parameters:
    ///   - vaultURL: the vault file (the lock file is `<vault>.lock`).
    ///   - body: the work done while holding the lock.
    /// - Throws: as ``withExclusiveLock(_:)``; `.noSuchKeychain` when neither
    ///   the lock file's directory nor the vault exists.
    public static func withExclusiveLock<R>(vaultURL url: URL, _ body: () throws -> R) throws -> R {
        let path = url.path + ".lock"
        let fd: Int32
        do {
            fd = try PrivateFile.open(path)
        } catch {
            // No directory for the lock file: there is no vault either (`fob sync join` before `fob init`).
            if access(url.path, F_OK) != 0 { throw KeychainError.noSuchKeychain(url.path) }
            throw KeychainError.io(error.description)
        }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                throw KeychainError.io("cannot lock \(path): \(String(cString: strerror(errno)))")
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

}

@available(*, unavailable)
extension Vault: Sendable {}

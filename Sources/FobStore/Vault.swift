@preconcurrency import Glibc
import CSQLite
import Foundation

/// An encrypted item store with Keychain semantics in one SQLite file.
///
/// File format (see README "Vault format"): `PRAGMA application_id` =
/// ``applicationID``, `user_version` = ``formatVersion``; table `meta`
/// (Argon2id parameters, 16-byte salt, the sealed 32-byte vault key) and table
/// `items(id, lookup UNIQUE, record)`, where `lookup` is a keyed BLAKE2b-256
/// of the primary key and `record` is nonce (24) ‖ XChaCha20-Poly1305
/// ciphertext ‖ tag (16) with `lookup ‖ formatVersion` as associated data.
///
/// Several processes may use one vault at once: writes run in
/// `BEGIN IMMEDIATE` transactions under a busy timeout, in WAL mode with
/// `synchronous=FULL`.
///
/// An instance is one connection and must stay on one thread at a time.
public final class Vault {
    /// `PRAGMA application_id` of a Fob vault: "Fob!" in ASCII.
    public static let applicationID: Int32 = 0x466F_6221
    /// `PRAGMA user_version`: the vault format this build writes and reads.
    public static let formatVersion: Int32 = 1
    /// The longest master password accepted: 65,536 bytes of UTF-8.
    public static let maxPasswordBytes = 65_536
    /// How long a write waits for another process's write to finish: milliseconds.
    public static let busyTimeoutMilliseconds: Int32 = 30_000

    /// The vault file.
    public let url: URL
    private let db: SQLiteConnection
    private let now: @Sendable () -> Date
    private var keys: Keys?
    private let scratch = ScratchBuffer()
    private var statements: [String: SQLiteStatement] = [:]

    fileprivate struct Keys {
        let vault: SecretBytes
        let lookup: SecretBytes
        let record: SecretBytes
    }

    /// The default vault: `$XDG_DATA_HOME/fob/vault.db`, else `~/.local/share/fob/vault.db`.
    /// - Parameter environment: the process environment (injectable for tests).
    public static func defaultURL(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg).appendingPathComponent("fob/vault.db")
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return URL(fileURLWithPath: home).appendingPathComponent(".local/share/fob/vault.db")
    }

    /// Whether a file exists at `url`.
    public static func exists(at url: URL) -> Bool {
        FileManager.default.fileExists(atPath: url.path)
    }

    // MARK: - Create and open

    /// Creates a new vault, unlocked, with a random vault key sealed by the
    /// Argon2id key of `password`.
    ///
    /// Creates missing parent directories with mode 0700 and the file with
    /// mode 0600 whatever the umask; refuses to overwrite anything.
    /// - Parameters:
    ///   - password: the master password (normalised to NFC UTF-8); 1 to ``maxPasswordBytes`` bytes.
    ///   - kdf: Argon2id costs; ``KDFParameters/default`` unless given.
    ///   - now: the clock for item dates.
    /// - Throws: `.param` for an empty or too long password or invalid KDF
    ///   limits; `.io` if a file exists at `url` or cannot be written.
    public static func create(at url: URL, password: SecretBytes, kdf: KDFParameters = .default,
                              now: @escaping @Sendable () -> Date = Date.init) throws(KeychainError) -> Vault {
        Sodium.ensureInitialised()
        let normalized = try normalize(password)
        guard kdf.isValid else { throw .param("KDF limits out of range") }
        try makeParentDirectories(of: url)
        let fd = Glibc.open(url.path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { throw .io("a file already exists at \(url.path); not overwriting it") }
            throw .io("cannot create \(url.path): \(String(cString: strerror(errno)))")
        }
        fchmod(fd, 0o600)
        close(fd)
        do {
            let vault = try Vault(url: url, creating: true, now: now)
            let salt = Sodium.randomBytes(Crypto.saltBytes)
            let passwordKey = try Crypto.deriveKey(password: normalized, salt: salt, opslimit: kdf.opslimit, memlimit: kdf.memlimit)
            let vaultKey = SecretBytes.random(count: Crypto.keyBytes)
            try vault.guarded { () throws(SQLiteError) in
                try vault.db.execute("""
                    PRAGMA journal_mode=WAL;
                    BEGIN IMMEDIATE;
                    PRAGMA application_id=\(applicationID);
                    PRAGMA user_version=\(formatVersion);
                    CREATE TABLE meta(name TEXT PRIMARY KEY, value BLOB NOT NULL);
                    CREATE TABLE items(id INTEGER PRIMARY KEY, lookup BLOB NOT NULL UNIQUE, record BLOB NOT NULL);
                    """)
                try vault.writeMeta(salt: salt, kdf: kdf, vaultKey: vaultKey, passwordKey: passwordKey)
                try vault.db.execute("COMMIT")
            }
            vault.keys = Keys(vaultKey)
            return vault
        } catch {
            for suffix in ["", "-wal", "-shm"] { unlink(url.path + suffix) }
            throw error
        }
    }

    /// Opens an existing vault, locked.
    /// - Throws: `.noSuchKeychain` if there is no file; `.decode` if it is not
    ///   a Fob vault, is damaged, or has a newer format; `.io` if it cannot be read.
    public convenience init(url: URL, now: @escaping @Sendable () -> Date = Date.init) throws(KeychainError) {
        guard Vault.exists(at: url) else { throw .noSuchKeychain(url.path) }
        try self.init(url: url, creating: false, now: now)
        let (appID, version): (Int64, Int64) = try guarded { () throws(SQLiteError) in
            (try db.scalar("PRAGMA application_id"), try db.scalar("PRAGMA user_version"))
        }
        guard appID == Int64(Vault.applicationID) else { throw .decode("not a Fob vault: \(url.path)") }
        guard version == Int64(Vault.formatVersion) else {
            throw .decode("vault format \(version) is not supported by this fob (format \(Vault.formatVersion))")
        }
        _ = try readMeta()
    }

    private init(url: URL, creating: Bool, now: @escaping @Sendable () -> Date) throws(KeychainError) {
        Sodium.ensureInitialised()
        self.url = url
        self.now = now
        do {
            let connection = try SQLiteConnection(path: url.path, create: false)
            sqlite3_busy_timeout(connection.handle, Vault.busyTimeoutMilliseconds)
            try connection.execute("PRAGMA synchronous=FULL; PRAGMA secure_delete=ON;")
            db = connection
        } catch {
            throw error.keychainError
        }
    }

    deinit { keys = nil }

    // MARK: - Lock state

    /// Whether the vault key is absent from memory.
    public var isLocked: Bool { keys == nil }

    /// Derives the password key and opens the vault key.
    /// - Parameter password: the master password (normalised to NFC UTF-8 before the KDF).
    /// - Throws: `.authFailed` for a wrong password; `.decode` for damaged metadata.
    public func unlock(password: SecretBytes) throws(KeychainError) {
        let normalized = try Vault.normalize(password, checkLength: false)
        let meta = try readMeta()
        let passwordKey = try Crypto.deriveKey(password: normalized, salt: meta.salt,
                                               opslimit: meta.kdf.opslimit, memlimit: meta.kdf.memlimit)
        guard let vaultKey = Crypto.open(meta.sealedKey, ad: meta.associatedData, key: passwordKey),
              vaultKey.count == Crypto.keyBytes else {
            throw .authFailed
        }
        keys = Keys(vaultKey)
    }

    /// Drops every key; `sodium_free` wipes their memory.
    public func lock() { keys = nil }

    /// The Argon2id parameters stored in this vault.
    public func kdfParameters() throws(KeychainError) -> KDFParameters { try readMeta().kdf }

    /// Re-seals the vault key under a new master password (items are not re-encrypted).
    /// - Parameters:
    ///   - newPassword: 1 to ``maxPasswordBytes`` bytes, normalised to NFC.
    ///   - kdf: new Argon2id costs, or `nil` to keep the stored ones.
    /// - Throws: `.interactionNotAllowed` when locked; `.param` for a bad password.
    public func changePassword(to newPassword: SecretBytes, kdf: KDFParameters? = nil) throws(KeychainError) {
        let keys = try unlockedKeys()
        let normalized = try Vault.normalize(newPassword)
        let params: KDFParameters
        if let kdf { params = kdf } else { params = try readMeta().kdf }
        guard params.isValid else { throw .param("KDF limits out of range") }
        let salt = Sodium.randomBytes(Crypto.saltBytes)
        let passwordKey = try Crypto.deriveKey(password: normalized, salt: salt, opslimit: params.opslimit, memlimit: params.memlimit)
        try write { () throws(KeychainError) in
            try guarded { () throws(SQLiteError) in try writeMeta(salt: salt, kdf: params, vaultKey: keys.vault, passwordKey: passwordKey) }
        }
    }

    // MARK: - Keychain operations

    /// Adds an item (`SecItemAdd`).
    /// - Throws: `.duplicateItem` if an item with the same class, access group,
    ///   service and account exists; `.param` for a missing or oversized secret;
    ///   `.interactionNotAllowed` when locked; `.io` when the disk is full.
    public func add(_ item: Item) throws(KeychainError) {
        let keys = try unlockedKeys()
        try Vault.check(item)
        var item = item
        let stamp = now()
        item.created = stamp
        item.modified = stamp
        let lookup = Vault.lookup(for: item, keys: keys)
        let record = Vault.seal(item, lookup: lookup, keys: keys)
        try write { () throws(KeychainError) in
            try insert(lookup: lookup, record: record, name: item.displayName)
        }
    }

    /// Adds several items in one transaction (an import): all or none.
    /// - Throws: `.duplicateItem` for the first item whose key exists (nothing is added);
    ///   `.param`, `.interactionNotAllowed`, `.io` as ``add(_:)``.
    public func add(contentsOf items: [Item]) throws(KeychainError) {
        let keys = try unlockedKeys()
        let stamp = now()
        var sealed: [(lookup: [UInt8], record: [UInt8], name: String)] = []
        sealed.reserveCapacity(items.count)
        for var item in items {
            try Vault.check(item)
            item.created = stamp
            item.modified = stamp
            let lookup = Vault.lookup(for: item, keys: keys)
            sealed.append((lookup, Vault.seal(item, lookup: lookup, keys: keys), item.displayName))
        }
        try write { () throws(KeychainError) in
            for row in sealed { try insert(lookup: row.lookup, record: row.record, name: row.name) }
        }
    }

    /// Items matching `query` (`SecItemCopyMatching`), sorted by service then account.
    /// - Parameters:
    ///   - limit: `.one` returns the first match only.
    ///   - withSecrets: whether to decrypt the secret into each item.
    /// - Throws: `.itemNotFound` when nothing matches; `.decode` for a
    ///   record that fails authentication; `.interactionNotAllowed` when locked.
    public func items(matching query: ItemQuery, limit: MatchLimit = .all, withSecrets: Bool = false) throws(KeychainError) -> [Item] {
        let keys = try unlockedKeys()
        var found = try guarded { () throws(SQLiteError) in try rows(matching: query, keys: keys, withSecrets: withSecrets) }.map(\.item)
        guard !found.isEmpty else { throw .itemNotFound(query.displayName) }
        found.sort(by: Vault.ordering)
        return limit == .one ? [found[0]] : found
    }

    /// The one item with this primary key, with its secret.
    /// - Throws: `.itemNotFound`, `.decode`, `.interactionNotAllowed`.
    public func item(service: String, account: String, accessGroup: String = "") throws(KeychainError) -> Item {
        try items(matching: .key(service: service, account: account, accessGroup: accessGroup), limit: .one, withSecrets: true)[0]
    }

    /// Every item, without secrets, sorted by service then account; empty when there are none.
    /// - Throws: `.decode`, `.interactionNotAllowed`.
    public func allItems() throws(KeychainError) -> [Item] {
        do { return try items(matching: ItemQuery(itemClass: nil)) } catch .itemNotFound { return [] }
    }

    /// Changes every item matching `query` (`SecItemUpdate`) in one transaction.
    /// - Returns: how many items changed.
    /// - Throws: `.itemNotFound` when nothing matches; `.duplicateItem` when a
    ///   changed primary key collides; `.param`, `.interactionNotAllowed`, `.io`.
    @discardableResult
    public func update(matching query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        let keys = try unlockedKeys()
        if let secret = changes.secret, secret.count > Item.maxSecretBytes { throw Vault.secretTooLarge }
        return try write { () throws(KeychainError) -> Int in
            let matches = try guarded { () throws(SQLiteError) in try rows(matching: query, keys: keys, withSecrets: true) }
            guard !matches.isEmpty else { throw .itemNotFound(query.displayName) }
            let stamp = now()
            for row in matches { try rewrite(row, with: changes, now: stamp, keys: keys) }
            return matches.count
        }
    }

    /// Deletes every item matching `query` (`SecItemDelete`) in one transaction.
    /// - Returns: how many items were deleted.
    /// - Throws: `.itemNotFound` when nothing matches; `.interactionNotAllowed`, `.io`.
    @discardableResult
    public func delete(matching query: ItemQuery) throws(KeychainError) -> Int {
        let keys = try unlockedKeys()
        return try write { () throws(KeychainError) -> Int in
            let matches = try guarded { () throws(SQLiteError) in try rows(matching: query, keys: keys, withSecrets: false) }
            guard !matches.isEmpty else { throw .itemNotFound(query.displayName) }
            try guarded { () throws(SQLiteError) in
                let stmt = try db.prepare("DELETE FROM items WHERE id = ?")
                for row in matches {
                    stmt.reset()
                    try stmt.bind(1, row.id)
                    try stmt.step()
                }
            }
            return matches.count
        }
    }

    /// What ``save(service:account:accessGroup:itemClass:secret:attributes:)`` did.
    public enum SaveOutcome: Sendable, Equatable { case added, updated }

    /// Adds the item, or updates it when one with this primary key exists, in
    /// one `BEGIN IMMEDIATE` transaction: never reports a duplicate, also
    /// when processes race.
    /// - Parameters:
    ///   - secret: the new secret, up to 1 MiB.
    ///   - attributes: other attributes to set (kind defaults to `.password` for a new item; its key fields are ignored).
    /// - Throws: `.param`, `.interactionNotAllowed`, `.io`, `.decode`.
    @discardableResult
    public func save(service: String, account: String, accessGroup: String = "", itemClass: ItemClass = .genericPassword,
                     secret: SecretBytes, attributes: ItemChanges = ItemChanges()) throws(KeychainError) -> SaveOutcome {
        let keys = try unlockedKeys()
        var changes = attributes
        changes.service = nil
        changes.account = nil
        changes.accessGroup = nil
        changes.secret = secret
        let query = ItemQuery(itemClass: itemClass, service: service, account: account, accessGroup: accessGroup)
        return try write { () throws(KeychainError) -> SaveOutcome in
            let stamp = now()
            if let row = try guarded({ () throws(SQLiteError) in try rows(matching: query, keys: keys, withSecrets: true) }).first {
                try rewrite(row, with: changes, now: stamp, keys: keys)
                return .updated
            }
            var item = Item(itemClass: itemClass, service: service, account: account, accessGroup: accessGroup,
                            created: stamp, modified: stamp, secret: secret)
            changes.apply(to: &item, now: stamp)
            try Vault.check(item)
            let lookup = Vault.lookup(for: item, keys: keys)
            try insert(lookup: lookup, record: Vault.seal(item, lookup: lookup, keys: keys), name: item.displayName)
            return .added
        }
    }

    /// SQLite's `PRAGMA data_version`: changes when another connection (or
    /// process) commits, so a viewer can poll it cheaply to refresh.
    /// - Throws: `.io`, `.decode`.
    public func dataVersion() throws(KeychainError) -> Int64 {
        try guarded { () throws(SQLiteError) in try db.scalar("PRAGMA data_version") }
    }

    /// The number of stored items (readable without unlocking).
    public func count() throws(KeychainError) -> Int {
        try guarded { () throws(SQLiteError) in Int(try db.scalar("SELECT count(*) FROM items")) }
    }

    /// Runs `body` while holding an exclusive advisory lock (`flock`) on
    /// `<vault>.lock` (mode 0600), so that only one process at a time does
    /// the work (for example one OAuth refresh per vault).
    /// - Throws: `.io` if the lock file cannot be opened, or what `body` throws.
    public func withExclusiveLock<R>(_ body: () throws -> R) throws -> R {
        let path = url.path + ".lock"
        let fd = Glibc.open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw KeychainError.io("cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, 0o600)
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw KeychainError.io("cannot lock \(path): \(String(cString: strerror(errno)))") }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    // MARK: - Internals

    private struct Row {
        let id: Int64
        let item: Item
    }

    private struct Meta {
        let kdf: KDFParameters
        let salt: [UInt8]
        let sealedKey: [UInt8]
        var associatedData: [UInt8] { Vault.metaAD(kdf: kdf, salt: salt) }
    }

    private static let secretTooLarge = KeychainError.param("secret larger than 1 MiB (\(Item.maxSecretBytes) bytes)")

    private static func ordering(_ a: Item, _ b: Item) -> Bool {
        if a.service != b.service { return a.service.utf8.lexicographicallyPrecedes(b.service.utf8) }
        if a.account != b.account { return a.account.utf8.lexicographicallyPrecedes(b.account.utf8) }
        return a.accessGroup.utf8.lexicographicallyPrecedes(b.accessGroup.utf8)
    }

    private static func check(_ item: Item) throws(KeychainError) {
        guard let secret = item.secret else { throw .param("an item needs a secret (kSecValueData)") }
        guard secret.count <= Item.maxSecretBytes else { throw secretTooLarge }
        try item.checkLimits()
    }

    private func unlockedKeys() throws(KeychainError) -> Keys {
        guard let keys else { throw .interactionNotAllowed("the vault is locked") }
        return keys
    }

    /// Converts SQLite errors into the store's.
    private func guarded<R>(_ body: () throws(SQLiteError) -> R) throws(KeychainError) -> R {
        do { return try body() } catch { throw error.keychainError }
    }

    /// Runs `body` in `BEGIN IMMEDIATE … COMMIT`, rolling back on any error.
    private func write<R>(_ body: () throws(KeychainError) -> R) throws(KeychainError) -> R {
        try guarded { () throws(SQLiteError) in try db.execute("BEGIN IMMEDIATE") }
        do {
            let result = try body()
            try guarded { () throws(SQLiteError) in try db.execute("COMMIT") }
            return result
        } catch {
            _ = try? db.execute("ROLLBACK")
            throw error
        }
    }

    private func insert(lookup: [UInt8], record: [UInt8], name: String) throws(KeychainError) {
        do {
            let stmt = try db.prepare("INSERT INTO items(lookup, record) VALUES (?, ?)")
            try stmt.bind(1, lookup)
            try stmt.bind(2, record)
            try stmt.step()
        } catch {
            if error.primary == SQLITE_CONSTRAINT { throw .duplicateItem(name) }
            throw error.keychainError
        }
    }

    /// Applies `changes` to a stored row and writes it back under its
    /// (possibly new) lookup; a key that collides is `.duplicateItem`.
    private func rewrite(_ row: Row, with changes: ItemChanges, now stamp: Date, keys: Keys) throws(KeychainError) {
        var item = row.item
        changes.apply(to: &item, now: stamp)
        try Vault.check(item)
        let lookup = Vault.lookup(for: item, keys: keys)
        try replace(id: row.id, lookup: lookup, record: Vault.seal(item, lookup: lookup, keys: keys), name: item.displayName)
    }

    private func replace(id: Int64, lookup: [UInt8], record: [UInt8], name: String) throws(KeychainError) {
        do {
            let stmt = try db.prepare("UPDATE items SET lookup = ?, record = ? WHERE id = ?")
            try stmt.bind(1, lookup)
            try stmt.bind(2, record)
            try stmt.bind(3, id)
            try stmt.step()
        } catch {
            if error.primary == SQLITE_CONSTRAINT { throw .duplicateItem(name) }
            throw error.keychainError
        }
    }

    /// Rows matching `query`: one indexed read when the whole primary key is
    /// given, else a scan that decrypts every record.
    private func rows(matching query: ItemQuery, keys: Keys, withSecrets: Bool) throws(SQLiteError) -> [Row] {
        let stmt: SQLiteStatement
        if let candidates = query.primaryKeyCandidates {
            stmt = try cached("SELECT id, lookup, record FROM items WHERE lookup IN (?, ?)")
            try stmt.bind(1, Crypto.keyedHash(candidates[0], key: keys.lookup))
            try stmt.bind(2, Crypto.keyedHash(candidates[candidates.count - 1], key: keys.lookup))
        } else {
            stmt = try cached("SELECT id, lookup, record FROM items")
        }
        // A statement left mid-way would hold a read snapshot open.
        defer { stmt.reset() }
        var out: [Row] = []
        while try stmt.step() {
            let item: Item
            do {
                item = try stmt.withBlob(2) { record throws(KeychainError) in
                    try open(record: record, lookup: stmt.blob(1), keys: keys, withSecret: withSecrets)
                }
            } catch {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "an item record failed authentication")
            }
            if query.matches(item) {
                var kept = item
                if !withSecrets { kept.secret = nil }
                out.append(Row(id: stmt.int(0), item: kept))
            }
        }
        return out
    }

    /// A prepared statement kept for the life of the connection, reset for reuse.
    private func cached(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let stmt = statements[sql] {
            stmt.reset()
            return stmt
        }
        let stmt = try db.prepare(sql)
        statements[sql] = stmt
        return stmt
    }

    private static func lookup(for item: Item, keys: Keys) -> [UInt8] {
        Crypto.keyedHash(RecordCodec.primaryKey(of: item), key: keys.lookup)
    }

    private static func recordAD(_ lookup: [UInt8]) -> [UInt8] {
        lookup + (0..<4).map { UInt8(truncatingIfNeeded: UInt32(formatVersion) >> (8 * UInt32($0))) }
    }

    private static func seal(_ item: Item, lookup: [UInt8], keys: Keys) -> [UInt8] {
        let plain = RecordCodec.encode(item)
        return plain.withUnsafeBytes { Crypto.seal($0, ad: recordAD(lookup), key: keys.record) }
    }

    private func open(record: UnsafeRawBufferPointer, lookup: [UInt8], keys: Keys, withSecret: Bool) throws(KeychainError) -> Item {
        let failed = KeychainError.decode("an item record failed authentication")
        guard record.count >= Crypto.nonceBytes + Crypto.tagBytes else { throw failed }
        let item = try scratch.withBuffer(count: record.count - Crypto.nonceBytes - Crypto.tagBytes) { plain throws(KeychainError) in
            guard Crypto.open(record, ad: Vault.recordAD(lookup), key: keys.record, into: plain) else { throw failed }
            return try RecordCodec.decode(UnsafeRawBufferPointer(plain), withSecret: withSecret)
        }
        // A record moved under another row's lookup fails the AEAD above; a
        // record whose contents disagree with its own lookup is caught here.
        guard Vault.lookup(for: item, keys: keys) == lookup else { throw .decode("an item record does not match its key") }
        return item
    }

    private static func metaAD(kdf: KDFParameters, salt: [UInt8]) -> [UInt8] {
        Array("fob vault key v1 argon2id13 \(kdf.opslimit) \(kdf.memlimit)".utf8) + salt
    }

    private func writeMeta(salt: [UInt8], kdf: KDFParameters, vaultKey: SecretBytes, passwordKey: SecretBytes) throws(SQLiteError) {
        let sealed = vaultKey.withUnsafeBytes { Crypto.seal($0, ad: Vault.metaAD(kdf: kdf, salt: salt), key: passwordKey) }
        let stmt = try db.prepare("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)")
        let values: [(String, [UInt8])] = [
            ("kdf", Array("argon2id13".utf8)),
            ("opslimit", Array(String(kdf.opslimit).utf8)),
            ("memlimit", Array(String(kdf.memlimit).utf8)),
            ("salt", salt),
            ("vault_key", sealed),
        ]
        for (name, value) in values {
            stmt.reset()
            try stmt.bind(1, name)
            try stmt.bind(2, value)
            try stmt.step()
        }
    }

    private func readMeta() throws(KeychainError) -> Meta {
        let values: [String: [UInt8]] = try guarded { () throws(SQLiteError) in
            let stmt = try db.prepare("SELECT name, value FROM meta")
            var out: [String: [UInt8]] = [:]
            while try stmt.step() { out[stmt.text(0) ?? ""] = stmt.blob(1) }
            return out
        }
        func number(_ name: String) -> UInt64? { values[name].flatMap { String(bytes: $0, encoding: .utf8) }.flatMap { UInt64($0) } }
        guard values["kdf"] == Array("argon2id13".utf8) else { throw .decode("unknown key derivation in vault metadata") }
        guard let ops = number("opslimit"), let mem = number("memlimit"), mem <= UInt64(Int.max),
              let salt = values["salt"], salt.count == Crypto.saltBytes,
              let sealed = values["vault_key"] else { throw .decode("vault metadata incomplete") }
        let kdf = KDFParameters(opslimit: ops, memlimit: Int(mem))
        guard kdf.isValid else { throw .decode("vault KDF limits out of range") }
        return Meta(kdf: kdf, salt: salt, sealedKey: sealed)
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
            var bytes = Array(text.precomposedStringWithCanonicalMapping.utf8)
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

    private static func makeParentDirectories(of url: URL) throws(KeychainError) {
        var missing: [String] = []
        var dir = url.deletingLastPathComponent().path
        while !dir.isEmpty, dir != "/", !FileManager.default.fileExists(atPath: dir) {
            missing.append(dir)
            dir = (dir as NSString).deletingLastPathComponent
        }
        for path in missing.reversed() {
            guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
                throw .io("cannot create \(path): \(String(cString: strerror(errno)))")
            }
            chmod(path, 0o700)
        }
    }
}

extension Vault.Keys {
    init(_ vaultKey: SecretBytes) {
        self.init(vault: vaultKey, lookup: Crypto.subkey(of: vaultKey, id: 1), record: Crypto.subkey(of: vaultKey, id: 2))
    }
}

@available(*, unavailable)
extension Vault: Sendable {}

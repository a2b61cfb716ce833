import CSQLite

extension Vault {
    /// Deletes every item for which `predicate` holds, in one `BEGIN
    /// IMMEDIATE` transaction (the logout wipe): all of them or, on any
    /// error, none.
    ///
    /// While another process holds the vault's write lock, this waits at most
    /// `busyTimeoutMilliseconds` (not the usual ``busyTimeoutMilliseconds``)
    /// and then fails with a busy error (``KeychainError/isBusy``), so an
    /// interactive caller can stay responsive and try again.
    /// - Parameters:
    ///   - busyTimeoutMilliseconds: the longest wait for the write lock.
    ///   - predicate: which items (read without their secrets) to delete.
    /// - Returns: the deleted items, without secrets; empty when none matched.
    /// - Throws: `.io` (busy: ``KeychainError/isBusy``), `.interactionNotAllowed`, `.decode`.
    public func deleteItems(
        busyTimeoutMilliseconds: Int32 = Vault.busyTimeoutMilliseconds,
        where predicate: (Item) -> Bool
    ) throws(KeychainError) -> [Item] {
        sqlite3_busy_timeout(db.handle, max(0, busyTimeoutMilliseconds))
        defer { sqlite3_busy_timeout(db.handle, Vault.busyTimeoutMilliseconds) }
        return try write { (_) throws(KeychainError) -> [Item] in
            let all: [Row]
            do throws(KeychainError) {
                all = try rows(matching: ItemQuery(itemClass: nil), withSecrets: false)
            } catch .itemNotFound {
                return []
            }
            var deleted: [Item] = []
            for row in all where predicate(row.item) {
                try deleteRow(id: row.id, lookup: row.lookup)
                noteWrite(.deleted(row.item))
                deleted.append(row.item)
            }
            return deleted
        }
    }
}

extension KeychainError {
    /// The prefix of an `.io` error for a vault whose write lock another
    /// process held past the busy timeout (`SQLITE_BUSY`).
    static let busyPrefix = "vault busy"

    /// Whether this is the error of a vault another process kept busy past the timeout.
    public var isBusy: Bool {
        if case .io(let why) = self { return why.hasPrefix(KeychainError.busyPrefix) }
        return false
    }
}

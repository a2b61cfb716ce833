import FobAccess
import FobStore
import FoundationEssentials

/// Which group of a logout an item falls in.
public enum LogoutGroup: Sendable, Equatable {
    /// A session token: an `oauth` item, or a `token` item whose JWT has an
    /// expiry (`exp`, RFC 7519 §4.1.4). Deleted by default.
    case session
    /// A `token` item with no expiry to read (an API key, a registry
    /// token): deleted only when asked (`--include-long-lived`, or chosen in the review).
    case longLived
}

/// One item a logout may delete, with its group.
public struct LogoutCandidate: Sendable, Equatable {
    /// The item, without its secret.
    public var item: Item
    /// Its group.
    public var group: LogoutGroup
    /// When its token expires, for a session token whose expiry can be read.
    public var expires: Date?
}

/// The logout wipe: deletes the session tokens (``LogoutGroup``; of one
/// service, or all), and the long-lived tokens only when asked, in one
/// transaction: all of them, or none.
public enum LogoutWipe {
    /// The result of a wipe.
    public struct Report: Sendable, Equatable {
        /// How many session items there were to delete.
        public var found: Int
        /// How many were deleted.
        public var deleted: Int
        /// Items that could not be deleted, with the error's words.
        public var failures: [String]
        /// Creates a report.
        public init(found: Int, deleted: Int, failures: [String]) {
            self.found = found
            self.deleted = deleted
            self.failures = failures
        }

        /// Whether every item found was deleted.
        public var succeeded: Bool { failures.isEmpty && deleted == found }

        /// One line for the user: the count, or what failed.
        public var summary: String {
            if succeeded { return "Logged out: deleted \(deleted) token/OAuth item\(deleted == 1 ? "" : "s")" }
            return "Logout failed: deleted \(deleted) of \(found); " + failures.joined(separator: "; ")
        }
    }

    /// The token and oauth items a wipe would delete (without secrets).
    /// - Parameter service: only this service's items; `nil` for all.
    /// - Throws: `.interactionNotAllowed` when locked; `.decode`.
    public static func sessionItems(in store: any KeychainStore, service: String? = nil) throws(KeychainError) -> [Item]
    {
        try store.allItems().filter { $0.kind.isSessionToken && (service == nil || $0.service == service) }
    }

    /// Every item a logout may delete, in two groups: session tokens first,
    /// then tokens with no expiry; each group in listing order. A token's
    /// expiry is read from its secret (decrypted here, then dropped).
    /// - Parameter service: only this service's items; `nil` for all.
    /// - Throws: `.interactionNotAllowed` when locked; `.decode`.
    public static func candidates(in store: any KeychainStore, service: String? = nil) throws(KeychainError)
        -> [LogoutCandidate]
    {
        var session: [LogoutCandidate] = []
        var longLived: [LogoutCandidate] = []
        for item in try sessionItems(in: store, service: service) {
            let full = try? store.item(ItemKey(item))
            let expires = full.flatMap(TokenExpiry.expiry(of:))
            if item.kind == .oauth || expires != nil {
                session.append(LogoutCandidate(item: item, group: .session, expires: expires))
            } else {
                longLived.append(LogoutCandidate(item: item, group: .longLived, expires: nil))
            }
        }
        return session + longLived
    }

    /// Deletes the session tokens (with `includeLongLived`, every token and
    /// OAuth item) in one transaction; see ``run(in:keys:busyTimeoutMilliseconds:)``.
    /// - Parameters:
    ///   - service: only this service's items; `nil` for all.
    ///   - includeLongLived: delete the tokens with no expiry too.
    ///   - busyTimeoutMilliseconds: as ``run(in:keys:busyTimeoutMilliseconds:)``.
    /// - Throws: the store's errors; nothing is deleted then.
    public static func run(
        in store: any KeychainStore, service: String? = nil, includeLongLived: Bool = false,
        busyTimeoutMilliseconds: Int32 = Vault.busyTimeoutMilliseconds
    ) throws(KeychainError) -> Report {
        let keys = try candidates(in: store, service: service)
            .filter { includeLongLived || $0.group == .session }.map { ItemKey($0.item) }
        return try run(in: store, keys: Set(keys), busyTimeoutMilliseconds: busyTimeoutMilliseconds)
    }

    /// Deletes the token and OAuth items with these keys in one transaction
    /// (those still present when it runs).
    /// - Parameters:
    ///   - keys: the items to delete (``candidates(in:service:)`` names them).
    ///   - busyTimeoutMilliseconds: the longest wait while another process
    ///     holds the vault; the terminal UI passes a short one and tries again
    ///     later, so it never freezes.
    /// - Throws: the store's errors; nothing is deleted then
    ///   (``KeychainError/isBusy`` when the vault stayed busy).
    public static func run(
        in store: any KeychainStore, keys: Set<ItemKey>,
        busyTimeoutMilliseconds: Int32 = Vault.busyTimeoutMilliseconds
    ) throws(KeychainError) -> Report {
        let deleted = try store.deleteItems(busyTimeoutMilliseconds: busyTimeoutMilliseconds) { item in
            item.kind.isSessionToken && keys.contains(ItemKey(item))
        }
        let report = Report(found: deleted.count, deleted: deleted.count, failures: [])
        store.didWipeSessions()
        return report
    }
}

import FobAccess
import FobStore
import Foundation

/// The logout wipe: deletes every item of kind `token` or `oauth` (of one
/// service, or all) in one transaction: all of them, or none.
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

    /// Deletes the session items in one transaction (those present when it
    /// runs, also ones added since they were listed).
    /// - Parameters:
    ///   - service: only this service's items; `nil` for all.
    ///   - busyTimeoutMilliseconds: the longest wait while another process
    ///     holds the vault; the terminal UI passes a short one and tries again
    ///     later, so it never freezes.
    /// - Throws: the store's errors; nothing is deleted then
    ///   (``KeychainError/isBusy`` when the vault stayed busy).
    public static func run(
        in store: any KeychainStore, service: String? = nil,
        busyTimeoutMilliseconds: Int32 = Vault.busyTimeoutMilliseconds
    ) throws(KeychainError) -> Report {
        let deleted = try store.deleteItems(busyTimeoutMilliseconds: busyTimeoutMilliseconds) { item in
            item.kind.isSessionToken && (service == nil || item.service == service)
        }
        let report = Report(found: deleted.count, deleted: deleted.count, failures: [])
        store.didWipeSessions()
        return report
    }
}

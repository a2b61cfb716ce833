import Foundation
import FobStore

/// The logout wipe: deletes every item of kind `token` or `oauth` (of one
/// service, or all), one by one, so a failure is reported per item.
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
    public static func sessionItems(in store: any KeychainStore, service: String? = nil) throws(KeychainError) -> [Item] {
        try store.allItems().filter { $0.kind.isSessionToken && (service == nil || $0.service == service) }
    }

    /// Deletes the session items, each by its exact key.
    /// - Parameter service: only this service's items; `nil` for all.
    /// - Throws: what listing the items throws; delete failures are in the report.
    public static func run(in store: any KeychainStore, service: String? = nil) throws(KeychainError) -> Report {
        let items = try sessionItems(in: store, service: service)
        var report = Report(found: items.count, deleted: 0, failures: [])
        for item in items {
            do {
                report.deleted += try store.delete(matching: ItemKey(item).query)
            } catch .itemNotFound {
                // Deleted by another process meanwhile: gone, as asked.
                report.deleted += 1
            } catch {
                report.failures.append("could not delete \(item.displayName): \(error)")
            }
        }
        if report.succeeded { store.didWipeSessions() }
        return report
    }
}

import FobStore

/// Where the search for a free account starts, per service and account,
/// so that a run of `CreateItem` calls with the same attributes tries one
/// account each instead of `account`, `account (2)`, `account (3)`, … every
/// time (1,000 such creates tried about half a million accounts).
///
/// The account found is always the first free one, as
/// ``ItemMapping/freeAccount(service:account:isTaken:)`` defines: a hint
/// holds only while the catalog changed by this provider's own creates
/// alone. Any other change (a deletion, a rename, a write by another
/// process) may free a lower suffix, so every hint is then dropped.
struct AccountSuffixes {
    private struct Key: Hashable {
        let service: String
        let account: String
    }

    /// The smallest n not known to be taken, by service and account.
    private var next: [Key: Int] = [:]
    /// The catalog generation the hints hold for.
    private var generation: Int?
    /// The most keys remembered; past it the hints start again.
    static let capacity = 1_024

    /// The first free `account` or `account (n)` of `service` in the
    /// vault's own access group.
    /// - Parameters:
    ///   - catalog: the items as the provider holds them, of ``ItemCache/generation`` `generation`.
    ///   - isTakenElsewhere: asked of an account the catalog does not hold
    ///     (another process may have taken it since the catalog was made).
    /// - Throws: what `isTakenElsewhere` throws.
    mutating func freeAccount(
        service: String, account: String, in catalog: ItemCatalog, generation: Int,
        isTakenElsewhere: (String) throws(KeychainError) -> Bool
    ) throws(KeychainError) -> String {
        if generation != self.generation {
            next = [:]
            self.generation = generation
        }
        let key = Key(service: service, account: account)
        let found = try ItemMapping.freeAccount(account: account, from: next[key] ?? 1) {
            (candidate) throws(KeychainError) -> Bool in
            if catalog.contains(service: service, account: candidate, accessGroup: "") { return true }
            return try isTakenElsewhere(candidate)
        }
        if next.count >= AccountSuffixes.capacity { next = [:] }
        next[key] = found.n
        return found.account
    }

    /// Notes that the account last found was created, the catalog now at
    /// `generation`: the next search for its key starts after it. A
    /// catalog that changed by more than that one create drops the hints.
    mutating func created(service: String, account: String, generation: Int) {
        guard let before = self.generation, generation == before || generation == before + 1 else {
            next = [:]
            self.generation = nil
            return
        }
        self.generation = generation
        let key = Key(service: service, account: account)
        if let n = next[key] { next[key] = n + 1 }
    }
}

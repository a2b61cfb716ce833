import FobAccess
import FobStore
import FoundationEssentials

/// The vault as sync sees it, the one adapter between sync and any
/// ``KeychainStore`` (``ItemAccess`` through the agent or the vault
/// opened here, ``VaultStore``, the terminal UI's store): items listed
/// with every attribute but no secret, secrets read only for the items a
/// run needs whole, the state's items by key, and one write transaction
/// for a list of changes (``KeychainStore/restore(_:)``).
///
/// It also loads a run (``load()``) and stores its state (``store(_:with:index:dirty:)``).
public final class SyncVault {
    let base: any KeychainStore
    /// Whether ``apply(_:)`` writes (`false`: a reader, such as the terminal UI's overview).
    let writes: Bool
    let now: () -> Date
    /// The largest index shard, in bytes (``SyncIndexShards``).
    var indexShardLimit = SyncIndexShards.defaultLimit
    /// How many items' secrets this adapter has read (each secret decrypted
    /// once per read), the sync state's own items not counted.
    public private(set) var secretsRead = 0

    /// Above this many items named at once, ``fill(_:names:)`` reads every
    /// secret in one pass instead of one read per item (a first sync).
    static let perItemReads = 256

    /// An adapter over `base`.
    /// - Parameters:
    ///   - writes: `false` refuses every write with `KeychainError.io`.
    ///   - now: the time written into the state's items.
    public init(_ base: any KeychainStore, writes: Bool = true, now: @escaping () -> Date = Date.init) {
        self.base = base
        self.writes = writes
        self.now = now
    }

    /// The state item, or `nil` when sync is not set up.
    static func stateItem(in items: [Item]) -> Item? { items.first(where: SyncState.isStateItem) }

    /// Every item with every attribute but no secret, and the state item whole.
    /// - Throws: `KeychainError`.
    func listing() throws(KeychainError) -> [Item] {
        var all: [Item]
        do { all = try base.items(matching: ItemQuery(itemClass: nil), withSecrets: false) } catch .itemNotFound {
            all = []
        }
        // The state lives in a reserved access group, which only a query naming it matches.
        return all + (try stateItems(accounts: [SyncState.key.account]))
    }

    /// Reads whole (with their secrets) the items `names` of `run` not read
    /// so yet: one read by key each, or one pass over every secret for many.
    /// - Throws: `KeychainError`; `.io` when one changed or went away since the listing.
    func fill(_ run: inout SyncRun, names: some Sequence<String>) throws(KeychainError) {
        let needed = Set(names.filter { run.items[$0] != nil && !run.whole.contains($0) })
        guard !needed.isEmpty else { return }
        var got: Set<String> = []
        if needed.count > SyncVault.perItemReads && needed.count * 4 > run.items.count {
            let all: [Item]
            do { all = try base.items(matching: ItemQuery(itemClass: nil), withSecrets: true) } catch .itemNotFound {
                all = []
            }
            secretsRead += all.count
            for item in all {
                let name = run.keys.name(of: item)
                if needed.contains(name) {
                    run.items[name] = item
                    got.insert(name)
                }
            }
        } else {
            for name in needed.sorted() {
                guard let listed = run.items[name] else { continue }
                let found: [Item]
                do { found = try base.items(matching: ItemKey(listed).query, withSecrets: true) } catch .itemNotFound {
                    found = []
                }
                secretsRead += found.count
                if let item = found.first(where: { $0.persistentID == listed.persistentID }) {
                    run.items[name] = item
                    got.insert(name)
                }
            }
        }
        // An item changed or deleted between the listing and this read:
        // nothing is written from half an item.
        guard got == needed else {
            throw .io("the vault changed during the sync; sync again")
        }
        run.whole.formUnion(needed)
    }

    /// The items of sync's reserved access group (service `fob-sync`) with
    /// these accounts, each found by its key (no scan); a missing one is left out.
    /// - Throws: `KeychainError`.
    func stateItems(accounts: [String]) throws(KeychainError) -> [Item] {
        var found: [Item] = []
        for account in accounts {
            do {
                found += try base.items(
                    matching: .key(
                        service: SyncState.key.service, account: account, accessGroup: SyncState.key.accessGroup),
                    withSecrets: true)
            } catch .itemNotFound {}
        }
        return found
    }

    /// Applies `changes` in one write transaction.
    /// - Throws: as ``KeychainStore/restore(_:)``; `.io` for a reader.
    func apply(_ changes: [ImportChange]) throws(KeychainError) {
        guard writes else { throw .io("this view of the vault reads sync's state only") }
        guard !changes.isEmpty else { return }
        try base.restore(changes)
    }

    /// The stored index shards of the state item `state` (a copy taking a
    /// new device id drops them with its old state).
    func indexShards(of state: Item) throws -> [Item] {
        guard let secret = state.secret, let decoded = try? SyncState.decode(secret), decoded.shardDigits != nil else {
            return []
        }
        return try stateItems(accounts: decoded.shardPrefixes.map(SyncIndexShards.account))
    }

    func load() throws -> SyncRun {
        let all = try listing()
        guard let stateItem = SyncVault.stateItem(in: all), let secret = stateItem.secret else {
            throw SyncError.notSetUp
        }
        let state: SyncState
        do { state = try SyncState.decode(secret) } catch {
            throw KeychainError.decode("the sync state item: \(error)")
        }
        let keys = SyncKeys(epochs: state.epochs)
        var items: [String: Item] = [:]
        for item in all where !SyncState.isStateItem(item) { items[keys.name(of: item)] = item }
        var run = SyncRun(state: state, stateItem: stateItem, items: items, keys: keys, now: now)
        try loadIndex(&run)
        if run.state.signingKey == nil { try makeSigningKey(&run) }
        return run
    }

    /// Gives a state written before signing keys its device's key, stored
    /// before any file is signed with it: this device's files up to its
    /// counter now were written unsigned, and every file of the tree is
    /// opened again at the next sync (those written unsigned are written
    /// again, signed, by its export).
    func makeSigningKey(_ run: inout SyncRun) throws {
        run.state.signingKey = DeviceSigningKey.generate()
        run.state.unsignedUpTo[run.state.device] = run.state.counter
        run.markIndexStale()
        try store(&run, index: true)
    }

    /// Reads the state's shards (``SyncIndexShards``) into `run`.
    func loadIndex(_ run: inout SyncRun) throws {
        guard run.state.shardDigits != nil else { return }
        let prefixes = run.state.shardPrefixes
        var byAccount: [String: Item] = [:]
        for item in try stateItems(accounts: prefixes.map(SyncIndexShards.account)) {
            byAccount[item.account] = item
        }
        for prefix in prefixes {
            guard let item = byAccount[SyncIndexShards.account(prefix)], let secret = item.secret else {
                throw KeychainError.decode("the sync state's index shard \"\(prefix)\" is missing")
            }
            do {
                let part = try SyncIndexShards.decode(secret, prefix: prefix)
                run.state.revisions.merge(part.revisions) { $1 }
                run.index.merge(part.index) { $1 }
            } catch {
                throw KeychainError.decode("the sync state's index shard \"\(prefix)\": \(error)")
            }
            run.shards[prefix] = item
        }
    }

    /// Replaces the stored state (one transaction with `changes`); with
    /// `index`, the index shards that changed too.
    /// - Parameter dirty: the items whose entries may have changed since
    ///   the shards were stored (`nil`: any).
    func store(
        _ run: inout SyncRun, with changes: [ImportChange] = [], index: Bool = false, dirty: Set<String>? = nil
    ) throws {
        var shardChanges: [ImportChange] = []
        var shards = run.shards
        var state = run.state
        if index {
            (shardChanges, shards) = indexChanges(run, into: &state, dirty: dirty)
        }
        // Sharded, the state's own item keeps no table: it stays small.
        if state.shardDigits != nil { state.revisions = [:] }
        var next = state.item(now: now())
        next.persistentID = run.stateItem.persistentID
        next.created = run.stateItem.created
        try apply(changes + shardChanges + [.replace(existing: run.stateItem, with: next)])
        next.revision = run.stateItem.revision + 1
        run.stateItem = next
        run.state.shardDigits = state.shardDigits
        run.state.shardPrefixes = state.shardPrefixes
        run.shards = shards
    }

    /// The writes that bring the stored shards to `run`'s table and
    /// index (only shards whose bytes changed), the shards after them, and
    /// the layout in `state`.
    func indexChanges(_ run: SyncRun, into state: inout SyncState, dirty: Set<String>?) -> (
        [ImportChange], [String: Item]
    ) {
        var clean: Set<String> = []
        if let dirty, let digits = run.state.shardDigits {
            clean = Set(run.shards.keys).subtracting(dirty.map { String($0.prefix(digits)) })
        }
        let (digits, encoded, kept) = SyncIndexShards.split(
            revisions: run.state.revisions, index: run.index, minDigits: run.state.shardDigits ?? 0,
            limit: indexShardLimit, clean: clean)
        var changes: [ImportChange] = []
        var shards = run.shards
        for (prefix, secret) in encoded.sorted(by: { $0.key < $1.key }) {
            let old = run.shards[prefix]
            if let old, old.secret == secret { continue }
            var next = Item(
                service: SyncState.key.service, account: SyncIndexShards.account(prefix),
                accessGroup: SyncState.key.accessGroup, label: "sync index (written by fob sync)", kind: .note,
                created: now(), modified: now(), secret: secret)
            if let old {
                next.persistentID = old.persistentID
                next.created = old.created
                changes.append(.replace(existing: old, with: next))
                next.revision = old.revision + 1
            } else {
                changes.append(.add(next))
                next.revision = 1
            }
            shards[prefix] = next
        }
        for (prefix, old) in run.shards.sorted(by: { $0.key < $1.key })
        where encoded[prefix] == nil && !kept.contains(prefix) {
            changes.append(.delete(existing: old))
            shards[prefix] = nil
        }
        state.shardDigits = digits
        state.shardPrefixes = kept.union(encoded.keys).sorted()
        return (changes, shards)
    }
}

import FobStore
import FoundationEssentials

/// One sync run's state, from the vault's read to its last write: what
/// the vault holds of sync (the state, its index, the items), the keys,
/// what the run read of the tree and what it stages for the next commit.
/// Every command makes a fresh one (``SyncVault/load()``), and the stages
/// (``TreeReader``, ``Exporter``, ``VaultMerger``, ``EpochKeeper``,
/// ``TreeChecks``) take it `inout`: nothing of a run outlives it.
struct SyncRun {
    var state: SyncState
    var stateItem: Item
    /// The vault's items by keyed name, with every attribute; the secret
    /// only for the items in ``whole``.
    var items: [String: Item]
    /// The items ``SyncVault/fill(_:names:)`` read whole, with their secrets
    /// (those a stage compares or exports).
    var whole: Set<String> = []
    var keys: SyncKeys
    /// The clock the run records times by (in the rosters' origins): the
    /// vault's (``SyncVault``), which an engine made over a store shares
    /// with the engine; never the system's clock read directly.
    let now: () -> Date
    /// What this device verified of the synced commit's tree, by item
    /// name (empty before the first merge, or for a state written
    /// before the index: then every file is opened).
    var index: [String: IndexEntry] = [:]
    /// The stored index shards, by prefix.
    var shards: [String: Item] = [:]

    // MARK: What the run read of the tree

    /// Revisions opened in this run, by `BLOB PATH`.
    var opened: [String: Revision] = [:]
    /// Revisions this run wrote, by path, until the snapshot of its commit
    /// takes them (so its own files are not read back from git).
    var written: [String: Revision] = [:]
    /// Older epochs no header opens, as `NUMBER.DEVICE` (see ``EpochKeeper/adoptEpochs(_:run:)``).
    var unopenable: Set<String> = []
    /// What the run has to tell (devices taken in), said once the fetched
    /// tree is checked (``SyncEngine/checkRemote(_:run:)``).
    var notices: [String] = []

    // MARK: What the run exports and stages

    /// Items this run's export looked at (changed here since the last merge).
    var touched: Set<String> = []
    /// The files this run's export wrote (in ``written``) and the ones each superseded.
    var exports: [(name: String, dot: Dot, superseded: [Dot])] = []
    /// Whether this run's export also removed files that no export
    /// supersedes (tombstones collected).
    var exportsRemovedOthers = false
    /// The files staged for the next commit, by path (``writeFile(_:_:)``).
    var pendingWrites: [String: [UInt8]] = [:]
    /// The paths staged for removal in the next commit (``removeFile(_:)``).
    var pendingRemovals: Set<String> = []

    init(state: SyncState, stateItem: Item, items: [String: Item], keys: SyncKeys, now: @escaping () -> Date) {
        self.state = state
        self.stateItem = stateItem
        self.items = items
        self.keys = keys
        self.now = now
    }

    /// The time by ``now``, in whole seconds since 1970 (UTC), as the rosters record it.
    var seconds: UInt64 { SyncEngine.seconds(now()) }

    /// The items added, changed or resolved here since the last merge (the
    /// vault's revision differs from the one the state recorded), and the
    /// names the state records that the vault no longer holds (deleted here).
    var localChanges: (changed: [String], deleted: [String]) {
        var changed: [String] = []
        for (name, item) in items where state.revisions[name] != item.revision || state.resolved.contains(name) {
            changed.append(name)
        }
        return (changed, state.revisions.keys.filter { items[$0] == nil })
    }

    /// Stages `bytes` as the file at `path` for the next ``commit(git:)``.
    mutating func writeFile(_ path: String, _ bytes: [UInt8]) {
        pendingRemovals.remove(path)
        pendingWrites[path] = bytes
    }

    /// Stages `bytes` as the file at `path`, signed by this device for that
    /// path (``SignedFile``).
    /// - Throws: ``SyncError/usage(_:)`` for a state without a signing key
    ///   (``SyncVault/load()`` gives every state one, so none reaches here).
    mutating func writeSigned(_ path: String, _ bytes: [UInt8]) throws {
        guard let key = state.signingKey else { throw SyncError.usage("the sync state holds no signing key") }
        writeFile(path, SignedFile.signed(bytes, path: path, key: key))
    }

    /// Stages the removal of the file at `path` for the next ``commit(git:)``.
    mutating func removeFile(_ path: String) {
        pendingWrites[path] = nil
        pendingRemovals.insert(path)
    }

    /// Drops what was staged (a run cut short).
    mutating func dropStaged() {
        pendingWrites = [:]
        pendingRemovals = []
    }

    /// Commits what was staged onto the branch (``Git/commit(writes:removals:parent:message:)``:
    /// no file is written in a work tree); `false` when nothing was. The
    /// message is ``Git/commitMessage``, whatever the commit holds.
    @discardableResult
    mutating func commit(git: Git) throws -> Bool {
        guard !pendingWrites.isEmpty || !pendingRemovals.isEmpty else { return false }
        let parent = try git.resolve("HEAD")
        _ = try git.commit(writes: pendingWrites, removals: pendingRemovals, parent: parent, message: Git.commitMessage)
        dropStaged()
        return true
    }

    /// Marks every item of the index as holding files under an older key:
    /// the index still lists the tree's files (a snapshot never takes it for
    /// the whole tree while one is marked), and each is opened again.
    mutating func markIndexStale() {
        for name in index.keys { index[name]?.stale = true }
    }

    /// Takes `keys` after the state learned epochs.
    mutating func refreshKeys() { keys = SyncKeys(epochs: state.epochs) }
}

import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// One vault's sync: the tree in a git work tree, merged into the vault.
///
/// A cycle: (1) the vault's changes since the last merge become new
/// revision files under a counter first reserved in the vault, committed;
/// (2) fetch, refuse a remote that went back or holds another copy's
/// writes, merge (git cannot conflict: no path is written by two devices);
/// (3) check the merged tree (every file authenticates; a file removed
/// without a newer revision or an old one replayed is caught); (4) merge
/// every item and write the vault's changes and the state in one
/// transaction; (5) push, fetching again when the remote moved on.
public final class SyncEngine {
    let store: SyncItemStore
    let git: Git
    let now: () -> Date
    let messages: @Sendable (String) -> Void
    /// Revisions opened in this run, by blob id and path.
    var opened: [String: Revision] = [:]
    /// Asks the master password that opens a header of a key epoch this
    /// device does not know yet (the argument names the device that
    /// started it, as `NAME (ID)` when its name is known, for a prompt).
    /// `nil`: none can be asked, and such a sync stops with ``SyncError/newKey(_:)``.
    public var treePassword: ((String) throws -> SecretBytes)?
    /// Revisions this run wrote, by path, until the snapshot of its commit
    /// takes them (so its own files are not read back from git).
    var written: [String: Revision] = [:]
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
    /// The largest index shard, in bytes (``SyncIndexShards``).
    var indexShardLimit = SyncIndexShards.defaultLimit

    /// What a sync did.
    public struct Outcome: Sendable, Equatable {
        /// Items changed in this vault by what came from other devices.
        public var merged: Int
        /// Items with conflicting versions kept.
        public var conflicts: Int
        /// Revisions this device wrote.
        public var written: Int
    }

    /// An engine over `store` with its work tree at `treeDirectory`.
    /// - Parameters:
    ///   - environment: git's environment (Fob's own variables are dropped).
    ///   - messages: where git's messages and reports go (standard error).
    /// - Throws: ``SyncError/gitMissing``.
    public init(
        store: SyncItemStore, treeDirectory: String, environment: [String: String],
        now: @escaping () -> Date = Date.init, messages: @escaping @Sendable (String) -> Void
    ) throws(SyncError) {
        self.store = store
        self.git = try Git(directory: treeDirectory, environment: environment, messages: messages)
        self.now = now
        self.messages = messages
    }

    /// The time this engine spent waiting for git so far.
    public var gitTime: Duration { git.time.elapsed }

    /// The time this engine spent waiting for each git command so far (`push` → its runs' sum).
    public var gitTimeByCommand: [String: Duration] { git.time.byCommand }

    // MARK: Loading

    struct Loaded {
        var state: SyncState
        var stateItem: Item
        var items: [String: Item]
        var keys: SyncKeys
        /// What this device verified of the synced commit's tree, by item
        /// name (empty before the first merge, or for a state written
        /// before the index: then every file is opened).
        var index: [String: IndexEntry] = [:]
        /// The stored index shards, by prefix.
        var shards: [String: Item] = [:]
    }

    /// The state item, or `nil` when sync is not set up.
    static func stateItem(in items: [Item]) -> Item? { items.first(where: SyncState.isStateItem) }

    func load() throws -> Loaded {
        let all = try store.syncItems()
        guard let stateItem = SyncEngine.stateItem(in: all), let secret = stateItem.secret else {
            throw SyncError.usage(
                "sync is not set up for this vault; run `fob sync init REMOTE` or `fob sync join REMOTE`")
        }
        let state: SyncState
        do { state = try SyncState.decode(secret) } catch {
            throw KeychainError.decode("the sync state item: \(error)")
        }
        let keys = SyncKeys(epochs: state.epochs)
        var items: [String: Item] = [:]
        for item in all where !SyncState.isStateItem(item) { items[keys.name(of: item)] = item }
        var loaded = Loaded(state: state, stateItem: stateItem, items: items, keys: keys)
        try loadIndex(&loaded)
        return loaded
    }

    /// Reads the state's shards (``SyncIndexShards``) into `loaded`.
    func loadIndex(_ loaded: inout Loaded) throws {
        guard loaded.state.shardDigits != nil else { return }
        let prefixes = loaded.state.shardPrefixes
        var byAccount: [String: Item] = [:]
        for item in try store.syncStateItems(accounts: prefixes.map(SyncIndexShards.account)) {
            byAccount[item.account] = item
        }
        for prefix in prefixes {
            guard let item = byAccount[SyncIndexShards.account(prefix)], let secret = item.secret else {
                throw KeychainError.decode("the sync state's index shard \"\(prefix)\" is missing")
            }
            do {
                let part = try SyncIndexShards.decode(secret, prefix: prefix)
                loaded.state.revisions.merge(part.revisions) { $1 }
                loaded.index.merge(part.index) { $1 }
            } catch {
                throw KeychainError.decode("the sync state's index shard \"\(prefix)\": \(error)")
            }
            loaded.shards[prefix] = item
        }
    }

    /// Replaces the stored state (one transaction with `changes`); with
    /// `index`, the index shards that changed too.
    /// - Parameter dirty: the items whose entries may have changed since
    ///   the shards were stored (`nil`: any).
    func store(
        _ loaded: inout Loaded, with changes: [ImportChange] = [], index: Bool = false, dirty: Set<String>? = nil
    ) throws {
        var shardChanges: [ImportChange] = []
        var shards = loaded.shards
        var state = loaded.state
        if index {
            (shardChanges, shards) = indexChanges(loaded, into: &state, dirty: dirty)
        }
        // Sharded, the state's own item keeps no table: it stays small.
        if state.shardDigits != nil { state.revisions = [:] }
        var next = state.item(now: now())
        next.persistentID = loaded.stateItem.persistentID
        next.created = loaded.stateItem.created
        try store.syncApply(changes + shardChanges + [.replace(existing: loaded.stateItem, with: next)])
        next.revision = loaded.stateItem.revision + 1
        loaded.stateItem = next
        loaded.state.shardDigits = state.shardDigits
        loaded.state.shardPrefixes = state.shardPrefixes
        loaded.shards = shards
    }

    /// The writes that bring the stored shards to `loaded`'s table and
    /// index (only shards whose bytes changed), the shards after them, and
    /// the layout in `state`.
    func indexChanges(_ loaded: Loaded, into state: inout SyncState, dirty: Set<String>?) -> (
        [ImportChange], [String: Item]
    ) {
        var clean: Set<String> = []
        if let dirty, let digits = loaded.state.shardDigits {
            clean = Set(loaded.shards.keys).subtracting(dirty.map { String($0.prefix(digits)) })
        }
        let (digits, encoded, kept) = SyncIndexShards.split(
            revisions: loaded.state.revisions, index: loaded.index, minDigits: loaded.state.shardDigits ?? 0,
            limit: indexShardLimit, clean: clean)
        var changes: [ImportChange] = []
        var shards = loaded.shards
        for (prefix, secret) in encoded.sorted(by: { $0.key < $1.key }) {
            let old = loaded.shards[prefix]
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
        for (prefix, old) in loaded.shards.sorted(by: { $0.key < $1.key })
        where encoded[prefix] == nil && !kept.contains(prefix) {
            changes.append(.delete(existing: old))
            shards[prefix] = nil
        }
        state.shardDigits = digits
        state.shardPrefixes = kept.union(encoded.keys).sorted()
        return (changes, shards)
    }

    // MARK: Snapshots of the tree

    /// A commit's tree: every revision file from its listing; the
    /// revisions of the items in ``openedNames`` opened (authenticated).
    struct Snapshot {
        /// Every item's live revision files (a revoked device's later ones
        /// left out), sorted by dot.
        var files: [String: [IndexedFile]] = [:]
        /// The opened revisions, of the items in ``openedNames``.
        var revisions: [String: [Revision]] = [:]
        var openedNames: Set<String> = []
        var paths: Set<String> = []
        var heads: [String: DeviceHead] = [:]
        /// Revoked devices → the last counter of theirs still taken.
        var revoked: [String: UInt64] = [:]
        /// Items with a revision sealed under an older key epoch: re-sealed at the next export.
        var stale: Set<String> = []
        /// Items with a tombstone among their revisions.
        var tombstones: Set<String> = []

        /// The merged view of an opened item (`nil` for one the tree does not hold).
        func view(_ name: String) -> ItemView? {
            precondition(files[name] == nil || openedNames.contains(name), "a view of an item not opened")
            return revisions[name].flatMap(SyncMerge.view(of:))
        }
    }

    /// The tree names a key epoch this device does not know: its files cannot be opened yet.
    struct NewEpoch: Error {}

    /// Older epochs no header opens, as `NUMBER.DEVICE` (see ``adoptEpochs(_:loaded:)``).
    var unopenable: Set<String> = []

    /// The snapshot of `commit`: its listing, its heads and revocations
    /// opened, and every item whose files are not those `index` lists
    /// (verified before, under the vault's commitment) opened now: each of
    /// them must authenticate.
    /// - Throws: ``NewEpoch`` when the tree names a key epoch this device
    ///   does not know; ``SyncError/tampered(_:)``.
    func snapshot(
        _ commit: String?, keys: SyncKeys, trusting index: [String: IndexEntry], synced: String? = nil
    ) throws -> Snapshot {
        guard let commit else { return Snapshot() }
        if commit == synced, let snap = try indexedSnapshot(commit, keys: keys, index: index) { return snap }
        var snap = Snapshot()
        var devicePaths: [(path: String, blob: String)] = []
        for (path, blob) in try git.listing(of: commit) {
            if let (name, dot) = TreePath.parseRecord(path) {
                snap.files[name, default: []].append(IndexedFile(dot: dot, blob: blob))
                snap.paths.insert(path)
            } else if TreePath.parseHead(path) != nil || TreePath.parseRevoked(path) != nil {
                devicePaths.append((path, blob))
            } else if let (number, device) = TreePath.parseEpoch(path) {
                if !keys.knows(number: number, device: device) && !unopenable.contains("\(number).\(device)") {
                    throw NewEpoch()
                }
            } else if TreePath.parseHeader(path) == nil {
                throw SyncError.tampered("\(path) is not part of a sync tree")
            }
        }
        let contents = try git.blobs(Array(Set(devicePaths.map(\.blob))))
        for (path, blob) in devicePaths {
            do {
                if let device = TreePath.parseHead(path) {
                    snap.heads[device] = try DeviceHead.open(contents[blob] ?? [], device: device, keys: keys)
                } else if let device = TreePath.parseRevoked(path) {
                    snap.revoked[device] = try Revocation.open(contents[blob] ?? [], device: device, keys: keys).counter
                }
            } catch { throw SyncError.tampered("\(path) \(error)") }
        }
        for (name, files) in snap.files {
            // A revoked device's writes after its revocation count for nothing.
            let kept = files.filter { f in snap.revoked[f.dot.device].map { f.dot.counter <= $0 } ?? true }
            snap.files[name] = kept.sorted { $0.dot < $1.dot }
            for f in kept {
                guard let head = snap.heads[f.dot.device], head.counter >= f.dot.counter else {
                    throw SyncError.tampered(
                        "revision \(f.dot) of item \(name.prefix(12)) is newer than its device's head")
                }
            }
        }
        let unverified = snap.files.filter { name, files in
            guard let entry = index[name] else { return true }
            return entry.stale || entry.files != files
        }.map(\.key)
        try open(Set(unverified), in: &snap, keys: keys)
        return snap
    }

    /// Opens (authenticates) every revision of the items `names` in `snap`
    /// not opened yet, with one `cat-file` for the files this run has not read.
    func open(_ names: Set<String>, in snap: inout Snapshot, keys: SyncKeys) throws {
        let needed = names.subtracting(snap.openedNames).filter { snap.files[$0] != nil }.sorted()
        guard !needed.isEmpty else { return }
        var missing: Set<String> = []
        for name in needed {
            for f in snap.files[name] ?? [] {
                let path = TreePath.record(name: name, dot: f.dot)
                let cacheKey = "\(f.blob) \(path)"
                if opened[cacheKey] != nil { continue }
                if let own = written.removeValue(forKey: path) {
                    opened[cacheKey] = own
                } else {
                    missing.insert(f.blob)
                }
            }
        }
        let contents = try git.blobs(Array(missing))
        for name in needed {
            var revisions: [Revision] = []
            for f in snap.files[name] ?? [] {
                let path = TreePath.record(name: name, dot: f.dot)
                let cacheKey = "\(f.blob) \(path)"
                if let revision = opened[cacheKey] {
                    revisions.append(revision)
                    continue
                }
                do {
                    let revision = try Revision.open(contents[f.blob] ?? [], name: name, dot: f.dot, keys: keys)
                    opened[cacheKey] = revision
                    revisions.append(revision)
                } catch {
                    throw SyncError.tampered("\(path) \(error)")
                }
            }
            snap.revisions[name] = revisions
            snap.openedNames.insert(name)
            if revisions.contains(where: { $0.sealedUnder != keys.sealingID }) { snap.stale.insert(name) }
            if revisions.contains(where: { $0.item == nil }) { snap.tombstones.insert(name) }
        }
    }

    // MARK: The tree's next commit

    /// Stages `bytes` as the file at `path` for the next ``commit(_:)``.
    func writeFile(_ path: String, _ bytes: [UInt8]) throws {
        pendingRemovals.remove(path)
        pendingWrites[path] = bytes
    }

    /// Stages the removal of the file at `path` for the next ``commit(_:)``.
    func removeFile(_ path: String) {
        pendingWrites[path] = nil
        pendingRemovals.insert(path)
    }

    /// Commits what was staged onto the branch (``Git/commit(writes:removals:parent:message:)``:
    /// no file is written in a work tree); `false` when nothing was.
    @discardableResult
    func commit(_ message: String) throws -> Bool {
        guard !pendingWrites.isEmpty || !pendingRemovals.isEmpty else { return false }
        let parent = try git.resolve("HEAD")
        _ = try git.commit(writes: pendingWrites, removals: pendingRemovals, parent: parent, message: message)
        pendingWrites = [:]
        pendingRemovals = []
        return true
    }

    /// Makes the work tree's parent directory, mode 0700 (only sealed files
    /// live there, but names of files and commits need not be seen by others).
    func makePrivateParent() throws {
        let parent = NSStringPath(path: git.directory).parent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        chmod(parent, 0o700)
    }

    /// Starts from the branch's last commit: drops what a run cut short
    /// staged, and the files and index an older Fob kept checked out (the
    /// tree is read and written through git's objects alone, so nothing
    /// beside `.git` is ever looked at).
    func cleanWorkTree() throws {
        pendingWrites = [:]
        pendingRemovals = []
        let names = (try? FileManager.default.contentsOfDirectory(atPath: git.directory)) ?? []
        for name in names where name != ".git" {
            try FileManager.default.removeItem(atPath: git.directory + "/" + name)
        }
        if !names.filter({ $0 != ".git" }).isEmpty { unlink(git.directory + "/.git/index") }
    }

    // MARK: Export: the vault's changes become revisions

    /// One revision an export will write: the item's keyed name, the
    /// revision made once the export's dot is known, and the files it supersedes.
    typealias PlannedRevision = (name: String, make: (Dot) -> Revision, superseded: [Dot])

    /// Writes this vault's changes since the last merge as revisions and commits them.
    /// - Returns: how many revisions were written.
    func export(_ loaded: inout Loaded, base: inout Snapshot, current: inout Snapshot, forceHead: Bool) throws -> Int {
        let me = loaded.state.device
        var planned = try planChanges(loaded, base: &base, current: &current)
        // Tombstones are the items the tree holds and this vault does not: opened to tell (few).
        try open(Set(current.files.keys.filter { loaded.items[$0] == nil }), in: &current, keys: loaded.keys)
        let (resealed, collected, acknowledge) = housekeeping(current, planned: Set(planned.map(\.name)), me: me)
        planned += resealed
        exports = []
        // Files removed beside the exports: the snapshot after the commit is read whole.
        exportsRemovedOthers = !collected.isEmpty
        guard !planned.isEmpty || !collected.isEmpty || acknowledge || forceHead else { return 0 }
        // Reserve the counter in the vault before any file carries it.
        loaded.state.counter += 1
        try store(&loaded)
        let dot = Dot(device: me, counter: loaded.state.counter)
        var live = current.paths
        for path in collected {
            removeFile(path)
            live.remove(path)
        }
        for plan in planned { try stage(plan, dot: dot, keys: loaded.keys, live: &live) }
        try writeHead(loaded, current: current, live: live)
        var message = "fob sync: device \(me), \(planned.count) revision\(planned.count == 1 ? "" : "s")"
        if !collected.isEmpty {
            message += ", \(collected.count) tombstone\(collected.count == 1 ? "" : "s") collected"
        }
        try commit(message)
        return planned.count
    }

    /// The revisions of the items changed or deleted here since the last
    /// merge (only their files are opened, in `base` and `current`).
    func planChanges(_ loaded: Loaded, base: inout Snapshot, current: inout Snapshot) throws -> [PlannedRevision] {
        var candidates: [String] = []
        for (name, item) in loaded.items
        where loaded.state.revisions[name] != item.revision || loaded.state.resolved.contains(name) {
            candidates.append(name)
        }
        let deleted = loaded.state.revisions.keys.filter { loaded.items[$0] == nil }
        touched = Set(candidates).union(deleted)
        try open(touched, in: &base, keys: loaded.keys)
        try open(touched, in: &current, keys: loaded.keys)
        var planned: [PlannedRevision] = []
        for name in candidates.sorted() {
            guard let item = loaded.items[name] else { continue }
            let resolving = loaded.state.resolved.contains(name)
            if let plan = planEdit(
                name, item, base: base.view(name), current: current.view(name), me: loaded.state.device,
                resolving: resolving)
            {
                planned.append(plan)
            }
        }
        for name in deleted.sorted() {
            guard let currentView = current.view(name), currentView.item != nil else { continue }
            planned.append(
                (
                    name,
                    { dot in
                        var vector = currentView.vector
                        vector.add(dot)
                        return Revision(dot: dot, vector: vector, fieldDots: [:], item: nil, siblings: [])
                    }, currentView.live
                ))
        }
        return planned
    }

    /// The revision of an item edited here, or `nil` when none of its
    /// field groups differs from the last synced copy (and it is not being resolved).
    func planEdit(
        _ name: String, _ item: Item, base baseView: ItemView?, current currentView: ItemView?, me: String,
        resolving: Bool
    ) -> PlannedRevision? {
        var changed: [FieldGroup] = []
        for group in FieldGroup.allCases {
            if let b = baseView?.item, group.same(b, item) { continue }
            changed.append(group)
        }
        if baseView?.item != nil, changed.isEmpty, !resolving { return nil }
        // Never synced before: concurrent with whatever the tree holds,
        // but for this device's own export of it by a run that was cut short.
        let concurrent = baseView == nil
        let prior = concurrent ? nil : currentView
        let ownEarlier = concurrent ? (currentView?.live ?? []).filter { $0.device == me } : []
        return (
            name,
            { dot in
                var vector = prior?.vector ?? VersionVector()
                for earlier in ownEarlier { vector.add(earlier) }
                vector.add(dot)
                var next = prior?.item ?? item
                var dots = prior?.item == nil ? [:] : prior!.fieldDots
                for group in prior?.item == nil ? FieldGroup.allCases : changed {
                    group.copy(from: item, into: &next)
                    dots[group] = dot
                }
                next.modified = max(next.modified, item.modified)
                next.revision = 0
                next.persistentID = item.persistentID
                return Revision(
                    dot: dot, vector: vector, fieldDots: dots, item: next,
                    siblings: resolving ? [] : (prior?.siblings ?? []))
            }, prior?.live ?? ownEarlier
        )
    }

    /// Seals one planned revision at `dot` into the commit being staged and
    /// removes the files it supersedes; `live` follows.
    func stage(_ plan: PlannedRevision, dot: Dot, keys: SyncKeys, live: inout Set<String>) throws {
        let revision = plan.make(dot)
        let path = TreePath.record(name: plan.name, dot: dot)
        let sealed = revision.sealed(name: plan.name, keys: keys)
        try writeFile(path, sealed)
        // Kept as read back, so it is the same value another device opens.
        written[path] = try Revision.open(sealed, name: plan.name, dot: dot, keys: keys)
        exports.append((plan.name, dot, plan.superseded.filter { $0 != dot }))
        live.insert(path)
        for old in plan.superseded where old != dot {
            let oldPath = TreePath.record(name: plan.name, dot: old)
            removeFile(oldPath)
            live.remove(oldPath)
        }
    }

    /// What an export does beside this device's own changes:
    /// - items with a revision under an older key epoch are written again
    ///   under the current one (the same content, a new revision);
    /// - a tombstone every other (not revoked) device's head has seen is
    ///   removed (collected): this device's head, written in the same
    ///   commit, has seen it too;
    /// - a tombstone this device's head has not seen yet, and some other
    ///   device's has not either, makes it write its head, so that the
    ///   last device to see it can collect it.
    func housekeeping(_ current: Snapshot, planned: Set<String>, me: String) -> (
        resealed: [PlannedRevision], collected: [String],
        acknowledge: Bool
    ) {
        var resealed: [PlannedRevision] = []
        for name in current.stale.sorted() where !planned.contains(name) {
            guard let view = current.view(name) else { continue }
            resealed.append(
                (
                    name,
                    { dot in
                        var vector = view.vector
                        vector.add(dot)
                        return Revision(
                            dot: dot, vector: vector, fieldDots: view.fieldDots, item: view.item,
                            siblings: view.siblings)
                    }, view.live
                ))
        }
        var collected: [String] = []
        var acknowledge = false
        let others = current.heads.values.filter { current.revoked[$0.device] == nil && $0.device != me }
        for name in current.tombstones.sorted() where !planned.contains(name) && !current.stale.contains(name) {
            guard let view = current.view(name), view.item == nil else { continue }
            if others.allSatisfy({ head in view.live.allSatisfy(head.vector.includes) }) {
                collected += view.live.map { TreePath.record(name: name, dot: $0) }
            } else if let own = current.heads[me], !view.live.allSatisfy(own.vector.includes) {
                acknowledge = true
            }
        }
        return (resealed, collected, acknowledge)
    }

    func writeHead(_ loaded: Loaded, current: Snapshot, live: Set<String>) throws {
        var vector = VersionVector()
        for head in current.heads.values { vector.add(Dot(device: head.device, counter: head.counter)) }
        vector.add(Dot(device: loaded.state.device, counter: loaded.state.counter))
        let hash = SyncEngine.liveHash(live, keys: loaded.keys)
        let head = DeviceHead(
            device: loaded.state.device, counter: loaded.state.counter, vector: vector, liveHash: hash,
            name: loaded.state.name)
        try writeFile(TreePath.head(device: loaded.state.device), head.sealed(keys: loaded.keys))
    }

    // MARK: Checks

    /// Refuses heads that went back, vanished, or carry this device's id
    /// beyond what it wrote.
    func checkHeads(
        _ heads: [String: DeviceHead], revoked: [String: UInt64], state: SyncState, where place: String
    ) throws {
        if let counter = revoked[state.device] {
            throw SyncError.revoked(
                "this device, \(DeviceName.label(state.device, name: state.name)), was revoked from the sync tree after its counter \(counter); "
                    + "run `fob sync join \(state.remote)` to join again")
        }
        if let own = heads[state.device], own.counter > state.counter {
            throw SyncError.copied(
                "\(place) holds counter \(own.counter) of device \(DeviceName.label(state.device, name: state.name)), and this vault wrote at most \(state.counter)"
            )
        }
        for (device, counter) in state.seen.sorted(by: { $0.key < $1.key })
        where device != state.device && revoked[device] == nil {
            guard let head = heads[device] else {
                throw SyncError.tampered("\(place) lost device \(device) (its head was at counter \(counter))")
            }
            if head.counter < counter {
                throw SyncError.tampered(
                    "\(place) went back: device \(SyncEngine.label(device, heads: heads)) is at counter \(head.counter), and counter \(counter) was seen"
                )
            }
        }
    }

    /// Checks the merged tree against the one before the merge: nothing
    /// live removed without a newer revision; old revisions put back are
    /// dropped (and reported). Returns the paths dropped.
    func checkMerged(_ merged: inout Snapshot, before: Snapshot, state: SyncState, keys: SyncKeys) throws -> [String] {
        let removed = before.paths.subtracting(merged.paths)
        let removedNames = Set(removed.compactMap { TreePath.parseRecord($0)?.name })
        try open(removedNames, in: &merged, keys: keys)
        var before = before
        try open(removedNames, in: &before, keys: keys)
        for path in before.paths.subtracting(merged.paths) {
            guard let (name, dot) = TreePath.parseRecord(path) else { continue }
            let superseded = merged.revisions[name]?.contains { $0.vector.includes(dot) && $0.dot != dot } ?? false
            // A tombstone every device's head has seen may go (collected).
            let wasTombstone = before.revisions[name]?.contains { $0.dot == dot && $0.item == nil } ?? false
            let collected =
                wasTombstone
                && merged.heads.values.allSatisfy { merged.revoked[$0.device] != nil || $0.vector.includes(dot) }
            if !superseded && !collected {
                throw SyncError.tampered(
                    "revision \(dot) of item \(name.prefix(12)) was removed without a newer one")
            }
        }
        var replayed: [String] = []
        for path in merged.paths.subtracting(before.paths).sorted() {
            guard let (_, dot) = TreePath.parseRecord(path) else { continue }
            let seen = dot.device == state.device ? state.counter : (state.seen[dot.device] ?? 0)
            if dot.counter <= seen { replayed.append(path) }
        }
        return replayed
    }

    /// The keyed hash of a tree's live revision paths, as a head carries it.
    static func liveHash(_ paths: Set<String>, keys: SyncKeys) -> [UInt8] {
        Sodium.genericHash(Array(paths.sorted().joined(separator: "\n").utf8), key: keys.naming, length: 32)
    }

    /// Refuses a tree whose revision files disagree with a head that saw
    /// all of them: a head whose vector covers every revision and every
    /// other head of the tree was written over exactly these files, so its
    /// keyed hash of the live set must match (a file removed or added
    /// behind its back, which a device that never saw the tree before
    /// cannot tell otherwise).
    func checkLiveHashes(_ snap: inout Snapshot, keys: SyncKeys, where place: String) throws {
        var newest: [String: UInt64] = [:]
        for path in snap.paths {
            guard let (_, dot) = TreePath.parseRecord(path) else { continue }
            newest[dot.device] = max(newest[dot.device] ?? 0, dot.counter)
        }
        for head in snap.heads.values where snap.revoked[head.device] == nil {
            newest[head.device] = max(newest[head.device] ?? 0, head.counter)
        }
        var hash: [UInt8]?
        for head in snap.heads.values.sorted(by: { $0.device < $1.device }) where snap.revoked[head.device] == nil {
            guard newest.allSatisfy({ head.vector.includes(Dot(device: $0.key, counter: $0.value)) }) else { continue }
            if hash == nil {
                // An old revision put back beside the one that superseded it
                // is not live: it is dropped and reported by the merge. Only
                // an item with several files can hold one: those are opened.
                try open(Set(snap.files.filter { $0.value.count > 1 }.map(\.key)), in: &snap, keys: keys)
                var live = snap.paths
                for (name, revisions) in snap.revisions where revisions.count > 1 {
                    let kept = Set(SyncMerge.liveSet(revisions).map(\.dot))
                    for r in revisions where !kept.contains(r.dot) {
                        live.remove(TreePath.record(name: name, dot: r.dot))
                    }
                }
                hash = SyncEngine.liveHash(live, keys: keys)
            }
            guard hash == head.liveHash else {
                throw SyncError.tampered(
                    "\(place) holds other revision files than device \(SyncEngine.label(head.device, heads: snap.heads))'s head (counter \(head.counter)) says it saw"
                )
            }
        }
    }

    // MARK: Key epochs

    /// Takes in the key epochs of the commit `tree` this device does not know: the
    /// newest first, from the header that seals it (its master password,
    /// asked through ``treePassword``), then the older ones its epoch file
    /// holds. Stores them in the state. This device's own header stays as it
    /// is (sealing an older key; `fob passwd` seals the current one), so an
    /// epoch another device started at the same time can still be opened.
    /// - Throws: ``SyncError/newKey(_:)`` when no password can be asked;
    ///   ``SyncError/wrongPassword``; ``SyncError/tampered(_:)``.
    func adoptEpochs(_ tree: String, loaded: inout Loaded) throws {
        let files = try git.files(of: tree, under: "keys")
        var headers: [TreeHeader] = []
        for (path, bytes) in try git.files(of: tree, under: "headers") {
            guard TreePath.parseHeader(path) != nil else {
                throw SyncError.tampered("\(path) is not part of a sync tree")
            }
            do { headers.append(try TreeHeader.parse(bytes)) } catch { throw SyncError.tampered("\(path) \(error)") }
        }
        let before = loaded.state.currentEpoch
        // The devices' names as of the last sync (the new tree's heads need the new key).
        let named = loaded.state.syncedCommit.flatMap { try? snapshotDevices($0, keys: loaded.keys).heads } ?? [:]
        var password: SecretBytes?
        while true {
            let known = SyncKeys(epochs: loaded.state.epochs)
            let unknown = files.keys.compactMap(TreePath.parseEpoch).filter {
                !known.knows(number: $0.number, device: $0.device) && !unopenable.contains("\($0.number).\($0.device)")
            }
            guard let target = unknown.max(by: { ($0.number, $0.device) < ($1.number, $1.device) }) else { break }
            let starter = SyncEngine.label(target.device, heads: named)
            let name = "(epoch \(target.number) from device \(starter))"
            // Its device's header, or another device's that re-sealed it (`fob passwd`).
            let sealing = headers.filter { $0.epochNumber == target.number && $0.epochDevice == target.device }
            func open(_ given: SecretBytes) throws -> KeyEpoch? {
                for header in sealing { if let epoch = try header.open(password: given) { return epoch } }
                return nil
            }
            guard !sealing.isEmpty else {
                // An older epoch no header opens any more (one that lost to
                // another started at once, its device's header since
                // re-sealed): its files were written again under a newer key.
                let current = loaded.state.currentEpoch
                guard (target.number, target.device) < (current.number, current.device) else {
                    throw SyncError.tampered("keys/\(target.number).\(target.device).key has no header to open it")
                }
                unopenable.insert("\(target.number).\(target.device)")
                continue
            }
            var epoch = try password.flatMap(open)
            if epoch == nil {
                guard let ask = treePassword else { throw SyncError.newKey(name) }
                let given = try ask(starter)
                guard let opened = try open(given) else { throw SyncError.wrongPassword }
                password = given
                epoch = opened
            }
            guard let epoch else { break }
            loaded.state.learn(epoch)
            let path = TreePath.epoch(epoch)
            do {
                for older in try EpochFile.open(files[path] ?? [], epoch: epoch) { loaded.state.learn(older) }
            } catch { throw SyncError.tampered("\(path) \(error)") }
        }
        loaded.keys = SyncKeys(epochs: loaded.state.epochs)
        // What was verified under the older keys is opened again (so every
        // file under an older key is found and written again), also by a
        // later run should this one stop before its end.
        markIndexStale(&loaded)
        try store(&loaded, index: true)
        let taken = loaded.state.currentEpoch
        guard taken.number != before.number || taken.device != before.device else { return }
        messages(
            "fob: took the sync tree's new key (epoch \(taken.number), from device \(SyncEngine.label(taken.device, heads: named)))\n"
        )
    }

    /// Marks every item of the index as holding files under an older key:
    /// the index still lists the tree's files (a snapshot never takes it for
    /// the whole tree while one is marked), and each is opened again.
    func markIndexStale(_ loaded: inout Loaded) {
        for name in loaded.index.keys { loaded.index[name]?.stale = true }
    }

    /// Starts a new key epoch: a random key, its epoch file (sealing every
    /// older key under it) and this device's header (sealing it under
    /// `password`), the state first; committed locally, pushed by the next
    /// sync, which also writes every item again under the new key.
    func startEpoch(_ loaded: inout Loaded, password: SecretBytes) throws -> KeyEpoch {
        let headerPath = TreePath.header(device: loaded.state.device)
        let old = try git.file(headerPath).flatMap { try? TreeHeader.parse($0) }
        let older = loaded.state.epochs
        let number = (older.map(\.number).max() ?? 1) + 1
        let epoch = KeyEpoch(number: number, device: loaded.state.device, key: SecretBytes.random(count: 32))
        let header = try TreeHeader.make(epoch: epoch, password: password, kdf: old?.kdf ?? .default)
        loaded.state.learn(epoch)
        loaded.keys = SyncKeys(epochs: loaded.state.epochs)
        // Every file is opened at the next export, to be written again under the new key.
        markIndexStale(&loaded)
        try store(&loaded, index: true)
        try writeFile(TreePath.epoch(epoch), EpochFile.sealed(epoch, older: older))
        try writeFile(headerPath, header.bytes)
        return epoch
    }

    /// Forgets an epoch this device started whose files never reached a
    /// commit (`fob passwd --rotate-key` or `--revoke` cut short after the
    /// state stored its key): no file was sealed under it yet, and no other
    /// device could open one.
    func undoUnfinishedEpoch(_ loaded: inout Loaded) throws {
        let epoch = loaded.state.currentEpoch
        guard epoch.number > 1, epoch.device == loaded.state.device, try git.file(TreePath.epoch(epoch)) == nil
        else { return }
        loaded.state.laterEpochs.removeLast()
        loaded.keys = SyncKeys(epochs: loaded.state.epochs)
        try store(&loaded)
        messages("fob: the new sync key of an interrupted key rotation was dropped; rotate again\n")
    }

    /// The snapshot of `commit` (fetched, or a first clone), taking in its new key epochs first.
    /// - Parameter synced: the synced commit, when the index may stand for its listing.
    func adoptingSnapshot(_ commit: String, loaded: inout Loaded, synced: String? = nil) throws -> Snapshot {
        do { return try snapshot(commit, keys: loaded.keys, trusting: loaded.index, synced: synced) } catch is NewEpoch
        {
            // A revoked device is told so before it is asked for a password.
            let own = TreePath.revoked(device: loaded.state.device)
            if try git.listing(of: commit, under: "devices").contains(where: { $0.path == own }) {
                throw SyncError.revoked(
                    "this device, \(DeviceName.label(loaded.state.device, name: loaded.state.name)), was revoked from the sync tree; "
                        + "run `fob sync join \(loaded.state.remote)` to join again")
            }
            try adoptEpochs(commit, loaded: &loaded)
            return try snapshot(commit, keys: loaded.keys, trusting: loaded.index)
        }
    }

    // MARK: Merge into the vault

    /// Merges the items whose files differ from the index (and those the
    /// export looked at) into the vault, in one transaction with the state
    /// and the index of `snapshot`.
    func mergeIntoVault(_ loaded: inout Loaded, snapshot: inout Snapshot, commit: String?) throws -> Outcome {
        var changed = touched
        for (name, files) in snapshot.files where loaded.index[name]?.files != files { changed.insert(name) }
        for (name, entry) in loaded.index where entry.stale { changed.insert(name) }
        for name in loaded.index.keys where snapshot.files[name] == nil { changed.insert(name) }
        try open(changed, in: &snapshot, keys: loaded.keys)
        var index: [String: IndexEntry] = [:]
        for (name, files) in snapshot.files {
            // Files under an older key are marked: the next export opens
            // them again and writes the item under the current key.
            index[name] =
                changed.contains(name)
                ? IndexEntry(files: files, versions: 0, stale: snapshot.stale.contains(name)) : loaded.index[name]
        }
        var changes: [ImportChange] = []
        var revisions = loaded.state.revisions
        var merged = 0
        for name in changed.sorted() {
            // Items the tree does not hold (yet): kept, and exported next time.
            guard let view = snapshot.view(name) else { continue }
            if view.hasConflict { index[name]?.versions = view.siblings.count + 1 }
            let stored = loaded.items[name]
            guard var item = view.item else {
                revisions[name] = nil
                if let stored {
                    changes.append(.delete(existing: stored))
                    merged += 1
                }
                continue
            }
            // Said once, where the delete is undone.
            // Not on a first merge: a device joining the tree deleted nothing.
            if view.editBeatDelete, stored == nil, loaded.state.syncedCommit != nil {
                messages(
                    "fob: \(item.displayName) was edited on one device while deleted on another: the edit is kept\n")
            }
            if let stored {
                if SyncMerge.sameContent(stored, item) {
                    revisions[name] = stored.revision
                    continue
                }
                item.persistentID = stored.persistentID
                item.revision = stored.revision + 1
                changes.append(.replace(existing: stored, with: item))
                revisions[name] = stored.revision + 1
            } else {
                item.revision = 1
                changes.append(.add(item))
                revisions[name] = 1
            }
            merged += 1
        }
        // A name neither in the tree nor in the vault is forgotten.
        for name in revisions.keys where snapshot.files[name] == nil && loaded.items[name] == nil {
            revisions[name] = nil
            changed.insert(name)
        }
        for (device, head) in snapshot.heads where device != loaded.state.device {
            loaded.state.seen[device] = max(loaded.state.seen[device] ?? 0, head.counter)
        }
        for device in snapshot.revoked.keys { loaded.state.seen[device] = nil }
        let conflicts = index.values.reduce(0) { $0 + ($1.versions > 0 ? 1 : 0) }
        loaded.state.syncedCommit = commit
        loaded.state.revisions = revisions
        loaded.state.resolved = []
        loaded.state.lastSync = UInt64(max(0, now().timeIntervalSince1970))
        loaded.state.lastMerged = UInt64(merged)
        loaded.state.lastConflicts = UInt64(conflicts)
        loaded.index = index
        try store(&loaded, with: changes, index: true, dirty: changed)
        return Outcome(merged: merged, conflicts: conflicts, written: 0)
    }

    // MARK: The cycle

    /// Brings the work tree into being when it is missing (a vault moved
    /// to a new machine): a clone of the remote.
    func ensureWorkTree(remote: String) throws {
        if FileManager.default.fileExists(atPath: git.directory + "/.git") { return }
        try cloneTree(remote)
    }

    /// Replaces the tree's directory with a clone of `remote`'s sync branch
    /// that checks nothing out (the tree is read through git's objects).
    /// - Throws: ``SyncError/remoteUnreachable(_:)`` with git's `fatal:` line.
    func cloneTree(_ remote: String) throws {
        try? FileManager.default.removeItem(atPath: git.directory)
        try makePrivateParent()
        let clone = try git.run(
            ["clone", "-q", "--no-checkout", "-b", Git.branch, remote, git.directory], network: true, show: true,
            inDirectory: false)
        guard clone.status == 0 else { throw SyncError.remoteUnreachable(Git.firstLine(clone.error)) }
    }

    /// One sync: export, fetch, check, merge, push.
    /// - Parameters:
    ///   - network: fetch and push (`fob resolve` commits locally only).
    ///   - forceHead: write this device's head even without changes (a first sync).
    /// - Throws: ``SyncError``, `KeychainError`, file errors.
    public func sync(network: Bool = true, forceHead: Bool = false) throws -> Outcome {
        var loaded = try load()
        try ensureWorkTree(remote: loaded.state.remote)
        try cleanWorkTree()
        try undoUnfinishedEpoch(&loaded)
        var head = try git.resolve("HEAD")
        let synced = loaded.state.shardDigits == nil ? nil : loaded.state.syncedCommit
        var current = try head.map { try adoptingSnapshot($0, loaded: &loaded, synced: synced) } ?? Snapshot()
        head = try git.resolve("HEAD")
        try checkHeads(current.heads, revoked: current.revoked, state: loaded.state, where: "the local tree")
        var base = current
        if let synced = loaded.state.syncedCommit, synced != head {
            base =
                (try? git.resolve(synced)) != nil
                ? try snapshot(synced, keys: loaded.keys, trusting: loaded.index) : current
        }
        if loaded.state.syncedCommit == nil { base = Snapshot() }
        let wrote = try export(&loaded, base: &base, current: &current, forceHead: forceHead)
        let exported = try git.resolve("HEAD")
        if let exported, exported != head {
            head = exported
            current =
                try exportedSnapshot(current, commit: exported, keys: loaded.keys)
                ?? snapshot(head, keys: loaded.keys, trusting: loaded.index)
        }
        self.written = [:]
        guard network else {
            var outcome = try mergeIntoVault(&loaded, snapshot: &current, commit: head)
            outcome.written = wrote
            return outcome
        }
        for attempt in 1...4 {
            let fetch = try git.run(["fetch", "-q", "origin"], network: true, show: true)
            guard fetch.status == 0 else { throw SyncError.remoteUnreachable(Git.firstLine(fetch.error)) }
            let remoteRef = "refs/remotes/origin/\(Git.branch)"
            if let remote = try git.resolve(remoteRef) {
                // Nothing new fetched (a sync with nothing to do): the local tree is the remote's.
                // The remote still at the synced commit (only this device wrote): the index stands for it.
                let indexed = loaded.state.shardDigits == nil ? nil : loaded.state.syncedCommit
                var remoteTree =
                    remote == head ? current : try adoptingSnapshot(remote, loaded: &loaded, synced: indexed)
                try checkHeads(remoteTree.heads, revoked: remoteTree.revoked, state: loaded.state, where: "the remote")
                try checkLiveHashes(&remoteTree, keys: loaded.keys, where: "the remote")
                head = try git.resolve("HEAD")
                let before = head
                // A remote this tree holds already (nothing new, or only this device's export) needs no merge.
                if try !git.contains(remote, head: head) {
                    do {
                        current = try mergeRemote(remote, head: head, loaded: loaded, before: current)
                    } catch {
                        // Nothing of a refused tree stays in the local one.
                        if let before { try? git.moveBranch(to: before) }
                        throw error
                    }
                    head = try git.resolve("HEAD")
                }
            }
            var outcome = try mergeIntoVault(&loaded, snapshot: &current, commit: head)
            outcome.written = wrote
            guard let local = head, local != (try git.resolve(remoteRef)) else { return outcome }
            // Everything the push carries of this device's, committed by this run or earlier.
            outcome.written = try unsent(device: loaded.state.device)
            let push = try git.run(
                ["push", "-q", "origin", "HEAD:refs/heads/\(Git.branch)"], network: true, show: true)
            if push.status == 0 {
                // The push moved the remote-tracking branch too: no fetch after it.
                return outcome
            }
            let rejected =
                push.error.contains("rejected") || push.error.contains("non-fast-forward")
                || push.error.contains("fetch first")
            guard rejected else { throw SyncError.remoteUnreachable(Git.firstLine(push.error)) }
            if attempt == 4 { throw SyncError.pushRejected(Git.firstLine(push.error)) }
        }
        throw SyncError.pushRejected("the remote kept moving")
    }

    /// The revisions this device committed to the local tree that the
    /// remote, as last fetched or pushed, lacks: what the next push sends
    /// (an export's, and a `fob resolve`'s committed before it). Revisions
    /// superseded before they were sent are not counted.
    func unsent(device: String) throws -> Int {
        guard let head = try git.resolve("HEAD") else { return 0 }
        let remote = try git.resolve("refs/remotes/origin/\(Git.branch)")
        return try git.added(from: remote, to: head, under: "items").reduce(0) {
            $0 + (TreePath.parseRecord($1)?.dot.device == device ? 1 : 0)
        }
    }

    /// Merges the fetched tree into the local one and checks the result.
    /// - Parameters:
    ///   - remote: the fetched commit.
    ///   - head: the local branch's commit (`nil` before its first).
    func mergeRemote(_ remote: String, head: String?, loaded: Loaded, before: Snapshot) throws -> Snapshot {
        if let head {
            _ = try git.merge(remote, into: head)
        } else {
            try git.check(["update-ref", Git.branchRef, remote])
        }
        var merged = try snapshot(try git.resolve("HEAD"), keys: loaded.keys, trusting: loaded.index)
        let replayed = try checkMerged(&merged, before: before, state: loaded.state, keys: loaded.keys)
        guard !replayed.isEmpty else { return merged }
        for path in replayed {
            messages("fob: ignored an old revision put back into the tree: \(path)\n")
            removeFile(path)
        }
        try commit("fob sync: device \(loaded.state.device) drops \(replayed.count) replayed revisions")
        merged = try snapshot(try git.resolve("HEAD"), keys: loaded.keys, trusting: loaded.index)
        return merged
    }

    /// The heads and revocations of `commit`.
    func snapshotDevices(_ commit: String, keys: SyncKeys) throws -> (
        heads: [String: DeviceHead], revoked: [String: UInt64]
    ) {
        var heads: [String: DeviceHead] = [:]
        var revoked: [String: UInt64] = [:]
        for (path, bytes) in try git.files(of: commit, under: "devices") {
            do {
                if let device = TreePath.parseHead(path) {
                    heads[device] = try DeviceHead.open(bytes, device: device, keys: keys)
                } else if let device = TreePath.parseRevoked(path) {
                    revoked[device] = try Revocation.open(bytes, device: device, keys: keys).counter
                } else {
                    throw SyncError.tampered("\(path) is not part of a sync tree")
                }
            } catch let error as TreeFormatError {
                throw SyncError.tampered("\(path) \(error)")
            }
        }
        return (heads, revoked)
    }
}

/// The parent directory of a path, without Foundation's NSString.
struct NSStringPath {
    let path: String
    var parent: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

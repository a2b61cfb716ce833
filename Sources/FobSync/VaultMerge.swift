import FobStore
import FoundationEssentials

/// The stage that merges: a fetched tree into the local one (git's merge,
/// then the checks), and the merged tree into the vault (every item whose
/// files changed, in one transaction with the state and its index).
struct VaultMerger {
    let git: Git
    let reader: TreeReader
    let vault: SyncVault
    let now: () -> Date
    let messages: @Sendable (String) -> Void

    /// Merges the items whose files differ from the index (and those the
    /// export looked at) into the vault, in one transaction with the state
    /// and the index of `snapshot`.
    func mergeIntoVault(_ run: inout SyncRun, snapshot: inout TreeSnapshot, commit: String?) throws
        -> SyncEngine.Outcome
    {
        var changed = run.touched
        for (name, files) in snapshot.files where run.index[name]?.files != files { changed.insert(name) }
        for (name, entry) in run.index where entry.stale { changed.insert(name) }
        for name in run.index.keys where snapshot.files[name] == nil { changed.insert(name) }
        try reader.open(changed, in: &snapshot, run: &run)
        // The items the tree changed are compared whole with the vault's.
        try vault.fill(&run, names: changed)
        var index: [String: IndexEntry] = [:]
        for (name, files) in snapshot.files {
            // Files under an older key are marked: the next export opens
            // them again and writes the item under the current key.
            index[name] =
                changed.contains(name)
                ? IndexEntry(files: files, versions: 0, stale: snapshot.stale.contains(name)) : run.index[name]
        }
        var changes: [ImportChange] = []
        var revisions = run.state.revisions
        var merged = 0
        for name in changed.sorted() {
            // Items the tree does not hold (yet): kept, and exported next time.
            guard let view = snapshot.view(name) else { continue }
            if view.hasConflict { index[name]?.versions = view.siblings.count + 1 }
            let stored = run.items[name]
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
            if view.editBeatDelete, stored == nil, run.state.syncedCommit != nil {
                messages(
                    "fob: \(item.displayName) was edited on one device while deleted on another: the edit is kept\n")
            }
            if let stored {
                // The tree's identity and dates too: every device converges on them.
                if SyncMerge.sameContent(stored, item), SyncMerge.sameIdentity(stored, item) {
                    revisions[name] = stored.revision
                    continue
                }
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
        try separateIdentities(&run, changes: &changes, revisions: &revisions)
        // A name neither in the tree nor in the vault is forgotten.
        for name in revisions.keys where snapshot.files[name] == nil && run.items[name] == nil {
            revisions[name] = nil
            changed.insert(name)
        }
        for (device, head) in snapshot.heads where device != run.state.device {
            run.state.seen[device] = max(run.state.seen[device] ?? 0, head.counter)
        }
        for (device, counter) in snapshot.revoked {
            run.state.revoked[device] = counter
            run.state.seen[device] = nil
        }
        let conflicts = index.values.reduce(0) { $0 + ($1.versions > 0 ? 1 : 0) }
        run.state.syncedCommit = commit
        run.state.revisions = revisions
        run.state.resolved = []
        run.state.lastSync = UInt64(max(0, now().timeIntervalSince1970))
        run.state.lastMerged = UInt64(merged)
        run.state.lastConflicts = UInt64(conflicts)
        run.index = index
        try vault.store(&run, with: changes, index: true, dirty: changed)
        return SyncEngine.Outcome(merged: merged, conflicts: conflicts, written: 0)
    }

    /// Gives every item of the vault after `changes` a persistent ID of its
    /// own. A rename on one device racing an edit (or another rename) of
    /// the item on another leaves two tree names with one ID: the least
    /// name keeps it, and each other takes an ID derived from the ID and
    /// its name under the naming key, so every device picks the same.
    func separateIdentities(_ run: inout SyncRun, changes: inout [ImportChange], revisions: inout [String: UInt64])
        throws
    {
        var final = run.items
        var pending: [String: Int] = [:]
        for (i, change) in changes.enumerated() {
            switch change {
            case .add(let item), .replace(_, let item):
                let name = run.keys.name(of: item)
                final[name] = item
                pending[name] = i
            case .delete(let item): final[run.keys.name(of: item)] = nil
            }
        }
        var byID: [UUID: [String]] = [:]
        for (name, item) in final { byID[item.persistentID, default: []].append(name) }
        let shared = byID.values.filter { $0.count > 1 }.flatMap { $0.sorted().dropFirst() }
        guard !shared.isEmpty else { return }
        try vault.fill(&run, names: shared.filter { pending[$0] == nil })
        for name in shared.sorted() {
            guard var item = final[name] else { continue }
            item.persistentID = SyncMerge.separateIdentity(item.persistentID, name: name, keys: run.keys)
            if let i = pending[name], case .replace(let stored, _) = changes[i] {
                changes[i] = .replace(existing: stored, with: item)
            } else if let i = pending[name] {
                changes[i] = .add(item)
            } else if let stored = run.items[name] {
                item = stored
                item.persistentID = SyncMerge.separateIdentity(stored.persistentID, name: name, keys: run.keys)
                item.revision = stored.revision + 1
                changes.append(.replace(existing: stored, with: item))
                revisions[name] = stored.revision + 1
            }
        }
    }

    /// Merges the fetched tree into the local one and checks the result.
    /// - Parameters:
    ///   - remote: the fetched commit.
    ///   - head: the local branch's commit (`nil` before its first).
    func mergeRemote(_ remote: String, head: String?, run: inout SyncRun, before: TreeSnapshot) throws -> TreeSnapshot {
        if let head {
            _ = try git.merge(remote, into: head)
        } else {
            try git.check(["update-ref", Git.branchRef, remote])
        }
        var merged = try reader.snapshot(try git.resolve("HEAD"), run: &run)
        let replayed = try TreeChecks(reader: reader).checkMerged(&merged, before: before, run: &run)
        guard !replayed.isEmpty else { return merged }
        for path in replayed {
            messages("fob: ignored an old revision put back into the tree: \(path)\n")
            run.removeFile(path)
        }
        try run.commit(git: git)
        merged = try reader.snapshot(try git.resolve("HEAD"), run: &run)
        return merged
    }
}

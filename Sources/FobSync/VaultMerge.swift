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
        let renames = renamesRacingEdits(snapshot, changed: changed, run: run)
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
            if view.editBeatDelete, stored == nil, run.state.syncedCommit != nil, renames[name] == nil {
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
        for (old, survivor) in renames.sorted(by: { $0.key < $1.key }) {
            try foldRename(old, into: survivor, snapshot: snapshot, run: &run, changes: &changes, revisions: &revisions)
        }
        try foldConcurrentRenames(snapshot, run: &run, changes: &changes, revisions: &revisions)
        try separateIdentities(&run, changes: &changes, revisions: &revisions)
        // A name neither in the tree nor in the vault is forgotten.
        for name in revisions.keys where snapshot.files[name] == nil && run.items[name] == nil {
            revisions[name] = nil
            changed.insert(name)
        }
        Self.takeDevices(of: snapshot, into: &run.state)
        let conflicts = Self.conflicts(index, state: &run.state, revisions: revisions)
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

    /// The items with conflicting versions after a merge: those `index`
    /// says have some, and those the next export gives one (the kept names
    /// of ``SyncState/renamedAway``, which forgets each dropped name whose
    /// tombstone, written with its kept version, was merged).
    static func conflicts(_ index: [String: IndexEntry], state: inout SyncState, revisions: [String: UInt64]) -> Int {
        state.renamedAway = state.renamedAway.filter { revisions[$0.key] != nil }
        let aside = Set(state.renamedAway.values).filter { (index[$0]?.versions ?? 0) == 0 }
        return index.values.reduce(0) { $0 + ($1.versions > 0 ? 1 : 0) } + aside.count
    }

    /// The highest counter seen of every other device, and the revocations, of `snapshot`.
    static func takeDevices(of snapshot: TreeSnapshot, into state: inout SyncState) {
        for (device, head) in snapshot.heads where device != state.device {
            state.seen[device] = max(state.seen[device] ?? 0, head.counter)
        }
        for (device, counter) in snapshot.revoked {
            state.revoked[device] = counter
            state.seen[device] = nil
        }
    }

    /// The renames (`fob mv`) that raced an edit of the old name on another
    /// device, by old name: an old name whose edit beat a concurrent delete,
    /// and another name that holds its persistent ID without such a race
    /// (the least, should there be several). Every device that holds the
    /// same tree finds the same.
    func renamesRacingEdits(_ snapshot: TreeSnapshot, changed: Set<String>, run: SyncRun) -> [String: String] {
        var holders: [UUID: [String]] = [:]
        for (name, item) in run.items where snapshot.files[name] != nil {
            holders[item.persistentID, default: []].append(name)
        }
        for name in changed where snapshot.files[name] != nil {
            guard let item = snapshot.view(name)?.item else { continue }
            holders[item.persistentID, default: []].append(name)
        }
        var out: [String: String] = [:]
        for name in changed.sorted() {
            guard snapshot.files[name] != nil, let view = snapshot.view(name), view.editBeatDelete,
                let item = view.item
            else { continue }
            let survivor = Set(holders[item.persistentID] ?? []).sorted().first { other in
                guard other != name else { return false }
                guard changed.contains(other) else { return run.items[other] != nil }
                guard let otherView = snapshot.view(other) else { return false }
                return !otherView.editBeatDelete && otherView.item?.persistentID == item.persistentID
            }
            if let survivor { out[name] = survivor }
        }
        return out
    }

    /// One item from a rename racing an edit: the parts the edit of `old`
    /// changed that the rename's delete had not seen are taken into
    /// `survivor` (the renamed item keeps its name, identity and every
    /// other part), and `old` leaves the vault. The state's revisions of
    /// both stay behind the vault's, so the next export writes the
    /// survivor's new revision and `old`'s tombstone; every device that
    /// merged the same tree writes the same values, which merge without
    /// a conflict.
    func foldRename(
        _ old: String, into survivor: String, snapshot: TreeSnapshot, run: inout SyncRun,
        changes: inout [ImportChange], revisions: inout [String: UInt64]
    ) throws {
        guard let view = snapshot.view(old), let edited = view.item else { return }
        try vault.fill(&run, names: [survivor])
        let pending = changes.firstIndex { change in
            if case .add(let item) = change { return run.keys.name(of: item) == survivor }
            if case .replace(_, let item) = change { return run.keys.name(of: item) == survivor }
            return false
        }
        var target: Item
        if let pending, case .add(let item) = changes[pending] {
            target = item
        } else if let pending, case .replace(_, let item) = changes[pending] {
            target = item
        } else if let stored = run.items[survivor] {
            target = stored
        } else {
            return
        }
        var deleted = VersionVector()
        for revision in SyncMerge.liveSet(snapshot.revisions[old] ?? []) where revision.item == nil {
            deleted = deleted.joined(revision.vector)
        }
        for group in FieldGroup.allCases {
            guard let dot = view.fieldDots[group], !deleted.includes(dot) else { continue }
            group.copy(from: edited, into: &target)
        }
        target.created = min(target.created, edited.created)
        target.modified = max(target.modified, edited.modified)
        let stored = run.items[survivor]
        target.revision = (stored?.revision ?? 0) + 1
        let change: ImportChange = stored.map { .replace(existing: $0, with: target) } ?? .add(target)
        if let pending { changes[pending] = change } else { changes.append(change) }
        revisions[survivor] = stored?.revision ?? 0
        changes.removeAll { change in
            if case .add(let item) = change { return run.keys.name(of: item) == old }
            if case .replace(_, let item) = change { return run.keys.name(of: item) == old }
            return false
        }
        if let previous = run.items[old] {
            changes.append(.delete(existing: previous))
            revisions[old] = previous.revision
        } else {
            revisions[old] = 0
        }
        messages(
            "fob: \(edited.displayName) was renamed to \(target.displayName) on one device while edited on another: "
                + "\(target.displayName) has both\n")
    }

    /// The vault's items after `changes`, by keyed name, and the index of
    /// each name's change in `changes`.
    func final(_ run: SyncRun, changes: [ImportChange]) -> (items: [String: Item], pending: [String: Int]) {
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
        return (final, pending)
    }

    /// One item from two renames of it on two devices (`fob mv` to two
    /// names, neither device having seen the other's): tree names that
    /// hold one persistent ID, each live in the tree. The one the later
    /// rename wrote is kept (the later modified date, then the least tree
    /// name: every device that holds the tree picks the same, as every
    /// device holds the tree's dates), and each other name leaves the vault: the state's revision
    /// of it stays behind, so the next export writes its tombstone (every
    /// device writes the same delete, which merge into one). A dropped name
    /// whose values differ from the kept one's in a part a user wrote
    /// (``FieldGroup/userData``) is recorded (``SyncState/renamedAway``):
    /// the same export writes those values beside the kept item as a
    /// conflicting version, left to `fob resolve`. Said naming both names
    /// and the parts the dropped name held otherwise: as a conflict the
    /// merge resolved when they hold nothing a user wrote.
    func foldConcurrentRenames(
        _ snapshot: TreeSnapshot, run: inout SyncRun, changes: inout [ImportChange],
        revisions: inout [String: UInt64]
    ) throws {
        var byID: [UUID: [(name: String, item: Item)]] = [:]
        // The vault's items after the merge hold the tree's identity and dates.
        for (name, item) in final(run, changes: changes).items where snapshot.files[name] != nil {
            byID[item.persistentID, default: []].append((name, item))
        }
        // Only the IDs with two names are sorted (a sort of every ID formats each UUID at each comparison).
        let shared = byID.filter { $0.value.count > 1 }.sorted { $0.key.uuidString < $1.key.uuidString }
        for (_, names) in shared {
            try vault.fill(&run, names: names.map(\.name).filter { run.items[$0] != nil })
            let filled = final(run, changes: changes).items
            let ordered = names.map { (name: $0.name, item: filled[$0.name] ?? $0.item) }.sorted { x, y in
                x.item.modified != y.item.modified ? x.item.modified > y.item.modified : x.name < y.name
            }
            let kept = ordered[0]
            for dropped in ordered.dropFirst() {
                changes.removeAll { change in
                    if case .add(let item) = change { return run.keys.name(of: item) == dropped.name }
                    if case .replace(_, let item) = change { return run.keys.name(of: item) == dropped.name }
                    return false
                }
                if let previous = run.items[dropped.name] {
                    changes.append(.delete(existing: previous))
                    revisions[dropped.name] = previous.revision
                } else {
                    revisions[dropped.name] = 0
                }
                let differing = FieldGroup.allCases.filter { !$0.same(kept.item, dropped.item) }
                let parts = differing.map(\.name).joined(separator: ", ")
                let outcome =
                    "two devices renamed one item at once; the later name (\(kept.item.displayName)) is kept, "
                    + "the other (\(dropped.item.displayName)) is dropped"
                guard differing.contains(where: FieldGroup.userData.contains) else {
                    messages(
                        "fob: resolved a conflict: \(outcome)"
                            + (differing.isEmpty ? "" : ", with its differing \(parts)") + "\n")
                    continue
                }
                // What a user wrote is never dropped: the next export keeps it beside the kept item.
                run.state.renamedAway[dropped.name] = kept.name
                messages(
                    "fob: conflict: \(outcome), and its differing \(parts) \(differing.count == 1 ? "is" : "are") "
                        + "kept as a conflicting version of \(kept.item.displayName) "
                        + "(`fob conflicts --show`, `fob resolve`)\n")
            }
        }
    }

    /// Gives every item of the vault after `changes` a persistent ID of its
    /// own. A rename on one device racing an edit (or another rename) of
    /// the item on another leaves two tree names with one ID: the least
    /// name keeps it, and each other takes an ID derived from the ID and
    /// its name under the naming key, so every device picks the same.
    func separateIdentities(_ run: inout SyncRun, changes: inout [ImportChange], revisions: inout [String: UInt64])
        throws
    {
        let (final, pending) = final(run, changes: changes)
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

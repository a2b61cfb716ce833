import FobStore
import FoundationEssentials

/// The stage that writes this vault's changes since the last merge into
/// the tree: one revision file per changed item under one new counter,
/// the files they supersede removed, tombstones every device saw
/// collected, files under an older key written again, and this device's
/// head; committed locally.
struct Exporter {
    let git: Git
    let reader: TreeReader
    let vault: SyncVault

    /// One revision an export will write: the item's keyed name, the
    /// revision made once the export's dot is known, and the files it supersedes.
    typealias PlannedRevision = (name: String, make: (Dot) -> Revision, superseded: [Dot])

    /// Writes this vault's changes since the last merge as revisions and commits them.
    /// - Returns: how many revisions were written.
    func export(_ run: inout SyncRun, base: inout TreeSnapshot, current: inout TreeSnapshot, forceHead: Bool) throws
        -> Int
    {
        let me = run.state.device
        var planned = try planChanges(&run, base: &base, current: &current)
        // Tombstones are the items the tree holds and this vault does not: opened to tell (few).
        try reader.open(Set(current.files.keys.filter { run.items[$0] == nil }), in: &current, run: &run)
        let (resealed, collected, acknowledge) = housekeeping(current, planned: Set(planned.map(\.name)), me: me)
        planned += resealed
        run.exports = []
        // Files removed beside the exports: the snapshot after the commit is read whole.
        run.exportsRemovedOthers = !collected.isEmpty
        // A head written before signing keys is written again, carrying this device's key.
        let unsignedHead = current.heads[me].map { $0.publicKey == nil } ?? false
        // Devices taken in before origins were kept: listed as added by this device, now.
        for id in [me] + run.state.signers.keys where run.state.origins[id] == nil {
            run.state.origins[id] = DeviceRoster.Origin(device: me, counter: run.state.counter, time: run.seconds)
        }
        let roster = Self.roster(of: run.state, current: current.rosters[me])
        guard !planned.isEmpty || !collected.isEmpty || acknowledge || forceHead || unsignedHead || roster != nil
        else { return 0 }
        // Reserve the counter in the vault before any file carries it.
        run.state.counter += 1
        try vault.store(&run)
        let dot = Dot(device: me, counter: run.state.counter)
        var live = current.paths
        for path in collected {
            run.removeFile(path)
            live.remove(path)
        }
        for plan in planned { try stage(plan, dot: dot, run: &run, live: &live) }
        if let roster, let key = run.state.signingKey {
            run.writeFile(TreePath.roster(device: me), roster.signed(by: me, key: key))
        }
        try writeHead(&run, current: current, live: live)
        try run.commit(git: git)
        return planned.count
    }

    /// The revisions of the items changed or deleted here since the last
    /// merge (only their files are opened, in `base` and `current`).
    func planChanges(_ run: inout SyncRun, base: inout TreeSnapshot, current: inout TreeSnapshot) throws
        -> [PlannedRevision]
    {
        let (candidates, deleted) = run.localChanges
        // Only the items changed here are read whole (with their secrets).
        try vault.fill(&run, names: candidates)
        run.touched = Set(candidates).union(deleted)
        try reader.open(run.touched, in: &base, run: &run)
        try reader.open(run.touched, in: &current, run: &run)
        var planned: [PlannedRevision] = []
        for name in candidates.sorted() {
            guard let item = run.items[name] else { continue }
            let resolving = run.state.resolved.contains(name)
            if let plan = planEdit(
                name, item, base: base.view(name), current: current.view(name), me: run.state.device,
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
        return try keepRenamedAway(planned, deleted: deleted, run: &run, current: &current)
    }

    /// `planned` with the values of each name a merge dropped from two
    /// concurrent renames (``SyncState/renamedAway``) kept beside the item
    /// that holds its persistent ID: a sibling of that item's revision (its
    /// name, the dropped one's values in every part that differs), written
    /// with the dropped name's tombstone. Every device that merged the same
    /// tree writes the same sibling, which merge into one.
    func keepRenamedAway(
        _ planned: [PlannedRevision], deleted: [String], run: inout SyncRun, current: inout TreeSnapshot
    ) throws -> [PlannedRevision] {
        let dropped = deleted.filter { run.state.renamedAway[$0] != nil }.sorted()
        guard !dropped.isEmpty else { return planned }
        var holders: [UUID: String] = [:]
        for (name, item) in run.items { holders[item.persistentID] = name }
        var asides: [String: [Sibling]] = [:]
        for name in dropped {
            guard let view = current.view(name), let item = view.item, let kept = holders[item.persistentID] else {
                continue
            }
            try vault.fill(&run, names: [kept])
            guard let stored = run.items[kept] else { continue }
            let parts = Set(FieldGroup.allCases.filter { !$0.same(stored, item) })
            guard !parts.isDisjoint(with: FieldGroup.userData) else { continue }
            var version = stored
            for group in parts { group.copy(from: item, into: &version) }
            version.created = item.created
            version.modified = item.modified
            version.revision = 0
            let writer = SyncMerge.writer(of: parts, dots: view.fieldDots)
            asides[kept, default: []].append(Sibling(item: version, parts: parts, device: writer))
        }
        var out = planned
        for (kept, siblings) in asides.sorted(by: { $0.key < $1.key }) {
            if let i = out.firstIndex(where: { $0.name == kept }) {
                let make = out[i].make
                out[i].make = { dot in
                    var revision = make(dot)
                    revision.siblings += siblings
                    return revision
                }
                continue
            }
            try reader.open([kept], in: &current, run: &run)
            guard let view = current.view(kept), view.item != nil else { continue }
            out.append((kept, Self.rewrite(view, adding: siblings), view.live))
        }
        return out
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
    func stage(_ plan: PlannedRevision, dot: Dot, run: inout SyncRun, live: inout Set<String>) throws {
        let revision = plan.make(dot)
        let path = TreePath.record(name: plan.name, dot: dot)
        // Kept as decoded from what was sealed, so it is the same value another device opens.
        let (sealed, read) = try revision.sealedAndRead(name: plan.name, keys: run.keys)
        try run.writeSigned(path, sealed)
        run.written[path] = read
        run.exports.append((plan.name, dot, plan.superseded.filter { $0 != dot }))
        live.insert(path)
        for old in plan.superseded where old != dot {
            let oldPath = TreePath.record(name: plan.name, dot: old)
            run.removeFile(oldPath)
            live.remove(oldPath)
        }
    }

    /// A new revision of `view` at the dot it is given: the view's item,
    /// parts and siblings (and `siblings` more), its vector with the dot
    /// added, so it supersedes the live revisions it was merged from.
    static func rewrite(_ view: ItemView, adding siblings: [Sibling] = []) -> (Dot) -> Revision {
        { dot in
            var vector = view.vector
            vector.add(dot)
            return Revision(
                dot: dot, vector: vector, fieldDots: view.fieldDots, item: view.item,
                siblings: view.siblings + siblings)
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
    func housekeeping(_ current: TreeSnapshot, planned: Set<String>, me: String) -> (
        resealed: [PlannedRevision], collected: [String],
        acknowledge: Bool
    ) {
        var resealed: [PlannedRevision] = []
        for name in current.stale.sorted() where !planned.contains(name) {
            guard let view = current.view(name) else { continue }
            resealed.append((name, Self.rewrite(view), view.live))
        }
        var collected: [String] = []
        var acknowledge = false
        // A device left out (one that joined before a rotation) may hold the item still: collected once it saw it.
        let others =
            current.heads.values.filter { current.revoked[$0.device] == nil && $0.device != me }
            + current.leftOut.values
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

    /// This device's roster when the tree's (`current`) lacks a device
    /// whose key it holds, a revocation it knows, or who added a device:
    /// every key it holds (its own, and those it took in) with the
    /// cut-offs it knows and who added each (``SyncState/origins``), one
    /// version above the tree's. `nil` when the tree's says all that.
    static func roster(of state: SyncState, current: DeviceRoster?) -> DeviceRoster? {
        guard let own = state.signingKey else { return nil }
        var members = [
            state.device: DeviceRoster.Member(publicKey: own.publicKey, origin: state.origins[state.device])
        ]
        for (id, key) in state.signers {
            members[id] = DeviceRoster.Member(publicKey: key, cutOff: state.revoked[id], origin: state.origins[id])
        }
        guard members != current?.members else { return nil }
        return DeviceRoster(version: (current?.version ?? 0) + 1, members: members)
    }

    func writeHead(_ run: inout SyncRun, current: TreeSnapshot, live: Set<String>) throws {
        var vector = VersionVector()
        for head in current.heads.values { vector.add(Dot(device: head.device, counter: head.counter)) }
        vector.add(Dot(device: run.state.device, counter: run.state.counter))
        let hash = TreeChecks.liveHash(live, keys: run.keys)
        let head = DeviceHead(
            device: run.state.device, counter: run.state.counter, vector: vector, liveHash: hash,
            name: run.state.name, publicKey: run.state.signingKey?.publicKey,
            unsignedUpTo: run.state.unsignedUpTo[run.state.device] ?? 0)
        try run.writeSigned(TreePath.head(device: run.state.device), head.sealed(keys: run.keys))
    }
}

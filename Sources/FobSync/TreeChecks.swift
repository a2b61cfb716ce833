import FobStore
import FoundationEssentials

/// The stage that checks a tree before its merge: heads that went back or
/// vanished, this device's counter written elsewhere (a copied vault),
/// live files that disagree with a head that saw them all, and files
/// removed without a newer revision or put back after one.
struct TreeChecks {
    let reader: TreeReader

    /// Refuses heads that went back, vanished, or carry this device's id
    /// beyond what it wrote.
    static func checkHeads(
        _ heads: [String: DeviceHead], revoked: [String: UInt64], state: SyncState, where place: String
    ) throws {
        if let counter = revoked[state.device] {
            throw SyncError.revoked(
                "this device, \(DeviceName.label(state.device, name: state.name)), was revoked from the sync tree after its counter \(counter); "
                    + "run `fob sync join \(state.remote)` to join again")
        }
        if let own = heads[state.device], own.counter > state.counter {
            throw SyncError.copied(
                "\(place) holds counter \(own.counter) of device \(DeviceName.label(state.device, name: state.name)),\n"
                    + "     and this vault wrote at most \(state.counter)"
            )
        }
        // Revocations only grow: a tree without one this device took in, or
        // with another cut-off, was rewritten to let a revoked device back.
        for (device, counter) in state.revoked.sorted(by: { $0.key < $1.key }) {
            guard let named = revoked[device] else {
                throw SyncError.tampered(
                    "\(place) lacks the revocation of device \(SyncEngine.label(device, heads: heads)) (cut off after counter \(counter))"
                )
            }
            guard named == counter else {
                throw SyncError.tampered(
                    "\(place) cuts device \(SyncEngine.label(device, heads: heads)) off after counter \(named), and it was cut off after \(counter)"
                )
            }
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
    func checkMerged(_ merged: inout TreeSnapshot, before: TreeSnapshot, run: inout SyncRun) throws -> [String] {
        let removed = before.paths.subtracting(merged.paths)
        let removedNames = Set(removed.compactMap { TreePath.parseRecord($0)?.name })
        try reader.open(removedNames, in: &merged, run: &run)
        var before = before
        try reader.open(removedNames, in: &before, run: &run)
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
            if dot.counter <= run.state.watermark(of: dot.device) { replayed.append(path) }
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
    func checkLiveHashes(_ snap: inout TreeSnapshot, run: inout SyncRun, where place: String) throws {
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
                try reader.open(Set(snap.files.filter { $0.value.count > 1 }.map(\.key)), in: &snap, run: &run)
                var live = snap.paths
                for (name, revisions) in snap.revisions where revisions.count > 1 {
                    let kept = Set(SyncMerge.liveSet(revisions).map(\.dot))
                    for r in revisions where !kept.contains(r.dot) {
                        live.remove(TreePath.record(name: name, dot: r.dot))
                    }
                }
                hash = TreeChecks.liveHash(live, keys: run.keys)
            }
            guard hash == head.liveHash else {
                throw SyncError.tampered(
                    "\(place) holds other revision files than device \(SyncEngine.label(head.device, heads: snap.heads))'s head (counter \(head.counter)) says it saw"
                )
            }
        }
    }

    /// Refuses a fetched tree whose device roster of another device is
    /// older than the one this device took before, or gone; then takes
    /// the versions of `rosters`.
    /// - Throws: ``SyncError/tampered(_:)``.
    static func checkRosters(_ rosters: [String: DeviceRoster], state: inout SyncState) throws {
        for (device, held) in state.rosterVersions.sorted(by: { $0.key < $1.key }) {
            guard let roster = rosters[device] else {
                throw SyncError.tampered("the device roster of device \(device) was removed from the tree")
            }
            guard roster.version >= held else {
                throw SyncError.tampered(
                    DeviceRoster.Refusal.wentBack(held: held, offered: roster.version).description
                        + " (\(TreePath.roster(device: device)))")
            }
        }
        for (device, roster) in rosters where device != state.device {
            state.rosterVersions[device] = roster.version
        }
    }
}

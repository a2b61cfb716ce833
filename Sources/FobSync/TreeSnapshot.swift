import FobStore
import FoundationEssentials

/// A commit's tree: every revision file from its listing; the
/// revisions of the items in ``openedNames`` opened (authenticated).
struct TreeSnapshot {
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
    /// Revoked devices → how many of their files written after their
    /// cut-off this snapshot left out (reported by name).
    var ignored: [String: Int] = [:]
    /// Devices this snapshot leaves out, by id → their heads: new devices
    /// under an older key epoch after a rotation
    /// (``TreeSignatures/takeIn(_:path:key:revocations:rotated:run:)``).
    /// None of their files is in ``files``, ``paths``, ``heads`` or
    /// ``rosters``: they are not merged, and no export removes them.
    var leftOut: [String: DeviceHead] = [:]
    /// Items with a revision sealed under an older key epoch: re-sealed at the next export.
    var stale: Set<String> = []
    /// Items with a tombstone among their revisions.
    var tombstones: Set<String> = []
    /// The device rosters, by the device that signs each.
    var rosters: [String: DeviceRoster] = [:]

    /// The merged view of an opened item (`nil` for one the tree does not hold).
    func view(_ name: String) -> ItemView? {
        precondition(files[name] == nil || openedNames.contains(name), "a view of an item not opened")
        return revisions[name].flatMap(SyncMerge.view(of:))
    }
}

/// The heads, revocations and device rosters of a tree's `devices/`, and
/// the devices it leaves out (``TreeSnapshot/leftOut``).
typealias TreeDevices = (
    heads: [String: DeviceHead], revoked: [String: UInt64], rosters: [String: DeviceRoster],
    leftOut: [String: DeviceHead]
)

/// The tree names a key epoch this device does not know: its files cannot be opened yet.
struct NewEpoch: Error {}

/// The stage that reads the tree: a commit's listing, its heads and
/// revocations, and the revision files a run opens (authenticates), each
/// once per run (``SyncRun/opened``).
struct TreeReader {
    let git: Git
    /// The lowest header costs taken (``TreeHeader/floor``).
    let kdfFloor: KDFParameters

    /// The header `bytes` at `path`, refused when malformed, of an older
    /// format, or asking for costs below `floor` (a remote that lowered
    /// them, so that the next header sealed under them is cheap to guess).
    /// - Throws: ``SyncError/tampered(_:)``.
    static func header(_ bytes: [UInt8], path: String, floor: KDFParameters) throws -> TreeHeader {
        let header: TreeHeader
        do { header = try TreeHeader.parse(bytes) } catch { throw SyncError.tampered("\(path) \(error)") }
        guard TreeHeader.meets(header.kdf, floor: floor) else {
            let passes = header.kdf.opslimit
            let costs = "\(passes) pass\(passes == 1 ? "" : "es"), \(header.kdf.memlimit / 1024) KiB"
            throw SyncError.tampered("\(path) asks for key derivation costs below the interactive preset (\(costs))")
        }
        return header
    }

    /// The snapshot of `commit`: its listing, its heads and revocations
    /// opened, and every item whose files are not those `index` lists
    /// (verified before, under the vault's commitment) opened now: each of
    /// them must authenticate.
    /// - Throws: ``NewEpoch`` when the tree names a key epoch this device
    ///   does not know; ``SyncError/tampered(_:)``.
    /// - Parameter synced: the synced commit, when the index may stand for its listing.
    func snapshot(_ commit: String?, run: inout SyncRun, synced: String? = nil) throws -> TreeSnapshot {
        guard let commit else { return TreeSnapshot() }
        let keys = run.keys
        let index = run.index
        if commit == synced, let snap = try indexedSnapshot(commit, run: &run) { return snap }
        var snap = TreeSnapshot()
        var devicePaths: [(path: String, blob: String)] = []
        var headerPaths: [(path: String, blob: String)] = []
        for (path, blob) in try git.listing(of: commit) {
            if let (name, dot) = TreePath.parseRecord(path) {
                snap.files[name, default: []].append(IndexedFile(dot: dot, blob: blob))
                snap.paths.insert(path)
            } else if TreePath.parseHead(path) != nil || TreePath.parseRevoked(path) != nil
                || TreePath.parseRoster(path) != nil
            {
                devicePaths.append((path, blob))
            } else if let (number, device) = TreePath.parseEpoch(path) {
                if !keys.knows(number: number, device: device) && !run.unopenable.contains("\(number).\(device)") {
                    throw NewEpoch()
                }
            } else if TreePath.parseHeader(path) != nil {
                headerPaths.append((path, blob))
            } else {
                throw SyncError.tampered("\(path) is not part of a sync tree")
            }
        }
        let contents = try git.blobs(Array(Set((devicePaths + headerPaths).map(\.blob))))
        for (path, blob) in headerPaths { _ = try TreeReader.header(contents[blob] ?? [], path: path, floor: kdfFloor) }
        (snap.heads, snap.revoked, snap.rosters, snap.leftOut) = try devices(
            devicePaths.map { ($0.path, contents[$0.blob] ?? []) }, run: &run)
        let cutOff = snap.revoked.merging(run.state.revoked) { min($0, $1) }
        for (name, files) in snap.files {
            // A device left out counts for nothing in this read, as one cut off before its first write.
            let files = files.filter { f in snap.leftOut[f.dot.device] == nil }
            for f in snap.files[name] ?? [] where snap.leftOut[f.dot.device] != nil {
                snap.paths.remove(TreePath.record(name: name, dot: f.dot))
            }
            if files.isEmpty {
                snap.files[name] = nil
                continue
            }
            // A revoked device's writes after its revocation count for nothing
            // (also when the tree lost its revocation: the checks refuse that tree).
            let kept = files.filter { f in cutOff[f.dot.device].map { f.dot.counter <= $0 } ?? true }
            for f in files where cutOff[f.dot.device].map({ f.dot.counter > $0 }) ?? false {
                snap.ignored[f.dot.device, default: 0] += 1
            }
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
        try open(Set(unverified), in: &snap, run: &run)
        return snap
    }

    /// Opens (authenticates) every revision of the items `names` in `snap`
    /// not opened yet, with one `cat-file` for the files this run has not read.
    func open(_ names: Set<String>, in snap: inout TreeSnapshot, run: inout SyncRun) throws {
        let keys = run.keys
        let needed = names.subtracting(snap.openedNames).filter { snap.files[$0] != nil }.sorted()
        guard !needed.isEmpty else { return }
        var missing: Set<String> = []
        for name in needed {
            for f in snap.files[name] ?? [] {
                let path = TreePath.record(name: name, dot: f.dot)
                let cacheKey = "\(f.blob) \(path)"
                if run.opened[cacheKey] != nil { continue }
                if let own = run.written.removeValue(forKey: path) {
                    run.opened[cacheKey] = own
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
                if let revision = run.opened[cacheKey] {
                    revisions.append(revision)
                    continue
                }
                let (content, signed) = try TreeSignatures.content(
                    contents[f.blob] ?? [], path: path, device: f.dot.device, counter: f.dot.counter, state: run.state)
                do {
                    var revision = try Revision.open(content, name: name, dot: f.dot, keys: keys)
                    revision.signed = signed
                    run.opened[cacheKey] = revision
                    revisions.append(revision)
                } catch {
                    throw SyncError.tampered("\(path) \(error)")
                }
            }
            snap.revisions[name] = revisions
            snap.openedNames.insert(name)
            // Under an older key, or written before signing keys: written again, signed.
            if revisions.contains(where: { $0.sealedUnder != keys.sealingID || !$0.signed }) { snap.stale.insert(name) }
            if revisions.contains(where: { $0.item == nil }) { snap.tombstones.insert(name) }
        }
    }

    /// The heads, revocations, device rosters and devices left out of `commit`.
    func snapshotDevices(_ commit: String, run: inout SyncRun) throws -> TreeDevices {
        try devices(try git.files(of: commit, under: "devices").map { ($0.key, $0.value) }, run: &run)
    }

    /// The heads, revocations, device rosters and devices left out
    /// (``TreeSnapshot/leftOut``) of the files `files` (path, content) of
    /// `devices/`: heads first, so that a device's key is taken in before a
    /// revocation or roster it signed is checked (``TreeSignatures``). A
    /// device left out has neither its head nor its roster among them.
    func devices(_ files: [(path: String, bytes: [UInt8])], run: inout SyncRun) throws -> TreeDevices {
        var heads: [String: DeviceHead] = [:]
        var revoked: [String: UInt64] = [:]
        var rosters: [String: DeviceRoster] = [:]
        var leftOut: [String: DeviceHead] = [:]
        // A tree with a revocation (a joining device knows none yet) has
        // older key epochs a revoked device holds; after a rotation, whoever
        // kept the key it replaced (a master password that leaked) holds one.
        let revocations = !run.state.revoked.isEmpty || files.contains { TreePath.parseRevoked($0.path) != nil }
        let rotated = run.state.epochs.count > 1
        for (path, bytes) in files.sorted(by: { $0.path < $1.path }) {
            if let device = TreePath.parseHead(path) {
                let (head, taken) = try TreeSignatures.head(
                    bytes, path: path, device: device, revocations: revocations, rotated: rotated, run: &run)
                if taken { heads[device] = head } else { leftOut[device] = head }
            } else if TreePath.parseRevoked(path) == nil, TreePath.parseRoster(path) == nil {
                throw SyncError.tampered("\(path) is not part of a sync tree")
            }
        }
        for (path, bytes) in files {
            guard let device = TreePath.parseRevoked(path) else { continue }
            revoked[device] = try TreeSignatures.revocation(bytes, path: path, device: device, run: run).counter
        }
        for (path, bytes) in files.sorted(by: { $0.path < $1.path }) {
            guard let device = TreePath.parseRoster(path), leftOut[device] == nil else { continue }
            rosters[device] = try TreeSignatures.roster(bytes, path: path, device: device, run: &run)
        }
        try Self.checkRosterRevocations(rosters, revoked: revoked, heads: heads, state: run.state)
        return (heads, revoked, rosters, leftOut)
    }

    /// Refuses a tree that lacks a revocation, or holds one with another
    /// cut-off, that the roster of a current device lists: a revocation
    /// file is written with the revoking device's roster and never goes,
    /// so a tree without it was rewritten to let the revoked device's
    /// later writes back, also at a device that has not met the
    /// revocation yet (this check is for that device). A revoked device's
    /// own roster is not taken at its word.
    /// - Throws: ``SyncError/tampered(_:)``, naming the devices.
    static func checkRosterRevocations(
        _ rosters: [String: DeviceRoster], revoked: [String: UInt64], heads: [String: DeviceHead], state: SyncState
    ) throws {
        for (signer, roster) in rosters.sorted(by: { $0.key < $1.key })
        where revoked[signer] == nil && state.revoked[signer] == nil {
            for (id, member) in roster.members.sorted(by: { $0.key < $1.key }) {
                // One this device knows is checked with the heads (``TreeChecks/checkHeads(_:revoked:state:where:)``).
                guard let cut = member.cutOff, revoked[id] != cut, state.revoked[id] == nil else { continue }
                let named = "device \(SyncEngine.label(id, heads: heads))"
                let by = "device \(SyncEngine.label(signer, heads: heads))"
                guard let held = revoked[id] else {
                    throw SyncError.tampered(
                        "the tree lacks the revocation of \(named) that the roster of \(by) lists "
                            + "(cut off after counter \(cut))")
                }
                throw SyncError.tampered(
                    "the tree cuts \(named) off after counter \(held), and the roster of \(by) after \(cut)")
            }
        }
    }

    /// The snapshot of the synced commit from the index, which lists what
    /// this device verified of its tree (the commit's id binds the tree):
    /// only its heads are read. `nil` where the listing must tell (a
    /// revoked device: its later files are in the tree, not in the index;
    /// a device left out: its files, the same).
    func indexedSnapshot(_ commit: String, run: inout SyncRun) throws -> TreeSnapshot? {
        let index = run.index
        // Files under an older key are opened again: the listing tells.
        guard !index.values.contains(where: \.stale) else { return nil }
        var snap = TreeSnapshot()
        (snap.heads, snap.revoked, snap.rosters, snap.leftOut) = try snapshotDevices(commit, run: &run)
        guard snap.revoked.isEmpty, snap.leftOut.isEmpty else { return nil }
        snap.paths.reserveCapacity(index.count)
        for (name, entry) in index where !entry.files.isEmpty {
            snap.files[name] = entry.files
            for file in entry.files { snap.paths.insert(TreePath.record(name: name, dot: file.dot)) }
        }
        return snap
    }

    /// The snapshot of this run's export commit, made from `before` (the
    /// snapshot it was committed on) and the files the export wrote and
    /// removed: only their blob ids and the heads are read. `nil` for a big
    /// export (the whole listing is read then).
    func exportedSnapshot(_ before: TreeSnapshot, commit: String, run: inout SyncRun) throws -> TreeSnapshot? {
        let keys = run.keys
        let exports = run.exports
        guard exports.count <= 256, !run.exportsRemovedOthers else { return nil }
        var snap = before
        (snap.heads, snap.revoked, snap.rosters, snap.leftOut) = try snapshotDevices(commit, run: &run)
        guard snap.revoked == before.revoked, Set(snap.leftOut.keys) == Set(before.leftOut.keys) else { return nil }
        let paths = exports.map { TreePath.record(name: $0.name, dot: $0.dot) }
        var blobs: [String: String] = [:]
        for (path, blob) in try git.listing(of: commit, paths: paths) { blobs[path] = blob }
        for (export, path) in zip(exports, paths) {
            guard let blob = blobs[path], let revision = run.written[path],
                before.files[export.name] == nil || before.openedNames.contains(export.name)
            else { return nil }
            var files = (snap.files[export.name] ?? []).filter { !export.superseded.contains($0.dot) }
            files.append(IndexedFile(dot: export.dot, blob: blob))
            snap.files[export.name] = files.sorted { $0.dot < $1.dot }
            let kept = (snap.revisions[export.name] ?? []).filter { !export.superseded.contains($0.dot) }
            snap.revisions[export.name] = kept + [revision]
            snap.openedNames.insert(export.name)
            if !(kept + [revision]).contains(where: { $0.sealedUnder != keys.sealingID || !$0.signed }) {
                snap.stale.remove(export.name)
            }
            if revision.item == nil { snap.tombstones.insert(export.name) }
            run.opened["\(blob) \(path)"] = revision
            for old in export.superseded { snap.paths.remove(TreePath.record(name: export.name, dot: old)) }
            snap.paths.insert(path)
        }
        return snap
    }
}

import FoundationEssentials

/// The files only this device writes, and the check that a fetched tree
/// left them as this device wrote them.
extension SyncEngine {
    /// Whether `path` is a file only `device` writes: its head, roster and
    /// key-derivation header, the key epochs it started and its revisions
    /// (which another device removes once a newer revision supersedes
    /// them, but never changes).
    static func ownFile(_ path: String, device: String) -> Bool {
        if let record = TreePath.parseRecord(path) { return record.dot.device == device }
        if let epoch = TreePath.parseEpoch(path) { return epoch.device == device }
        return [TreePath.head(device: device), TreePath.roster(device: device), TreePath.header(device: device)]
            .contains(path)
    }

    /// Refuses a fetched commit `remote` that holds, of the files only this
    /// device writes, other than what it wrote: a head it never wrote
    /// (``checkOwnHead(remote:remoteTree:current:head:run:)``: a copy of
    /// this vault), or, since the merge base with the local `head`, a file
    /// removed, put back as an older version or changed (a revision only
    /// when changed). This device's header, which no signature covers (its
    /// salt and costs are bound into the sealed key's associated data
    /// only), is so compared with the one this device wrote: another salt,
    /// or another device's header copied over it, would otherwise be
    /// merged, and no longer open with this device's password (a later
    /// `join` with it is told the password is wrong). Unchecked, git's
    /// merge would take the remote's version, or stop on a conflict with
    /// this device's newer one at this and every later sync. A file the
    /// remote left as it was at the merge base passes (this device's newer
    /// version, not pushed yet, differs).
    /// - Throws: ``SyncError/copied(_:)``; ``SyncError/tampered(_:)`` naming the file.
    func checkOwnFiles(
        remote: String, remoteTree: TreeSnapshot, current: TreeSnapshot, head: String?, run: SyncRun
    ) throws {
        try checkOwnHead(remote: remote, remoteTree: remoteTree, current: current, head: head, run: run)
        guard let head else { return }
        let device = run.state.device
        let base = try git.run(["merge-base", head, remote])
        // Unrelated histories: the merge refuses them.
        guard base.status == 0 else { return }
        let changes = try git.changes(from: base.text.filter { !$0.isWhitespace }, to: remote).filter {
            Self.ownFile($0.path, device: device)
                && (TreePath.parseRecord($0.path) == nil || $0.status == "M")
        }
        guard !changes.isEmpty else { return }
        var local: [String: String] = [:]
        for entry in try git.listing(of: head, paths: changes.map(\.path)) { local[entry.path] = entry.blob }
        for change in changes.sorted(by: { $0.path < $1.path }) where change.blob != local[change.path] {
            guard let blob = change.blob else {
                throw SyncError.tampered("the remote removed \(change.path), a file only this device writes")
            }
            if try git.versions(of: change.path, in: head).contains(blob) {
                throw SyncError.tampered(
                    "the remote rolled \(change.path) back to an older version, and only this device writes it")
            }
            throw SyncError.tampered("\(change.path) was changed by the remote; this device wrote another")
        }
    }
}

extension Git {
    /// The files `other` added, changed or removed since `base`: each
    /// path, git's status letter (`A`, `M`, `D`…) and its blob in
    /// `other` (`nil` when removed), with one `diff-tree`.
    func changes(from base: String, to other: String) throws(SyncError) -> [(
        path: String, status: Character, blob: String?
    )] {
        Git.rawEntries(
            try check(["diff-tree", "-r", "-z", "--raw", "--no-abbrev", "--no-renames", base, other]).output)
    }

    /// Every blob `path` held in the history of `commit`, with one `log`.
    func versions(of path: String, in commit: String) throws(SyncError) -> Set<String> {
        let log = try check(["log", "-z", "--raw", "--no-abbrev", "--no-renames", "--format=", commit, "--", path])
        return Set(Git.rawEntries(log.output).compactMap(\.blob))
    }

    /// The entries of git's `--raw -z` output (`:MODE MODE BLOB BLOB
    /// STATUS`, NUL, the path, NUL): path, status letter and the later blob
    /// (`nil` for a removal).
    static func rawEntries(_ output: [UInt8]) -> [(path: String, status: Character, blob: String?)] {
        var entries: [(path: String, status: Character, blob: String?)] = []
        var fields = output.split(separator: 0, omittingEmptySubsequences: true).makeIterator()
        while let meta = fields.next() {
            guard meta.first == 58 else { continue }
            let parts = meta.split(separator: 32)
            guard parts.count == 5, let status = parts[4].first, let path = fields.next() else { continue }
            let blob = String(decoding: parts[3], as: UTF8.self)
            entries.append(
                (
                    String(decoding: path, as: UTF8.self), Character(UnicodeScalar(status)),
                    blob.allSatisfy { $0 == "0" } ? nil : blob
                ))
        }
        return entries
    }
}

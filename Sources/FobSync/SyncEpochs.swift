import FobStore
import FoundationEssentials

/// The stage that keeps the tree's key epochs: takes in the epochs a
/// fetched tree started (asking the master password of the header that
/// seals the newest), starts a new one (`fob passwd --rotate-key`, `fob
/// devices --revoke`), and drops one a run cut short.
struct EpochKeeper {
    let git: Git
    let reader: TreeReader
    let vault: SyncVault
    let messages: @Sendable (String) -> Void
    /// Asks the master password of a header (``SyncEngine/treePassword``).
    let treePassword: ((String) throws -> SecretBytes)?
    /// The lowest header costs taken (``TreeHeader/floor``).
    let kdfFloor: KDFParameters

    /// Takes in the key epochs of the commit `tree` this device does not know: the
    /// newest first, from the header that seals it (its master password,
    /// asked through ``treePassword``), then the older ones its epoch file
    /// holds. Stores them in the state. This device's own header stays as it
    /// is (sealing an older key; `fob passwd` seals the current one), so an
    /// epoch another device started at the same time can still be opened.
    /// - Throws: ``SyncError/newKey(_:)`` when no password can be asked;
    ///   ``SyncError/wrongPassword``; ``SyncError/tampered(_:)``.
    func adoptEpochs(_ tree: String, run: inout SyncRun) throws {
        let files = try git.files(of: tree, under: "keys")
        var headers: [TreeHeader] = []
        for (path, bytes) in try git.files(of: tree, under: "headers") {
            guard TreePath.parseHeader(path) != nil else {
                throw SyncError.tampered("\(path) is not part of a sync tree")
            }
            headers.append(try TreeReader.header(bytes, path: path, floor: kdfFloor))
        }
        let before = run.state.currentEpoch
        // The devices' names as of the last sync (the new tree's heads need the new key).
        var copy = run
        let named = run.state.syncedCommit.flatMap { try? reader.snapshotDevices($0, run: &copy).heads } ?? [:]
        var password: SecretBytes?
        while true {
            let known = SyncKeys(epochs: run.state.epochs)
            let unknown = files.keys.compactMap(TreePath.parseEpoch).filter {
                !known.knows(number: $0.number, device: $0.device)
                    && !run.unopenable.contains("\($0.number).\($0.device)")
            }
            guard let target = unknown.max(by: { ($0.number, $0.device) < ($1.number, $1.device) }) else { break }
            let targetPath = "keys/\(target.number).\(target.device).key"
            let epochFile = try TreeSignatures.epochFile(
                files[targetPath] ?? [], path: targetPath, starter: target.device, state: run.state)
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
                let current = run.state.currentEpoch
                guard (target.number, target.device) < (current.number, current.device) else {
                    throw SyncError.tampered("keys/\(target.number).\(target.device).key has no header to open it")
                }
                run.unopenable.insert("\(target.number).\(target.device)")
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
            let older: [KeyEpoch]
            if TreeSignatures.key(of: target.device, state: run.state) == nil {
                // A starter whose key this device does not hold yet (one that
                // joined since): checked against its signed head in the tree.
                older = try TreeSignatures.epochsAtJoin(
                    files[targetPath] ?? [], path: targetPath, newest: epoch,
                    head: try git.file(TreePath.head(device: target.device), of: tree)
                ).older
            } else {
                do { older = try EpochFile.open(epochFile, epoch: epoch) } catch {
                    throw SyncError.tampered("\(TreePath.epoch(epoch)) \(error)")
                }
            }
            run.state.learn(epoch)
            for epoch in older { run.state.learn(epoch) }
        }
        run.refreshKeys()
        // What was verified under the older keys is opened again (so every
        // file under an older key is found and written again), also by a
        // later run should this one stop before its end.
        run.markIndexStale()
        try vault.store(&run, index: true)
        let taken = run.state.currentEpoch
        guard taken.number != before.number || taken.device != before.device else { return }
        messages(
            "fob: took the sync tree's new key\n     (epoch \(taken.number), from device \(SyncEngine.label(taken.device, heads: named)))\n"
        )
    }

    /// Starts a new key epoch: a random key, its epoch file (sealing every
    /// older key under it) and this device's header (sealing it under
    /// `password`), the state first; committed locally, pushed by the next
    /// sync, which also writes every item again under the new key.
    /// - Parameter kdf: the new header's costs (``SyncEngine/headerCosts(_:vaultKDF:)``).
    func startEpoch(_ run: inout SyncRun, password: SecretBytes, kdf: KDFParameters) throws -> KeyEpoch {
        let headerPath = TreePath.header(device: run.state.device)
        let older = run.state.epochs
        let number = (older.map(\.number).max() ?? 1) + 1
        let epoch = KeyEpoch(number: number, device: run.state.device, key: SecretBytes.random(count: 32))
        let header = try TreeHeader.make(epoch: epoch, password: password, kdf: kdf)
        run.state.learn(epoch)
        run.refreshKeys()
        // Every file is opened at the next export, to be written again under the new key.
        run.markIndexStale()
        try vault.store(&run, index: true)
        try run.writeSigned(TreePath.epoch(epoch), EpochFile.sealed(epoch, older: older))
        run.writeFile(headerPath, header.bytes)
        return epoch
    }

    /// Forgets an epoch this device started whose files never reached a
    /// commit (`fob passwd --rotate-key` or `--revoke` cut short after the
    /// state stored its key): no file was sealed under it yet, and no other
    /// device could open one.
    func undoUnfinishedEpoch(_ run: inout SyncRun) throws {
        let epoch = run.state.currentEpoch
        guard epoch.number > 1, epoch.device == run.state.device, try git.file(TreePath.epoch(epoch)) == nil
        else { return }
        run.state.laterEpochs.removeLast()
        run.refreshKeys()
        try vault.store(&run)
        messages("fob: the new sync key of an interrupted key rotation was dropped; rotate again\n")
    }

    /// The snapshot of `commit` (fetched, or a first clone), taking in its new key epochs first.
    /// - Parameter synced: the synced commit, when the index may stand for its listing.
    func adoptingSnapshot(_ commit: String, run: inout SyncRun, synced: String? = nil) throws -> TreeSnapshot {
        do { return try reader.snapshot(commit, run: &run, synced: synced) } catch is NewEpoch {
            // A revoked device is told so before it is asked for a password.
            let own = TreePath.revoked(device: run.state.device)
            if try git.listing(of: commit, under: "devices").contains(where: { $0.path == own }) {
                throw SyncError.revoked(
                    "this device, \(DeviceName.label(run.state.device, name: run.state.name)), was revoked from the sync tree; "
                        + "run `fob sync join \(run.state.remote)` to join again")
            }
            try adoptEpochs(commit, run: &run)
            return try reader.snapshot(commit, run: &run)
        }
    }
}

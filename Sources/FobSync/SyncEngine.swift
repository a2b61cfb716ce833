import FobAccess
import FobStore
import FoundationEssentials
@preconcurrency import Glibc

/// One vault's sync: the tree in a git work tree, merged into the vault.
///
/// A cycle: (1) the vault's changes since the last merge become new
/// revision files under a counter first reserved in the vault, committed;
/// (2) fetch, refuse a remote that went back, holds another copy's
/// writes or changed a file only this device writes, merge (git cannot
/// conflict then: no path is written by two devices);
/// (3) check the merged tree (every file authenticates; a file removed
/// without a newer revision or an old one replayed is caught); (4) merge
/// every item and write the vault's changes and the state in one
/// transaction; (5) push, fetching again when the remote moved on.
public final class SyncEngine {
    /// The one adapter to the vault this engine reads and writes through.
    public let vault: SyncVault
    let git: Git
    let now: () -> Date
    let messages: @Sendable (String) -> Void
    /// Asks the master password that opens a header of a key epoch this
    /// device does not know yet (the argument names the device that
    /// started it, as `NAME (ID)` when its name is known, for a prompt).
    /// `nil`: none can be asked, and such a sync stops with ``SyncError/newKey(_:)``.
    public var treePassword: ((String) throws -> SecretBytes)?
    /// Asks which of the signing keys a `join` shows (the text: one
    /// device, numbered from 1 to the count given, and its fingerprint a
    /// line) the user compared on that device: the answer is its number or
    /// its fingerprint, which the function given accepts (an asker may ask
    /// again after an answer it refuses); anything else accepts none and
    /// the join stops. `nil`: none can be asked, and a `join` without
    /// `acceptKey` stops.
    public var chooseKey: ((_ shown: String, _ count: Int, _ accepts: (String) -> Bool) throws -> String)?
    /// The lowest header costs taken (``TreeHeader/floor``). Only a
    /// caller that makes its own trees lowers it (tests of the library and
    /// fob-bench, to keep their key derivations out of the figures); the
    /// command line never does.
    public var kdfFloor = TreeHeader.floor

    /// What a sync did.
    public struct Outcome: Sendable, Equatable {
        /// Items changed in this vault by what came from other devices.
        public var merged: Int
        /// Items with conflicting versions kept.
        public var conflicts: Int
        /// Revisions this device wrote.
        public var written: Int
    }

    /// An engine over `vault` with its work tree at `treeDirectory`.
    /// - Parameters:
    ///   - environment: git's environment (Fob's own variables are dropped).
    ///   - messages: where git's messages and reports go (standard error).
    /// - Throws: ``SyncError/gitMissing``.
    public init(
        vault: SyncVault, treeDirectory: String, environment: [String: String],
        now: @escaping () -> Date = Date.init, messages: @escaping @Sendable (String) -> Void
    ) throws(SyncError) {
        self.vault = vault
        self.git = try Git(directory: treeDirectory, environment: environment, messages: messages)
        self.now = now
        self.messages = messages
    }

    /// An engine over `store` (through a writing ``SyncVault``); as ``init(vault:treeDirectory:environment:now:messages:)``.
    public convenience init(
        store: any KeychainStore, treeDirectory: String, environment: [String: String],
        now: @escaping () -> Date = Date.init, messages: @escaping @Sendable (String) -> Void
    ) throws(SyncError) {
        try self.init(
            vault: SyncVault(store, now: now), treeDirectory: treeDirectory, environment: environment, now: now,
            messages: messages)
    }

    /// The time this engine spent waiting for git so far.
    public var gitTime: Duration { git.time.elapsed }

    /// The time this engine spent waiting for each git command so far (`push` → its runs' sum).
    public var gitTimeByCommand: [String: Duration] { git.time.byCommand }

    /// The largest index shard, in bytes (``SyncIndexShards``).
    var indexShardLimit: Int {
        get { vault.indexShardLimit }
        set { vault.indexShardLimit = newValue }
    }

    // MARK: The stages

    var reader: TreeReader { TreeReader(git: git, kdfFloor: kdfFloor) }
    var exporter: Exporter { Exporter(git: git, reader: reader, vault: vault) }
    var merger: VaultMerger { VaultMerger(git: git, reader: reader, vault: vault, now: now, messages: messages) }
    var epochs: EpochKeeper {
        EpochKeeper(
            git: git, reader: reader, vault: vault, messages: messages, treePassword: treePassword, kdfFloor: kdfFloor)
    }

    /// The costs of a new header of this device: those chosen at `sync
    /// init`, else the vault's own (`vaultKDF`), else the default; never
    /// below ``kdfFloor``, and never a header's in the tree.
    func headerCosts(_ state: SyncState, vaultKDF: KDFParameters?) -> KDFParameters {
        TreeHeader.raised(state.headerKDF ?? vaultKDF ?? .default, to: kdfFloor)
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
        guard clone.status == 0 else {
            throw Git.failure(clone.error, otherwise: .remoteUnreachable(Git.firstLine(clone.error)))
        }
    }

    /// One sync: export, fetch, check, merge, push.
    /// - Parameters:
    ///   - network: fetch and push (`fob resolve` commits locally only).
    ///   - forceHead: write this device's head even without changes (a first sync).
    /// - Throws: ``SyncError``, `KeychainError`, file errors.
    public func sync(network: Bool = true, forceHead: Bool = false) throws -> Outcome {
        do { return try cycle(network: network, forceHead: forceHead) } catch SyncError.copied(let why) {
            // Kept, so that `fob sync join` here takes a new device id.
            var run = try vault.load()
            run.state.copyFound = true
            try vault.store(&run)
            throw SyncError.copied(why)
        }
    }

    /// The cycle of ``sync(network:forceHead:)``.
    func cycle(network: Bool, forceHead: Bool) throws -> Outcome {
        var run = try vault.load()
        try ensureWorkTree(remote: run.state.remote)
        try cleanWorkTree()
        try epochs.undoUnfinishedEpoch(&run)
        var head = try git.resolve("HEAD")
        let synced = run.state.shardDigits == nil ? nil : run.state.syncedCommit
        var current = try head.map { try epochs.adoptingSnapshot($0, run: &run, synced: synced) } ?? TreeSnapshot()
        head = try git.resolve("HEAD")
        try TreeChecks.checkHeads(current.heads, revoked: current.revoked, state: run.state, where: "the local tree")
        var base = current
        if let synced = run.state.syncedCommit, synced != head {
            base =
                (try? git.resolve(synced)) != nil
                ? try reader.snapshot(synced, run: &run) : current
        }
        if run.state.syncedCommit == nil { base = TreeSnapshot() }
        let wrote = try exporter.export(&run, base: &base, current: &current, forceHead: forceHead)
        let exported = try git.resolve("HEAD")
        if let exported, exported != head {
            head = exported
            current =
                try reader.exportedSnapshot(current, commit: exported, run: &run)
                ?? reader.snapshot(head, run: &run)
        }
        run.written = [:]
        guard network else {
            var outcome = try merger.mergeIntoVault(&run, snapshot: &current, commit: head)
            outcome.written = wrote
            return outcome
        }
        for attempt in 1...4 {
            let fetch = try git.run(["fetch", "-q", "origin"], network: true, show: true)
            guard fetch.status == 0 else {
                throw Git.failure(fetch.error, otherwise: .remoteUnreachable(Git.firstLine(fetch.error)))
            }
            let remoteRef = "refs/remotes/origin/\(Git.branch)"
            if let remote = try git.resolve(remoteRef) {
                // Nothing new fetched (a sync with nothing to do): the local tree is the remote's.
                // The remote still at the synced commit (only this device wrote): the index stands for it.
                let indexed = run.state.shardDigits == nil ? nil : run.state.syncedCommit
                var remoteTree =
                    remote == head ? current : try epochs.adoptingSnapshot(remote, run: &run, synced: indexed)
                try checkRemote(&remoteTree, run: &run)
                head = try git.resolve("HEAD")
                let before = head
                // A remote this tree holds already (nothing new, or only this device's export) needs no merge.
                if try !git.contains(remote, head: head) {
                    try checkOwnFiles(remote: remote, remoteTree: remoteTree, current: current, head: head, run: run)
                    do {
                        current = try merger.mergeRemote(remote, head: head, run: &run, before: current)
                    } catch {
                        // Nothing of a refused tree stays in the local one.
                        if let before { try? git.moveBranch(to: before) }
                        throw error
                    }
                    head = try git.resolve("HEAD")
                }
            }
            var outcome = try merger.mergeIntoVault(&run, snapshot: &current, commit: head)
            outcome.written = wrote
            guard let local = head, local != (try git.resolve(remoteRef)) else { return outcome }
            // Everything the push carries of this device's, committed by this run or earlier.
            outcome.written = try unsent(device: run.state.device)
            let push = try git.run(
                ["push", "-q", "origin", "HEAD:refs/heads/\(Git.branch)"], network: true, show: true)
            if push.status == 0 {
                // The push moved the remote-tracking branch too: no fetch after it.
                return outcome
            }
            let rejected =
                push.error.contains("rejected") || push.error.contains("non-fast-forward")
                || push.error.contains("fetch first")
            guard rejected else {
                throw Git.failure(push.error, otherwise: .remoteUnreachable(Git.firstLine(push.error)))
            }
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

    /// Refuses a remote whose head of this device is not one this device
    /// wrote: a copy of this vault wrote it (whichever of the two wrote
    /// more), which git's merge would otherwise report as trees that conflict.
    /// - Throws: ``SyncError/copied(_:)``.
    func checkOwnHead(remote: String, remoteTree: TreeSnapshot, current: TreeSnapshot, head: String?, run: SyncRun)
        throws
    {
        let me = run.state.device
        guard let theirs = remoteTree.heads[me], theirs != current.heads[me] else { return }
        let path = TreePath.head(device: me)
        let wrote = try git.run(["log", "-1", "--format=%H", remote, "--", path]).text.filter { !$0.isWhitespace }
        if try wrote.isEmpty || git.contains(wrote, head: head) { return }
        throw SyncError.copied(
            "the remote holds a head of device \(DeviceName.label(me, name: run.state.name))\n"
                + "     at counter \(theirs.counter) that this vault never wrote"
        )
    }

    /// Checks the fetched tree (``TreeChecks``) and names each revoked
    /// device whose later files it left out, and each device it leaves
    /// out whole (``TreeSnapshot/leftOut``).
    func checkRemote(_ tree: inout TreeSnapshot, run: inout SyncRun) throws {
        try TreeChecks.checkHeads(tree.heads, revoked: tree.revoked, state: run.state, where: "the remote")
        try TreeChecks.checkRosters(tree.rosters, state: &run.state)
        try TreeChecks(reader: reader).checkLiveHashes(&tree, run: &run, where: "the remote")
        for notice in run.notices { messages(notice) }
        run.notices = []
        for (device, count) in tree.ignored.sorted(by: { $0.key < $1.key }) {
            messages(
                "fob: ignored \(count) revision\(count == 1 ? "" : "s") that device \(SyncEngine.label(device, heads: tree.heads))\n"
                    + "     wrote after it was revoked\n"
            )
        }
        for (device, head) in tree.leftOut.sorted(by: { $0.key < $1.key }) {
            // Lines under 80 columns, continued as Fob's other notices.
            let key = head.publicKey.map { ",\n     key \(DeviceSigningKey.fingerprint($0))" } ?? ""
            messages(
                "fob: left out device \(DeviceName.label(device, name: head.name))\(key):\n"
                    + "     its head is under an older key epoch and no device this one trusts\n"
                    + "     added it; it is taken in after it syncs with the current key\n")
        }
    }

    /// Makes the work tree's parent directory, mode 0700 (only sealed files
    /// live there, but names of files and commits need not be seen by others).
    func makePrivateParent() throws {
        let parent = NSStringPath(path: git.directory).parent
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        chmod(parent, 0o700)
    }

    /// Starts from the branch's last commit: removes the lock files of a
    /// killed run (``Git/removeStaleLocks(age:)``), and drops the files and index an
    /// older Fob kept checked out (the tree is read and written through
    /// git's objects alone, so nothing beside `.git` is ever looked at).
    func cleanWorkTree() throws {
        git.removeStaleLocks()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: git.directory)) ?? []
        for name in names where name != ".git" {
            try FileManager.default.removeItem(atPath: git.directory + "/" + name)
        }
        if !names.filter({ $0 != ".git" }).isEmpty { unlink(git.directory + "/.git/index") }
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

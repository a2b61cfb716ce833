import FobStore
import FoundationEssentials
@preconcurrency import Glibc
import Synchronization

/// git run as a program (``ChildProcessRunner``) in one repository: the
/// user's remotes, SSH keys and credential helpers work as for any git.
public struct Git: Sendable {
    /// The `git` executable.
    let executable: String
    /// The repository's directory (the parent of its `.git`; nothing is checked out).
    public let directory: String
    /// git's environment: this process's, without Fob's own variables.
    let environment: [String: String]
    /// Where git's messages (its standard error) go.
    let messages: @Sendable (String) -> Void
    /// The time spent waiting for git, summed over every run (``GitTime``).
    let time = GitTime()

    /// The branch every device pushes to.
    public static let branch = "main"

    /// Every commit's message: it says nothing of what the commit holds
    /// (a password change, a key rotation, a revocation, how many items).
    static let commitMessage = "fob sync"

    /// The caller's GIT_* variables git still sees: how to reach a remote over ssh.
    static let transportVariables: Set<String> = ["GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT", "GIT_ASKPASS"]

    /// git for the repository at `directory`.
    /// - Throws: ``SyncError/gitMissing`` when `git` is not on `PATH`.
    public init(directory: String, environment: [String: String], messages: @escaping @Sendable (String) -> Void)
        throws(SyncError)
    {
        guard let git = ExecutableLookup.find("git", environment: environment) else { throw .gitMissing }
        executable = git
        self.directory = directory
        // Fob's own variables, and every GIT_* variable of the caller but
        // those that say how to reach a remote (GIT_DIR, GIT_INDEX_FILE,
        // GIT_CONFIG_* and their kind would point git elsewhere).
        var env = environment.filter { key, _ in
            !key.hasPrefix("FOB_") && (!key.hasPrefix("GIT_") || Git.transportVariables.contains(key))
        }
        env["GIT_TERMINAL_PROMPT"] = "0"
        env["LC_ALL"] = "C"
        // Commit dates in UTC: no device's offset from UTC reaches the remote.
        env["TZ"] = "UTC"
        // git's zlib allocates and frees a buffer for every object it
        // writes; glibc's default trim hands that memory back to the
        // kernel each time (a brk call per object, most of a big commit's
        // time). Kept up to 64 MiB instead, unless the user chose otherwise.
        if env["MALLOC_TRIM_THRESHOLD_"] == nil && env["GLIBC_TUNABLES"] == nil {
            env["MALLOC_TRIM_THRESHOLD_"] = "67108864"
        }
        self.environment = env
        self.messages = messages
    }

    /// The outcome of one git run.
    struct Outcome {
        var status: Int32
        var output: [UInt8]
        var error: String
        var text: String { String(decoding: output, as: UTF8.self) }
    }

    /// Runs `git -C DIRECTORY ARGUMENTS` with Fob's identity for commits.
    /// - Parameters:
    ///   - network: a fetch or push: 10 minutes, else 2.
    ///   - show: pass git's standard error on to the user.
    ///   - indexFile: the index git reads and writes (`GIT_INDEX_FILE`), else the repository's.
    func run(
        _ arguments: [String], input: [UInt8] = [], network: Bool = false, show: Bool = false,
        inDirectory: Bool = true, indexFile: String? = nil
    ) throws(SyncError) -> Outcome {
        let base =
            (inDirectory ? ["-C", directory] : []) + [
                "-c", "user.name=fob", "-c", "user.email=fob@localhost", "-c", "commit.gpgsign=false",
                "-c", "core.autocrlf=false", "-c", "core.quotepath=false",
            ]
        var result: ChildProcessResult
        var environment = self.environment
        if let indexFile { environment["GIT_INDEX_FILE"] = indexFile }
        let started = ContinuousClock.now
        defer { time.add(ContinuousClock.now - started, command: Git.verb(arguments)) }
        do {
            result = try ChildProcessRunner.run(
                executable, arguments: base + arguments, environment: environment, input: input,
                captureOutput: true, captureError: true, maxOutput: 1 << 30, maxError: 1 << 16,
                timeout: network ? 600 : 120)
        } catch {
            throw .git("git \(Git.verb(arguments)): \(error.description)")
        }
        defer { result.wipe() }
        let error = String(decoding: result.errorOutput, as: UTF8.self)
        if show && !error.isEmpty { messages(error.hasSuffix("\n") ? error : error + "\n") }
        return Outcome(status: result.status, output: result.output, error: error)
    }

    /// Runs git and fails with its message unless it exits 0.
    @discardableResult
    func check(_ arguments: [String], input: [UInt8] = [], indexFile: String? = nil) throws(SyncError) -> Outcome {
        let outcome = try run(arguments, input: input, indexFile: indexFile)
        guard outcome.status == 0 else {
            throw Git.failure(
                outcome.error, otherwise: .git("git \(Git.verb(arguments)): \(Git.firstLine(outcome.error))"))
        }
        return outcome
    }

    /// The git command `arguments` run (`fetch`, `push`, …): the first
    /// argument that is not a `-c NAME=VALUE` before it.
    /// `otherwise`, or for git's report of a full disk (ENOSPC, also in
    /// the middle of a fetch or a merge) a failure that says so.
    static func failure(_ error: String, otherwise: SyncError) -> SyncError {
        guard error.contains("No space left on device") else { return otherwise }
        return .git("the disk is full (git: \(firstLine(error)))")
    }

    static func verb(_ arguments: [String]) -> String {
        var rest = arguments[...]
        while rest.first == "-c" { rest = rest.dropFirst(2) }
        return rest.first ?? ""
    }

    /// The line of git's standard error that says what failed: its first
    /// `fatal:` or `error:` line (git's advice follows it), else its last line.
    static func firstLine(_ text: String) -> String {
        let lines = text.split(separator: "\n").filter { !$0.isEmpty }
        if let cause = lines.first(where: { $0.hasPrefix("fatal: ") || $0.hasPrefix("error: ") }) {
            return String(cause)
        }
        return lines.last.map(String.init) ?? "exit status not 0"
    }

    /// Whether `commit` is `head` or one of its ancestors (`false` without `head`).
    func contains(_ commit: String, head: String?) throws(SyncError) -> Bool {
        guard let head else { return false }
        if commit == head { return true }
        let outcome = try run(["merge-base", "--is-ancestor", commit, head])
        guard outcome.status <= 1 else { throw .git("git merge-base: \(Git.firstLine(outcome.error))") }
        return outcome.status == 0
    }

    /// The commit `ref` names, or `nil`.
    func resolve(_ ref: String) throws(SyncError) -> String? {
        let outcome = try run(["rev-parse", "-q", "--verify", ref + "^{commit}"])
        guard outcome.status == 0 else { return nil }
        let text = outcome.text.filter { !$0.isWhitespace }
        return text.isEmpty ? nil : text
    }

    /// Every file of `commit` under `prefix` (all when empty): path → blob id,
    /// with one `ls-tree`.
    func listing(of commit: String, under prefix: String = "") throws(SyncError) -> [(path: String, blob: String)] {
        try listing(of: commit, paths: prefix.isEmpty ? [] : [prefix])
    }

    /// The files of `commit` that `paths` name (whole paths or their
    /// directories; every file when empty): path → blob id, with one `ls-tree`.
    func listing(of commit: String, paths names: [String]) throws(SyncError) -> [(path: String, blob: String)] {
        var arguments = ["ls-tree", "-r", "-z", "--full-tree", commit]
        if !names.isEmpty { arguments += ["--"] + names }
        let listing = try check(arguments).output
        var paths: [(String, String)] = []
        for entry in listing.split(separator: 0) {
            guard let tab = entry.firstIndex(of: 9) else { continue }
            let meta = entry[entry.startIndex..<tab].split(separator: 32)
            guard meta.count == 3, meta[1].elementsEqual("blob".utf8) else { continue }
            paths.append(
                (String(decoding: entry[(tab + 1)...], as: UTF8.self), String(decoding: meta[2], as: UTF8.self)))
        }
        return paths
    }

    /// The contents of blobs, with one `cat-file --batch`.
    func blobs(_ ids: [String]) throws(SyncError) -> [String: [UInt8]] {
        guard !ids.isEmpty else { return [:] }
        let input = Array(ids.joined(separator: "\n").utf8) + [10]
        let out = try check(["cat-file", "--batch"], input: input).output
        var contents: [String: [UInt8]] = [:]
        var offset = 0
        for id in ids {
            guard let newline = out[offset...].firstIndex(of: 10) else { throw .git("cat-file: short output") }
            let header = out[offset..<newline].split(separator: 32)
            guard header.count == 3, let size = Int(String(decoding: header[2], as: UTF8.self)),
                newline + 1 + size <= out.count
            else { throw .git("cat-file: unexpected output") }
            contents[id] = Array(out[(newline + 1)..<(newline + 1 + size)])
            offset = newline + 1 + size + 1
        }
        return contents
    }

    /// Every file of `commit` under `prefix`: path → bytes.
    func files(of commit: String, under prefix: String = "") throws(SyncError) -> [String: [UInt8]] {
        let entries = try listing(of: commit, under: prefix)
        let contents = try blobs(entries.map(\.blob))
        var files: [String: [UInt8]] = [:]
        for entry in entries { files[entry.path] = contents[entry.blob] }
        return files
    }

    /// The paths under `prefix` that `head` holds and `base` does not (every
    /// one of `head`'s without `base`), with one `diff-tree`.
    func added(from base: String?, to head: String, under prefix: String) throws(SyncError) -> [String] {
        guard let base else { return Array(try paths(of: head, under: prefix)) }
        let listing = try check(
            ["diff-tree", "-r", "-z", "--name-only", "--no-renames", "--diff-filter=A", base, head, "--", prefix]
        ).output
        return listing.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The paths of `commit` under `prefix`.
    func paths(of commit: String, under prefix: String) throws(SyncError) -> Set<String> {
        let listing = try check(["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit, "--", prefix]).output
        return Set(listing.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
    }
}

extension Git {
    /// The branch's full ref name.
    static var branchRef: String { "refs/heads/" + branch }

    /// The bytes of `path` in `commit`, or `nil` when it holds no such file.
    func file(_ path: String, of commit: String = "HEAD") throws(SyncError) -> [UInt8]? {
        let outcome = try run(["cat-file", "blob", commit + ":" + path])
        return outcome.status == 0 ? outcome.output : nil
    }

    /// Commits `writes` (path → bytes) and `removals` on top of `parent`
    /// (a first commit without it) to the branch, with one `git
    /// fast-import`: the objects go straight into the repository (one pack
    /// for a big commit, loose objects for a small one, as
    /// `fastimport.unpackLimit` says), no file is written in a work tree,
    /// and the branch moves only once the whole commit is stored (a run
    /// killed before leaves it where it was).
    /// - Returns: the new commit.
    /// - Throws: ``SyncError/git(_:)``, also for a path git's stream cannot carry.
    func commit(
        writes: [String: [UInt8]], removals: Set<String>, parent: String?, message: String
    ) throws(SyncError) -> String {
        var stream: [UInt8] = []
        stream.reserveCapacity(writes.values.reduce(4096) { $0 + $1.count + 96 })
        func line(_ text: String) { stream += Array(text.utf8) + [10] }
        func data(_ bytes: [UInt8]) {
            line("data \(bytes.count)")
            stream += bytes
            stream.append(10)
        }
        line("commit " + Git.branchRef)
        line("committer fob <fob@localhost> now")
        data(Array(message.utf8))
        if let parent { line("from " + parent) }
        for path in removals.sorted() {
            guard Git.streamable(path) else { throw .git("git fast-import: cannot carry the path \(path)") }
            line("D " + path)
        }
        for (path, bytes) in writes.sorted(by: { $0.key < $1.key }) {
            guard Git.streamable(path) else { throw .git("git fast-import: cannot carry the path \(path)") }
            line("M 100644 inline " + path)
            data(bytes)
        }
        line("")
        line("done")
        // Sealed files are ciphertext: zlib cannot make them smaller, only slower to store.
        try check(["-c", "pack.compression=0", "fast-import", "--quiet", "--done", "--date-format=now"], input: stream)
        guard let commit = try resolve(Git.branchRef) else { throw .git("git fast-import: the branch did not move") }
        return commit
    }

    /// Whether `path` can stand unquoted in a fast-import stream: relative,
    /// one line, not starting with a quote.
    static func streamable(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.hasPrefix("\"") && !path.contains("\n")
    }

    /// Merges `other` into the branch at `head`, path by path against their
    /// merge base: git's three-way merge of trees (`read-tree -m
    /// --aggressive`, in a private index file), never a checkout; a
    /// fast-forward when `head` is an ancestor of `other`. A path both sides
    /// changed differently fails, as `git merge` would (a sync tree never
    /// holds one: no path is written by two devices).
    /// - Returns: the branch's new commit.
    /// - Throws: ``SyncError/git(_:)``.
    func merge(_ other: String, into head: String) throws(SyncError) -> String {
        let base = try run(["merge-base", head, other])
        guard base.status == 0 else {
            throw .git(
                "git merge: \(base.status == 1 ? "refusing to merge unrelated histories" : Git.firstLine(base.error))")
        }
        let baseCommit = base.text.filter { !$0.isWhitespace }
        if baseCommit == other { return head }
        var merged = other
        if baseCommit != head {
            let index = directory + "/.git/fob-merge-index"
            unlink(index)
            defer { unlink(index) }
            let read = try run(["read-tree", "-i", "-m", "--aggressive", baseCommit, head, other], indexFile: index)
            guard read.status == 0 else {
                throw Git.failure(read.error, otherwise: .git("git merge: \(Git.firstLine(read.error))"))
            }
            let tree = try run(["write-tree"], indexFile: index)
            guard tree.status == 0 else {
                throw Git.failure(
                    tree.error, otherwise: .git("git merge: the trees conflict: \(Git.firstLine(tree.error))"))
            }
            let message = Git.commitMessage
            merged = try check(
                ["commit-tree", tree.text.filter { !$0.isWhitespace }, "-p", head, "-p", other, "-m", message]
            ).text.filter { !$0.isWhitespace }
        }
        try check(["update-ref", "-m", Git.commitMessage, Git.branchRef, merged, head])
        return merged
    }

    /// Moves the branch back to `commit` (a merged tree refused).
    func moveBranch(to commit: String) throws(SyncError) {
        try check(["update-ref", "-m", Git.commitMessage, Git.branchRef, commit])
    }
}

extension Git {
    /// Removes the lock files (`*.lock` in `.git` and under `.git/refs`)
    /// that a git killed with its sync left behind, which would stop every
    /// later git command on the tree. Called under the vault's exclusive
    /// lock, so no other sync of this vault runs: a lock file is a killed
    /// run's when it is older than `age` and no running process names this
    /// tree in its command line (a git that outlived its sync).
    /// - Returns: the paths removed.
    @discardableResult
    func removeStaleLocks(age: Duration = .seconds(2)) -> [String] {
        let gitDirectory = directory + "/.git"
        var candidates: [String] = []
        let files = FileManager.default
        for name in (try? files.contentsOfDirectory(atPath: gitDirectory)) ?? [] where name.hasSuffix(".lock") {
            candidates.append(gitDirectory + "/" + name)
        }
        // The refs, a few levels deep (refs/remotes/origin/main.lock).
        var directories = [gitDirectory + "/refs"]
        while let next = directories.popLast() {
            for name in (try? files.contentsOfDirectory(atPath: next)) ?? [] {
                let path = next + "/" + name
                if name.hasSuffix(".lock") {
                    candidates.append(path)
                } else if (try? files.contentsOfDirectory(atPath: path)) != nil {
                    directories.append(path)
                }
            }
        }
        let now = Date()
        let stale = candidates.filter { path in
            guard let modified = (try? files.attributesOfItem(atPath: path))?[.modificationDate] as? Date else {
                return false
            }
            return now.timeIntervalSince(modified) >= Double(age.components.seconds)
        }
        guard !stale.isEmpty, !Git.processNames(directory) else { return [] }
        for path in stale {
            unlink(path)
            messages("fob: removed \(path), left by a sync that was stopped\n")
        }
        return stale
    }

    /// Whether a running process has `directory` in its command line.
    static func processNames(_ directory: String) -> Bool {
        let needle = Array(directory.utf8)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        where entry.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            guard let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            let bytes = [UInt8](data)
            if bytes.count >= needle.count,
                (0...(bytes.count - needle.count)).contains(where: {
                    bytes[$0..<$0 + needle.count].elementsEqual(needle)
                })
            {
                return true
            }
        }
        return false
    }
}

/// The wall-clock time a ``Git`` spent running git, so a sync's own time
/// can be told apart from git's (fob-bench prints both, and git's by command).
public final class GitTime: Sendable {
    private let total = Mutex((all: Duration.zero, commands: [String: Duration]()))

    /// Adds one run's time, of the git command `command` (`fetch`, `push`, …).
    func add(_ duration: Duration, command: String) {
        total.withLock {
            $0.all += duration
            $0.commands[command, default: .zero] += duration
        }
    }

    /// The time so far.
    public var elapsed: Duration { total.withLock { $0.all } }

    /// The time so far of each git command.
    public var byCommand: [String: Duration] { total.withLock { $0.commands } }
}

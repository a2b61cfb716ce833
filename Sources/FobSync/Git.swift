import FobStore
import FoundationEssentials
import Synchronization

/// git run as a program (``ChildProcessRunner``) in one work tree: the
/// user's remotes, SSH keys and credential helpers work as for any git.
public struct Git: Sendable {
    /// The `git` executable.
    let executable: String
    /// The work tree.
    public let directory: String
    /// git's environment: this process's, without Fob's own variables.
    let environment: [String: String]
    /// Where git's messages (its standard error) go.
    let messages: @Sendable (String) -> Void
    /// The time spent waiting for git, summed over every run (``GitTime``).
    let time = GitTime()

    /// The branch every device pushes to.
    public static let branch = "main"

    /// git for the work tree at `directory`.
    /// - Throws: ``SyncError/gitMissing`` when `git` is not on `PATH`.
    public init(directory: String, environment: [String: String], messages: @escaping @Sendable (String) -> Void)
        throws(SyncError)
    {
        guard let git = ExecutableLookup.find("git", environment: environment) else { throw .gitMissing }
        executable = git
        self.directory = directory
        var env = environment.filter { !$0.key.hasPrefix("FOB_") }
        env["GIT_TERMINAL_PROMPT"] = env["GIT_TERMINAL_PROMPT"] ?? "0"
        env["LC_ALL"] = "C"
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
    func run(
        _ arguments: [String], input: [UInt8] = [], network: Bool = false, show: Bool = false,
        inDirectory: Bool = true
    ) throws(SyncError) -> Outcome {
        let base =
            (inDirectory ? ["-C", directory] : []) + [
                "-c", "user.name=fob", "-c", "user.email=fob@localhost", "-c", "commit.gpgsign=false",
                "-c", "core.autocrlf=false", "-c", "core.quotepath=false",
            ]
        var result: ChildProcessResult
        let started = ContinuousClock.now
        defer { time.add(ContinuousClock.now - started) }
        do {
            result = try ChildProcessRunner.run(
                executable, arguments: base + arguments, environment: environment, input: input,
                captureOutput: true, captureError: true, maxOutput: 1 << 30, maxError: 1 << 16,
                timeout: network ? 600 : 120)
        } catch {
            throw .git("git \(arguments.first ?? ""): \(error.description)")
        }
        defer { result.wipe() }
        let error = String(decoding: result.errorOutput, as: UTF8.self)
        if show && !error.isEmpty { messages(error.hasSuffix("\n") ? error : error + "\n") }
        return Outcome(status: result.status, output: result.output, error: error)
    }

    /// Runs git and fails with its message unless it exits 0.
    @discardableResult
    func check(_ arguments: [String], input: [UInt8] = []) throws(SyncError) -> Outcome {
        let outcome = try run(arguments, input: input)
        guard outcome.status == 0 else {
            throw .git("git \(arguments.first ?? ""): \(Git.firstLine(outcome.error))")
        }
        return outcome
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

    /// The paths of `commit` under `prefix`.
    func paths(of commit: String, under prefix: String) throws(SyncError) -> Set<String> {
        let listing = try check(["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit, "--", prefix]).output
        return Set(listing.split(separator: 0).map { String(decoding: $0, as: UTF8.self) })
    }
}

/// The wall-clock time a ``Git`` spent running git, so a sync's own time
/// can be told apart from git's (fob-bench prints both).
public final class GitTime: Sendable {
    private let total = Mutex(Duration.zero)

    /// Adds one run's time.
    func add(_ duration: Duration) { total.withLock { $0 += duration } }

    /// The time so far.
    public var elapsed: Duration { total.withLock { $0 } }
}

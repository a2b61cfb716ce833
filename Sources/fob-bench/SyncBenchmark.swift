import FobAccess
import FobStore
import FobSync
import FobSystem
import FoundationEssentials
import Glibc

/// Sync figures through git to a local bare repository (no network): the
/// first sync of N items (`fob sync init`: every item sealed into the tree,
/// committed, pushed), a sync after one change, a sync with nothing to do,
/// a second device joining and a sync that receives one change from it;
/// each with the part of it spent waiting for git, and the sizes per item
/// of the tree, the remote repository and the vault file.
enum SyncBenchmark {
    static func run(scratch: URL, counts: [Int]) throws {
        section("Sync (git to a local bare repository, one device, then a second joins)")
        for count in counts { try run(scratch: scratch.appendingPathComponent("sync-\(count)"), count: count) }
    }

    /// Times `body` on `engine`: the whole and git's part (wall clock), and
    /// the CPU time (user and system) of this process and of git's, which a
    /// busy machine changes far less.
    private static func timed(_ what: String, _ engine: SyncEngine, per: Int? = nil, _ body: () throws -> Void) throws {
        let git = engine.gitTime
        let commands = engine.gitTimeByCommand
        let cpu = (cpuSeconds(RUSAGE_SELF.rawValue), cpuSeconds(RUSAGE_CHILDREN.rawValue))
        let total = try time(body)
        let gitPart = engine.gitTime - git
        let gitSeconds = Double(gitPart.components.seconds) + Double(gitPart.components.attoseconds) / 1e18
        report(what, seconds: total, per: per)
        report("  of which git", seconds: gitSeconds)
        report("  of which fob (beside git)", seconds: total - gitSeconds)
        var parts: [(String, Double)] = []
        for (command, duration) in engine.gitTimeByCommand {
            let spent = duration - (commands[command] ?? .zero)
            let seconds = Double(spent.components.seconds) + Double(spent.components.attoseconds) / 1e18
            if seconds > 0 { parts.append((command, seconds)) }
        }
        print(
            "    git by command: "
                + parts.sorted { $0.1 > $1.1 }.prefix(6).map { "\($0.0) \(Int(($0.1 * 1000).rounded())) ms" }
                .joined(separator: ", "))
        report("  CPU time of fob", seconds: cpuSeconds(RUSAGE_SELF.rawValue) - cpu.0)
        report("  CPU time of git", seconds: cpuSeconds(RUSAGE_CHILDREN.rawValue) - cpu.1)
        // What the step left in the page cache goes to disk now, so the next step does not pay for it.
        report("  then the disk catching up (sync(2))", seconds: try time { Glibc.sync() })
    }

    /// User and system CPU seconds of `who` (`RUSAGE_SELF` or `RUSAGE_CHILDREN`, the waited-for ones).
    private static func cpuSeconds(_ who: Int32) -> Double {
        var usage = rusage()
        getrusage(who, &usage)
        let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        return user + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    private static func run(scratch: URL, count: Int) throws {
        let password = SecretBytes(utf8: "benchmark master password")
        // libsodium's minimum Argon2id costs: the figures leave the KDF out.
        let minimal = BenchFiles.quickKDF
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let root = scratch.path
        _ = FileManager.default.createFile(atPath: root + "/gitconfig", contents: Data())
        let environment = [
            "HOME": root, "GIT_CONFIG_GLOBAL": root + "/gitconfig", "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0", "PATH": "/usr/local/bin:/usr/bin:/bin",
        ]
        let remote = root + "/remote.git"
        _ = try ChildProcessRunner.run(
            "/usr/bin/git", arguments: ["init", "-q", "--bare", "-b", "main", remote], environment: environment,
            timeout: 60)
        let vault = try Vault.create(
            at: scratch.appendingPathComponent("a.db"), password: password, kdf: minimal, accessDefault: .any)
        try vault.add(
            contentsOf: (0..<count).map { i in
                Item(
                    service: "svc-\(i % 500)", account: "user\(i)", label: "Label \(i)",
                    secret: SecretBytes(utf8: "secret-\(i)-\(String(repeating: "x", count: 24))"))
            })
        let vaultBytes = fileBytes(root + "/a.db")
        Glibc.sync()
        let a = try SyncEngine(
            store: VaultStore(vault: vault), treeDirectory: root + "/a-tree", environment: environment,
            messages: { _ in })
        // The figures leave the key derivation out: the floor goes down to these costs.
        a.kdfFloor = minimal
        try timed("first sync of \(count) items (sync init: seal, commit, push)", a, per: count) {
            _ = try a.initialize(remote: remote, password: password, kdf: minimal)
        }
        try vault.update(
            matching: .key(service: "svc-1", account: "user1"), with: ItemChanges(secret: SecretBytes(utf8: "new")))
        try timed("sync after one change (\(count) items)", a) { _ = try a.sync() }
        try timed("sync with nothing to do (\(count) items)", a) { _ = try a.sync() }
        let other = try Vault.create(
            at: scratch.appendingPathComponent("b.db"), password: password, kdf: minimal, accessDefault: .any)
        let b = try SyncEngine(
            store: VaultStore(vault: other), treeDirectory: root + "/b-tree", environment: environment,
            messages: { _ in })
        b.kdfFloor = minimal
        let anchor = try a.status().signingKey
        try timed("a second device joins (\(count) items merged in)", b, per: count) {
            _ = try b.join(remote: remote, password: password, acceptKey: anchor)
        }
        try other.update(
            matching: .key(service: "svc-2", account: "user2"), with: ItemChanges(secret: SecretBytes(utf8: "other")))
        _ = try b.sync()
        try timed("sync that receives one change (\(count) items)", a) { _ = try a.sync() }
        print(
            "  sizes per item: tree files \(perItem(try treeBytes(root + "/a-tree", environment), count)), "
                + "remote repository \(perItem(treeBytes(remote), count)), vault file \(perItem(vaultBytes, count))")
    }

    /// `N bytes` per item, rounded.
    private static func perItem(_ bytes: Int, _ count: Int) -> String { "\((bytes + count / 2) / max(count, 1)) bytes" }

    /// The size of a regular file, 0 for anything else.
    private static func fileBytes(_ path: String) -> Int {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return 0 }
        return Int(info.st_size)
    }

    /// The bytes of the item files (`items/`) of the tree's last commit,
    /// as `git ls-tree -l` lists them (the files are never checked out).
    private static func treeBytes(_ tree: String, _ environment: [String: String]) throws -> Int {
        var result = try ChildProcessRunner.run(
            "/usr/bin/git", arguments: ["-C", tree, "ls-tree", "-r", "-l", "HEAD", "items"],
            environment: environment, captureOutput: true, maxOutput: 1 << 28, timeout: 60)
        defer { result.wipe() }
        return String(decoding: result.output, as: UTF8.self).split(separator: "\n").reduce(0) { sum, line in
            let fields = line.split(separator: "\t").first?.split(separator: " ") ?? []
            return sum + (fields.count == 4 ? Int(fields[3]) ?? 0 : 0)
        }
    }

    /// The bytes of every regular file under `directory`.
    private static func treeBytes(_ directory: String) -> Int {
        let paths = (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []
        return paths.reduce(0) { $0 + fileBytes(directory + "/" + $1) }
    }
}

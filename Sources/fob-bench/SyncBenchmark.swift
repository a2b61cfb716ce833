import FobStore
import FobSync
import FobSystem
import FoundationEssentials

/// Sync figures through git to a local bare repository (no network): the
/// first sync of N items (`fob sync init`: every item sealed into the tree,
/// committed, pushed), a sync after one change, a sync with nothing to do,
/// and a second device joining.
enum SyncBenchmark {
    static func run(scratch: URL, counts: [Int]) throws {
        section("Sync (git to a local bare repository, one device, then a second joins)")
        for count in counts { try run(scratch: scratch.appendingPathComponent("sync-\(count)"), count: count) }
    }

    private static func run(scratch: URL, count: Int) throws {
        let password = SecretBytes(utf8: "benchmark master password")
        // libsodium's minimum Argon2id costs: the figures leave the KDF out.
        let minimal = KDFParameters(opslimit: 1, memlimit: 8192)
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
            at: scratch.appendingPathComponent("a.db"), password: password, kdf: minimal)
        try vault.add(
            contentsOf: (0..<count).map { i in
                Item(
                    service: "svc-\(i % 500)", account: "user\(i)", label: "Label \(i)",
                    secret: SecretBytes(utf8: "secret-\(i)-\(String(repeating: "x", count: 24))"))
            })
        let a = try SyncEngine(
            store: vault, treeDirectory: root + "/a-tree", environment: environment, messages: { _ in })
        let tInit = try time { _ = try a.initialize(remote: remote, password: password, kdf: minimal) }
        report("first sync of \(count) items (sync init: seal, commit, push)", seconds: tInit, per: count)
        try vault.update(
            matching: .key(service: "svc-1", account: "user1"), with: ItemChanges(secret: SecretBytes(utf8: "new")))
        let tOne = try time { _ = try a.sync() }
        report("sync after one change (\(count) items)", seconds: tOne)
        let tNone = try time { _ = try a.sync() }
        report("sync with nothing to do (\(count) items)", seconds: tNone)
        let other = try Vault.create(at: scratch.appendingPathComponent("b.db"), password: password, kdf: minimal)
        let b = try SyncEngine(
            store: other, treeDirectory: root + "/b-tree", environment: environment, messages: { _ in })
        let tJoin = try time { _ = try b.join(remote: remote, password: password) }
        report("a second device joins (\(count) items merged in)", seconds: tJoin, per: count)
    }
}

import FobStore
import FobSync
import FobTestSupport
import Foundation
import Testing

/// What git sees of a sync and what the remote learns from its commits.
@Suite struct SyncRunHygieneTests {
    /// The caller's GIT_DIR (and the other GIT_* variables that point git
    /// elsewhere) never reach git; every commit says only "fob sync" and
    /// carries a UTC date, whatever the caller's time zone.
    @Test func gitSeesNoneOfTheCallersGitVariablesAndCommitsTellNothing() throws {
        let lab = try SyncLab()
        let a = try lab.device("a")
        try a.ok(["add", "mail", "ana"], input: "one\n")
        let other = lab.directory.url.path + "/other.git"
        try lab.git(["init", "-q", "--bare", "-b", "main", other])
        let environment = lab.gitEnvironment.merging([
            "XDG_DATA_HOME": a.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw", "FOB_AGENT": "0",
            "GIT_DIR": other, "GIT_WORK_TREE": lab.directory.url.path, "TZ": "Asia/Tokyo",
        ]) { $1 }
        let started = try FobProcess.run(
            ["--vault", a.vault, "sync", "init", lab.remote, "--kdf", "interactive"], environment: environment)
        #expect(started.status == 0, "\(started.stderrText)")
        try a.ok(["update", "mail", "ana"], input: "two\n")
        let synced = try FobProcess.run(["--vault", a.vault, "sync"], environment: environment)
        #expect(synced.status == 0, "\(synced.stderrText)")
        // Nothing reached the caller's repository.
        #expect(try lab.git(["--git-dir", other, "for-each-ref"]) == "")
        let log = try lab.git(["--git-dir", lab.remote, "log", "--format=%s|%ad|%cd", "--date=raw", "main"])
        let lines = log.split(separator: "\n")
        #expect(lines.count >= 2)
        for line in lines {
            let parts = line.split(separator: "|")
            #expect(parts.count == 3 && parts[0] == "fob sync", "\(line)")
            #expect(parts.dropFirst().allSatisfy { $0.hasSuffix(" +0000") }, "\(line)")
        }
    }

    /// `sync join` on a device that syncs says so and stops: no second
    /// device id, no ghost in the tree.
    @Test func joinOnAJoinedDeviceSaysSoAndStops() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        // Its first sync since it took in b's key writes its roster.
        _ = try a.sync()
        let devices = try a.ok(["devices"])
        let again = try a.run(["sync", "join", lab.remote])
        #expect(again.status == 2)
        #expect(again.stderrText.contains("this vault syncs already with \(lab.remote) as device "))
        _ = try a.sync()
        #expect(try a.ok(["devices"]) == devices)
    }

    /// A copied vault and its original that both wrote (the same counter,
    /// other heads): exit 93 and the advice, not "the trees conflict"; then
    /// `sync join` takes a new device id.
    @Test func aCopyThatWroteTooGetsTheAdvice() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        let d = Device(lab: lab, name: "d")
        try FileManager.default.copyItem(atPath: a.vault, toPath: d.vault)
        // The work tree is copied too: the copy exports before it fetches.
        let tree = { (device: Device) in
            SyncPaths.tree(vaultPath: device.vault, environment: ["XDG_DATA_HOME": device.data])
        }
        try FileManager.default.createDirectory(
            atPath: (tree(d) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: tree(a), toPath: tree(d))
        try a.ok(["update", "mail", "ana"], input: "from the original\n")
        _ = try a.sync()
        try d.ok(["update", "web", "bob"], input: "from the copy\n")
        let refused = try d.run(["sync"])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(
            refused.stderrText.contains(
                "this vault is a copy of another device's:\n     the remote holds a head of device "),
            "\(refused.stderrText)")
        #expect(refused.stderrText.contains("run `fob sync join REMOTE` here to take a new device id"))
        try d.ok(["sync", "join", lab.remote])
        #expect(try d.secret("mail", "ana") == "from the original")
        // The copy's edit, concurrent with the tree's item, is kept: as the item or as its other version.
        let kept = try d.secret("web", "bob") == "from the copy" || d.ok(["conflicts"]).contains("web\tbob\t2 versions")
        #expect(kept)
    }

    /// The lock files a git killed with its sync leaves (its ref's, the
    /// remote-tracking ref's) are recognised as stale and removed: the next
    /// sync runs, and says what it removed.
    @Test func aKilledRunsGitLocksDoNotStopTheNextSync() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        let git = SyncPaths.tree(vaultPath: a.vault, environment: ["XDG_DATA_HOME": a.data]) + "/.git"
        let locks = [git + "/refs/heads/main.lock", git + "/refs/remotes/origin/main.lock", git + "/shallow.lock"]
        let anHourAgo = Date().addingTimeInterval(-3600)
        for path in locks {
            #expect(FileManager.default.createFile(atPath: path, contents: Data()))
            try FileManager.default.setAttributes([.modificationDate: anHourAgo], ofItemAtPath: path)
        }
        try a.ok(["update", "mail", "ana"], input: "after the kill\n")
        let synced = try a.run(["sync"])
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(synced.stderrText.contains("main.lock, left by a sync that was stopped"))
        #expect(locks.allSatisfy { !FileManager.default.fileExists(atPath: $0) })
        _ = try b.sync()
        #expect(try b.secret("mail", "ana") == "after the kill")
    }

    /// A disk that fills during a sync (git's fetch fails with ENOSPC) is
    /// reported as a full disk, not as a remote out of reach.
    @Test func aFullDiskIsReportedAsSuch() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        let bin = lab.directory.url.path + "/bin-full"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let script = """
            #!/bin/sh
            for argument in "$@"; do
              if [ "$argument" = fetch ]; then
                echo "error: file write error: No space left on device" >&2
                echo "fatal: unpack-objects failed" >&2
                exit 128
              fi
            done
            exec /usr/bin/git "$@"

            """
        _ = FileManager.default.createFile(
            atPath: bin + "/git", contents: Data(script.utf8), attributes: [.posixPermissions: 0o755])
        try a.ok(["update", "mail", "ana"], input: "while the disk fills\n")
        let full = try FobProcess.run(
            ["--vault", a.vault, "sync"],
            environment: lab.gitEnvironment.merging([
                "XDG_DATA_HOME": a.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw", "FOB_AGENT": "0",
                "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            ]) { $1 })
        #expect(full.status == 1, "\(full.stderrText)")
        #expect(full.stderrText.contains("the disk is full (git: error: file write error: No space left on device)"))
        #expect(!full.stderrText.contains("cannot reach the sync remote"))
        // With room again, the sync carries the change.
        #expect(try a.run(["sync"]).status == 0)
    }
}

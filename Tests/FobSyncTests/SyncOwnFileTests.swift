import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// A remote that removes, rolls back or rewrites a file only this device
/// writes (its roster, head, header), end to end with the built `fob`,
/// real git and a bare remote on disk: refused with exit 93 naming the
/// file, nothing of it merged, and the same again at the next sync.
@Suite(.serialized) struct SyncOwnFileTests {
    /// The refusal `fob sync` prints for `why`.
    static func refusal(_ why: String) -> String {
        "fob: " + SyncError.tampered(why).description + "\n"
    }

    /// Syncs `device` twice and expects the same refusal (`why`) both
    /// times, and nothing of the remote's commit in its local tree.
    static func refusedTwice(_ device: Device, _ why: String, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let lab = device.lab
        let remote = try lab.git(["rev-parse", "main"], in: lab.remote).filter { !$0.isWhitespace }
        for _ in 0..<2 {
            let result = try device.run(["sync"])
            #expect(result.status == 93, "\(result.stderrText)", sourceLocation: sourceLocation)
            #expect(result.stderrText == refusal(why), sourceLocation: sourceLocation)
            let merged = try ChildProcess.run(
                executable: "/usr/bin/git",
                arguments: ["-C", SyncAttackTests.tree(device), "merge-base", "--is-ancestor", remote, "main"],
                environment: FobProcess.baseEnvironment.merging(lab.gitEnvironment) { $1 })
            #expect(merged.status == 1, "\(merged.stderrText)", sourceLocation: sourceLocation)
        }
    }

    /// The blob of `path` in `commit` of `clone`, written into the clone's work tree.
    static func putBack(_ lab: SyncLab, clone: String, path: String, from commit: String) throws {
        let bytes = try ChildProcess.run(
            executable: "/usr/bin/git", arguments: ["-C", clone, "show", commit + ":" + path],
            environment: FobProcess.baseEnvironment.merging(lab.gitEnvironment) { $1 })
        #expect(bytes.status == 0)
        _ = FileManager.default.createFile(atPath: clone + "/" + path, contents: Data(bytes.stdout))
    }

    /// `sent`: a's roster listing b went out before (the removal would be
    /// merged unseen); else a writes it in this sync (git's merge conflicts).
    @Test(arguments: [true, false]) func aRemoteThatRemovesThisDevicesRosterIsRefusedEveryTime(sent: Bool) throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        if sent { #expect(try a.sync() == "merged 0, conflicts 0\n") }
        let me = try a.deviceID()
        let path = TreePath.roster(device: me)
        let clone = try lab.attackerClone()
        try lab.git(["rm", "-q", path], in: clone)
        try lab.forcePush(clone, message: "remove")
        try Self.refusedTwice(a, "the remote removed \(path), a file only this device writes")
    }

    @Test func aRemoteThatPutsBackAnOlderRosterOfThisDeviceIsRefusedEveryTime() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        // a's roster, which lists b since a took b in, reaches the remote.
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        let me = try a.deviceID()
        let path = TreePath.roster(device: me)
        let clone = try lab.attackerClone()
        // The roster a wrote before it took b in.
        let versions = try lab.git(["log", "--format=%H", "--", path], in: clone).split(separator: "\n")
        try #require(versions.count == 2)
        try Self.putBack(lab, clone: clone, path: path, from: String(versions[1]))
        try lab.forcePush(clone, message: "roll back")
        try Self.refusedTwice(
            a, "the remote rolled \(path) back to an older version, and only this device writes it")
    }

    @Test func aRemoteThatRewritesThisDevicesHeaderIsRefusedEveryTime() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        let me = try a.deviceID()
        let path = TreePath.header(device: me)
        let original = try lab.git(["show", "main:" + path], in: lab.remote)
        let why = "\(path) was changed by the remote; this device wrote another"
        // b's header (written by its `fob passwd`, same password) copied over a's.
        let same = lab.directory.url.path + "/same-pw"
        _ = FileManager.default.createFile(atPath: same, contents: Data("pw\n".utf8))
        try b.ok(["passwd", "--new-password-file", same])
        _ = try b.sync()
        let pristine = try lab.git(["rev-parse", "main"], in: lab.remote).filter { !$0.isWhitespace }
        var clone = try lab.attackerClone()
        let other = clone + "/" + TreePath.header(device: try b.deviceID())
        try FileManager.default.removeItem(atPath: clone + "/" + path)
        try FileManager.default.copyItem(atPath: other, toPath: clone + "/" + path)
        try lab.forcePush(clone, message: "copy")
        try Self.refusedTwice(a, why)
        // Another salt: a header of the same costs for the same key, under another password.
        try lab.git(["update-ref", "refs/heads/main", pristine], in: lab.remote)
        clone = try lab.attackerClone()
        var header = try TreeHeader.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: clone + "/" + path))))
        header.salt = header.salt.map { $0 ^ 1 }
        try Data(header.bytes).write(to: URL(fileURLWithPath: clone + "/" + path))
        try lab.forcePush(clone, message: "salt")
        try Self.refusedTwice(a, why)
        // The honest tree again: syncing works.
        try lab.git(["update-ref", "refs/heads/main", pristine], in: lab.remote)
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try lab.git(["show", "main:" + path], in: lab.remote) == original)
    }
}

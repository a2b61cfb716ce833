import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// A remote that rewrites the tree, end to end with the built `fob`, real
/// git and a bare remote on disk: each attack is refused (exit 93) and
/// named, and nothing of it reaches a vault.
@Suite(.serialized) struct SyncAttackTests {
    /// Two devices synced over a tree made with the interactive preset.
    static func pair(_ lab: SyncLab) throws -> (a: Device, b: Device) {
        let a = try lab.device("a")
        let b = try lab.device("b")
        try a.ok(["add", "mail", "ana"], input: "s3cret\n")
        try a.ok(["sync", "init", lab.remote, "--kdf", "interactive"])
        try b.ok(["sync", "join", lab.remote])
        return (a, b)
    }

    /// The path of `device`'s work tree.
    static func tree(_ device: Device) -> String {
        SyncPaths.tree(vaultPath: device.vault, environment: ["XDG_DATA_HOME": device.data])
    }

    /// Rewrites every header in a clone of the remote with `change` and pushes it.
    static func rewriteHeaders(_ lab: SyncLab, _ change: ([UInt8]) throws -> [UInt8]) throws {
        let clone = try lab.attackerClone()
        let headers = clone + "/headers"
        for name in try FileManager.default.contentsOfDirectory(atPath: headers) {
            let path = headers + "/" + name
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            try Data(try change(bytes)).write(to: URL(fileURLWithPath: path))
        }
        try lab.forcePush(clone)
    }

    @Test func aHeaderWithLoweredCostsIsRefusedAndPasswdKeepsTheDevicesOwn() throws {
        let lab = try SyncLab()
        let (a, _) = try Self.pair(lab)
        try Self.rewriteHeaders(lab) { bytes in
            var header = try TreeHeader.parse(bytes)
            header.kdf = KDFParameters(opslimit: 1, memlimit: 8192)
            return header.bytes
        }
        let refused = try a.run(["sync"])
        #expect(refused.status == 93)
        #expect(
            refused.stderrText.contains("asks for key derivation costs below the interactive preset (1 pass, 8 KiB)"))

        let id = try a.deviceID()
        let newPassword = lab.directory.url.path + "/pw2"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        try a.ok(["passwd", "--new-password-file", newPassword])
        let shown = try ChildProcess.run(
            executable: "/usr/bin/git", arguments: ["-C", Self.tree(a), "show", "HEAD:headers/\(id).header"],
            environment: FobProcess.baseEnvironment.merging(lab.gitEnvironment) { $1 })
        #expect(shown.status == 0)
        let header = try TreeHeader.parse(shown.stdout)
        #expect(header.kdf == KDFParameters(.interactive))
        #expect(try header.open(password: .text("pw2")) != nil)
    }

    @Test func aHeaderOfTheOlderFormatIsRefusedWithWhatToDo() throws {
        let lab = try SyncLab()
        let (a, _) = try Self.pair(lab)
        try Self.rewriteHeaders(lab) { bytes in Array("FOBSYNC2".utf8) + bytes.dropFirst(8) }
        let refused = try a.run(["sync"])
        #expect(refused.status == 93)
        #expect(refused.stderrText.contains("written by an older Fob: a sync header of format 2"))
    }

    /// A revoked device keeps its keys and its git credentials (a stolen
    /// laptop): its later files, merged into the remote beside the
    /// revocation, are ignored and named; with the revocation removed from
    /// the remote, the tree is refused.
    @Test func aRevokedDevicesLaterFilesAreIgnoredAndItsRevocationCannotBeRemoved() throws {
        let lab = try SyncLab()
        let (a, b) = try Self.pair(lab)
        let bID = try b.deviceID()
        try a.ok(["devices", "--revoke", bID])
        try b.ok(["update", "mail", "ana"], input: "attacker-chosen\n")
        try b.ok(["add", "planted", "item"], input: "planted\n")
        // Its own sync commits the export locally, then stops: revoked.
        #expect(try b.run(["sync"]).status == 1)
        let clone = try lab.attackerClone()
        try lab.git(["fetch", "-q", Self.tree(b), "main:stolen"], in: clone)
        try lab.git(["-c", "user.name=x", "-c", "user.email=x@x", "merge", "-q", "--no-edit", "stolen"], in: clone)
        try lab.git(["push", "-q", "origin", "HEAD:main"], in: clone)

        let synced = try a.run(["sync"])
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(
            synced.stderrText.contains("ignored 2 revisions that device ")
                && synced.stderrText.contains("(\(bID))\n     wrote after it was revoked"))
        #expect(try a.secret("mail", "ana") == "s3cret")
        #expect(try a.secret("planted", "item") == nil)

        try lab.git(["pull", "-q", "--no-rebase", "origin", "main"], in: clone)
        try lab.git(["rm", "-q", "devices/\(bID).revoked"], in: clone)
        try lab.forcePush(clone)
        let refused = try a.run(["sync"])
        #expect(refused.status == 93)
        #expect(
            refused.stderrText.contains("the remote lacks the revocation of device ")
                && refused.stderrText.contains("(\(bID)) (cut off after counter 1)"))
        #expect(try a.secret("mail", "ana") == "s3cret")
        #expect(try a.ok(["devices"]).contains("(\(bID))  counter 1  revoked"))
    }
}

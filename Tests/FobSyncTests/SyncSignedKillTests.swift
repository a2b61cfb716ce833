import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobSync

/// Runs of `fob sync` killed (SIGKILL from a `git` first on PATH, as in
/// ``SyncProcessTests``) at each point of the cycle while device signing
/// keys are at work: the next run finishes the sync, and every file the
/// remote ends with is signed by the device it names.
@Suite(.serialized) struct SyncSignedKillTests {
    static let points = ["before-commit", "after-commit", "after-git-merge", "before-push", "after-push"]

    /// Runs `fob sync` on `device` with a `git` that kills it at `point`,
    /// the master password read from `passwordFile`.
    static func killedSync(_ device: Device, lab: SyncLab, at point: String, passwordFile: String) throws {
        let bin = try lab.gitThatKillsItsCaller(at: point)
        let killed = try FobProcess.run(
            ["--vault", device.vault, "sync"],
            environment: lab.gitEnvironment.merging([
                "XDG_DATA_HOME": device.data, "FOB_PASSWORD_FILE": passwordFile, "FOB_AGENT": "0",
                "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            ]) { $1 })
        #expect(killed.signal == SIGKILL || killed.status == 128 + SIGKILL, "\(point): \(killed.stderrText)")
    }

    /// A tree and states as written before signing keys; a's first sync
    /// with keys (which takes a key and writes every file again, signed)
    /// killed: the next run finishes it, and b takes it without a complaint.
    @Test(arguments: points)
    func theFirstSignedSyncKilledAnywhereIsFinishedByTheNextRun(point: String) throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        try SyncSignatureTests.unsign(lab, a, b)
        try a.ok(["update", "mail", "ana"], input: "from a\n")
        try b.ok(["add", "new", "item"], input: "from b\n")
        _ = try b.sync()
        try Self.killedSync(a, lab: lab, at: point, passwordFile: lab.directory.url.path + "/pw")
        let rerun = try a.run(["sync"])
        #expect(rerun.status == 0, "\(point): \(rerun.stderrText)")
        let settled = try b.run(["sync"])
        #expect(settled.status == 0, "\(point): \(settled.stderrText)")
        _ = try a.sync()
        let expected = ["mail ana from a -", "new item from b -", "web bob two -"]
        #expect(try a.contents() == expected, "\(point)")
        #expect(try b.contents() == expected, "\(point)")
        try SyncSignatureTests.expectEverythingSigned(lab, devices: [a, b], point)
        #expect(try a.run(["verify"]).status == 0)
    }

    /// A key rotation's sync (every item written again under the new key,
    /// the epoch file signed) killed: the next run finishes it, and b takes
    /// the new key and every file, signed.
    @Test(arguments: points)
    func aRotationsSyncKilledAnywhereIsFinishedByTheNextRun(point: String) throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        let newPassword = lab.directory.url.path + "/new-pw"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        try a.ok(["passwd", "--rotate-key", "--new-password-file", newPassword])
        try b.ok(["update", "web", "bob"], input: "from b\n")
        _ = try b.sync()
        try Self.killedSync(a, lab: lab, at: point, passwordFile: newPassword)
        let aEnvironment = lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data, "FOB_AGENT": "0"]) { $1 }
        let rerun = try FobProcess.run(
            ["--vault", a.vault, "--password-file", newPassword, "sync"], environment: aEnvironment)
        #expect(rerun.status == 0, "\(point): \(rerun.stderrText)")
        let taken = try b.run(["sync", "--tree-password-file", newPassword])
        #expect(taken.status == 0, "\(point): \(taken.stderrText)")
        #expect(try b.contents() == ["mail ana one -", "web bob from b -"], "\(point)")
        try SyncSignatureTests.expectEverythingSigned(lab, devices: [a, b], point, passwords: ["a": "pw2"])
    }
}

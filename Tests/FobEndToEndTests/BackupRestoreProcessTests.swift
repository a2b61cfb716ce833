import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Issue 35: a backup opens and verifies on the machine that made it, is
/// read-only there, is refused as an old copy when put back over the vault
/// by hand, and `fob restore` puts it back on purpose.
@Suite(.serialized) struct BackupRestoreProcessTests {
    /// `fob backup b.db` then `fob --vault b.db ls` (and `get`, `verify`) work
    /// beside the newer vault, with its watermark kept; a write to it is refused.
    @Test func aBackupOpensReadOnlyBesideTheNewerVault() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let state = TemporaryDirectory(prefix: "fob-state")
        f.extraEnvironment = ["XDG_STATE_HOME": state.url.path]
        #expect(try f.run(["add", "mail", "ana"], input: "old", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let copy = f.vault.directory.file("b.db").path
        #expect(try f.run(["backup", copy]).status == 0)
        #expect(try f.run(["update", "mail", "ana"], input: "newer").status == 0)
        for command in [["ls"], ["get", "mail", "ana"], ["verify"]] {
            let result = try f.run(["--no-agent", "--vault", copy] + command, password: true)
            #expect(result.status == 0, "\(command) \(result.stdoutText) \(result.stderrText)")
            if command[0] == "get" { #expect(result.stdoutText == "old\n") }
            if command[0] == "verify" { #expect(result.stderrText.contains("is a backup, opened read-only")) }
        }
        let viaAgent = try f.run(["--vault", copy, "get", "mail", "ana"], password: true)
        #expect(viaAgent.status == 0, "\(viaAgent.stderrText)")
        #expect(viaAgent.stdoutText == "old\n")
        let write = try f.run(["--no-agent", "--vault", copy, "add", "web", "bo"], input: "x", password: true)
        #expect(write.status == 1, "\(write.stderrText)")
        #expect(write.stderrText.contains("is a backup of") && write.stderrText.contains("fob restore"))
        // The vault itself is untouched by all this.
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "newer\n")
    }

    /// A backup copied over the vault by hand is still refused (93); `fob
    /// restore BACKUP` puts it back, after which the vault opens and writes.
    @Test func aBackupPutBackByHandIsRefusedAndRestoreAcceptsIt() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let state = TemporaryDirectory(prefix: "fob-state")
        f.extraEnvironment = ["XDG_STATE_HOME": state.url.path]
        #expect(try f.run(["add", "mail", "ana"], input: "old", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let copy = f.vault.directory.file("b.db").path
        #expect(try f.run(["backup", copy]).status == 0)
        #expect(try f.run(["update", "mail", "ana"], input: "newer").status == 0)
        #expect(try f.run(["lock"]).status == 0)
        let byHand = f.vault.directory.file("by-hand.db").path
        try FileManager.default.copyItem(atPath: copy, toPath: byHand)
        for suffix in ["-wal", "-shm"] { unlink(f.vault.path + suffix) }
        #expect(rename(byHand, f.vault.path) == 0)
        let refused = try f.run(["--no-agent", "get", "mail", "ana"], password: true)
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(try f.run(["restore", f.vault.path], password: true).status == 2)
        let restore = try f.run(["restore", copy], password: true)
        #expect(restore.status == 0, "\(restore.stderrText)")
        #expect(restore.stdoutText.hasPrefix("Restored "))
        let get = try f.run(["--no-agent", "get", "mail", "ana"], password: true)
        #expect(get.status == 0, "\(get.stderrText)")
        #expect(get.stdoutText == "old\n")
        #expect(try f.run(["--no-agent", "add", "web", "bo"], input: "x", password: true).status == 0)
        #expect(try f.run(["unlock"], password: true).status == 0)
        #expect(try f.run(["get", "web", "bo"]).stdoutText == "x\n")
    }

    /// Restored over a vault that an agent holds unlocked, at a newer write:
    /// the agent is locked and the next unlock reads the restored state.
    @Test func restoreOverAVaultInUseLocksTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let state = TemporaryDirectory(prefix: "fob-state")
        f.extraEnvironment = ["XDG_STATE_HOME": state.url.path]
        #expect(try f.run(["add", "mail", "ana"], input: "old", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let copy = f.vault.directory.file("b.db").path
        #expect(try f.run(["backup", copy]).status == 0)
        #expect(try f.run(["update", "mail", "ana"], input: "newer").status == 0)
        let restore = try f.run(["restore", copy], password: true)
        #expect(restore.status == 0, "\(restore.stderrText)")
        #expect(try f.status()["state"] as? String == "locked")
        let unlock = try f.unlock()
        #expect(unlock.status == 0, "\(unlock.stderrText)")
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "old\n")
    }
}

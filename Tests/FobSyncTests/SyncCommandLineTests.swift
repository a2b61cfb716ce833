import FobStore
import FobSync
import FobTestSupport
import Foundation
import Testing

/// What the sync commands say and refuse, through the built `fob` and real git.
@Suite(.serialized) struct SyncCommandLineTests {
    @Test func conflictsShowTellsTheVersionsApartWithoutTheirValues() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        try a.ok(["update", "mail", "ana", "--comment", "note a"], input: "from a\n")
        try b.ok(["update", "mail", "ana", "--comment", "note b"], input: "from b\n")
        _ = try a.sync()
        _ = try b.sync()
        let shown = try b.ok(["conflicts", "--show"])
        let lines = shown.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(shown)")
        #expect(lines.first == "mail\tana\t2 versions")
        #expect(lines.dropFirst().first?.hasPrefix("  local   written 20") == true, "\(shown)")
        #expect(lines.dropFirst().first?.hasSuffix(", in the vault") == true, "\(shown)")
        #expect(lines.last?.hasPrefix("  remote  written 20") == true, "\(shown)")
        #expect(lines.last?.hasSuffix(", differs in secret, notes") == true, "\(shown)")
        for value in ["from a", "from b", "note a", "note b"] { #expect(!shown.contains(value)) }
        // Without --show, the one line scripts read.
        #expect(try b.ok(["conflicts"]) == "mail\tana\t2 versions\n")
    }

    /// Which device wrote each version, by name and id, on both devices:
    /// the vault's version may be the other device's edit.
    @Test func conflictsShowNamesTheDeviceThatWroteEachVersion() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        try a.ok(["sync", "--name", "desk"])
        try b.ok(["sync", "--name", "laptop"])
        _ = try a.sync()
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        // a's edit has the higher counter: it wins on both.
        try a.ok(["add", "other", "item"], input: "x\n")
        _ = try a.sync()
        try a.ok(["update", "mail", "ana"], input: "from a\n")
        try b.ok(["update", "mail", "ana"], input: "from b\n")
        _ = try a.sync()
        _ = try b.sync()
        _ = try a.sync()
        #expect(try b.secret("mail", "ana") == "from a")
        for device in [a, b] {
            let shown = try device.ok(["conflicts", "--show"])
            let lines = shown.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(shown)")
            #expect(lines.dropFirst().first?.hasSuffix(" by desk (\(aID)), in the vault") == true, "\(shown)")
            #expect(lines.last?.hasSuffix(" by laptop (\(bID)), differs in secret") == true, "\(shown)")
        }
    }

    @Test func resolveNeedsKeepAndRefusesAnyOtherValue() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        try a.ok(["update", "mail", "ana"], input: "from a\n")
        try b.ok(["update", "mail", "ana"], input: "from b\n")
        _ = try a.sync()
        _ = try b.sync()
        let before = try b.secret("mail", "ana")
        // A typo is refused: it used to keep the local version and exit 0.
        let typo = try b.run(["resolve", "mail", "ana", "--keep", "remot"])
        #expect(typo.status == 2)
        #expect(typo.stderrText.contains("--keep wants local or remote, not 'remot'"), "\(typo.stderrText)")
        let missing = try b.run(["resolve", "mail", "ana"])
        #expect(missing.status == 2)
        #expect(missing.stderrText.contains("needs --keep local|remote"), "\(missing.stderrText)")
        #expect(try b.ok(["conflicts"]) == "mail\tana\t2 versions\n")
        #expect(try b.secret("mail", "ana") == before)
        // The usage line shows --keep as required.
        let help = try b.ok(["resolve", "--help"])
        #expect(help.contains("Usage: fob resolve SERVICE ACCOUNT --keep local|remote\n"), "\(help)")
    }

    /// `--keep remote` takes the other version's conflicting parts only:
    /// the winner's edit of another part, merged already, stays.
    @Test func keepRemoteTakesOnlyTheConflictingParts() throws {
        let (_, a, b) = try SyncProcessTests.passwordConflictWonByA()
        // What --keep remote would take: the password, not the notes.
        let shown = try a.ok(["conflicts", "--show"])
        #expect(shown.contains(", differs in secret\n"), "\(shown)")
        try a.ok(["resolve", "mail", "ana", "--keep", "remote"])
        #expect(try a.secret("mail", "ana") == "from b")
        #expect(try a.ok(["get", "mail", "ana", "--field", "notes"]) == "a's notes\n")
        _ = try a.sync()
        _ = try b.sync()
        #expect(try b.contents() == a.contents())
        #expect(try b.contents().contains("mail ana from b a's notes"))
        #expect(try a.ok(["conflicts"]) == "")
        #expect(try b.ok(["conflicts"]) == "")
    }

    @Test func syncSaysWhatItSentOnStandardError() throws {
        let (_, a, _) = try SyncProcessTests.pair()
        try a.ok(["update", "mail", "ana"], input: "new\n")
        try a.ok(["add", "other", "item"], input: "x\n")
        let sent = try a.run(["sync"])
        #expect(sent.status == 0)
        #expect(sent.stdoutText == "merged 0, conflicts 0\n")
        #expect(sent.stderrText.contains("fob: sent 2 new revisions\n"), "\(sent.stderrText)")
        let idle = try a.run(["sync"])
        #expect(idle.stderrText == "", "\(idle.stderrText)")
    }

    /// A resolution is committed locally: `resolve` says so, `sync status`
    /// counts it as not yet sent, and the sync that pushes it says it sent it.
    @Test func aResolutionIsCountedUntilTheSyncThatSendsIt() throws {
        let (_, a, b) = try SyncProcessTests.passwordConflictWonByA()
        #expect(try a.ok(["sync", "status"]).contains("pending local changes: 0, not yet sent: 0 revisions\n"))
        #expect(
            try a.ok(["resolve", "mail", "ana", "--keep", "remote"])
                == "kept the other version's conflicting parts of mail ana; `fob sync` sends the resolution\n")
        let waiting = try a.ok(["sync", "status"])
        #expect(waiting.contains("pending local changes: 0, not yet sent: 1 revision\n"), "\(waiting)")
        let sent = try a.run(["sync"])
        #expect(sent.stdoutText == "merged 0, conflicts 0\n")
        #expect(sent.stderrText.contains("fob: sent 1 new revision\n"), "\(sent.stderrText)")
        #expect(try a.ok(["sync", "status"]).contains("pending local changes: 0, not yet sent: 0 revisions\n"))
        // The other device takes the resolution in.
        #expect(try b.sync() == "merged 1, conflicts 0\n")
        #expect(try b.ok(["conflicts"]) == "")
    }

    @Test func resolveLocalSaysWhatItKept() throws {
        let (_, a, _) = try SyncProcessTests.passwordConflictWonByA()
        #expect(
            try a.ok(["resolve", "mail", "ana", "--keep", "local"])
                == "kept this vault's version of mail ana; `fob sync` sends the resolution\n")
        #expect(try a.ok(["sync", "status"]).contains("not yet sent: 1 revision\n"))
        #expect(try a.run(["sync"]).stderrText.contains("fob: sent 1 new revision\n"))
    }

    /// A device revoked by a vault that had not synced since the device's
    /// last push: what it pushed before is kept, only later writes are not.
    @Test func aRevocationKeepsWhatTheDevicePushedBefore() throws {
        let (_, a, b) = try SyncProcessTests.pair()
        try b.ok(["update", "web", "bob"], input: "pushed before\n")
        try b.ok(["add", "shop", "b"], input: "new on b\n")
        _ = try b.sync()
        let id = try b.deviceID()
        let revoked = try a.run(["devices", "--revoke", id])
        #expect(revoked.status == 0, "\(revoked.stderrText)")
        #expect(try a.secret("web", "bob") == "pushed before")
        #expect(try a.secret("shop", "b") == "new on b")
        // b's later writes are ignored.
        try b.ok(["update", "mail", "ana"], input: "after the revocation\n")
        _ = try b.run(["sync"])
        _ = try a.sync()
        #expect(try a.secret("mail", "ana") == "one")
    }

    /// An unreachable remote is named by git's own cause, not by the tail of its advice.
    @Test func anUnreachableRemoteSaysWhy() throws {
        let (lab, a, _) = try SyncProcessTests.pair()
        try FileManager.default.moveItem(atPath: lab.remote, toPath: lab.remote + ".moved")
        let result = try a.run(["sync"])
        #expect(result.status == 61)
        let last = result.stderrText.split(separator: "\n").last.map(String.init) ?? ""
        #expect(last.hasPrefix("fob: cannot reach the sync remote: fatal: "), "\(result.stderrText)")
        #expect(last.contains("does not appear to be a git repository"), "\(result.stderrText)")
    }

    /// Fresh-eyes findings: a conflict points to its commands; a device
    /// joining does not repeat an old "edit kept" notice; `sync status`
    /// marks a revoked device; a revoked device is told so before it is
    /// asked for the new key's password.
    @Test func syncTellsWhatToDoNextAndNothingStale() throws {
        let (lab, a, b) = try SyncProcessTests.pair()
        try a.ok(["rm", "mail", "ana"])
        try b.ok(["update", "mail", "ana"], input: "edited\n")
        _ = try a.sync()
        _ = try b.sync()
        #expect(try a.run(["sync"]).stderrText.contains("the edit is kept"))
        let c = try lab.device("c")
        let joined = try c.run(["sync", "join", lab.remote])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(!joined.stderrText.contains("the edit is kept"), "\(joined.stderrText)")
        try a.ok(["update", "web", "bob"], input: "from a\n")
        try b.ok(["update", "web", "bob"], input: "from b\n")
        _ = try a.sync()
        let conflicted = try b.run(["sync"])
        #expect(conflicted.stdoutText.hasSuffix(", conflicts 1\n"))
        #expect(
            conflicted.stderrText.hasSuffix(
                "fob: 1 item has versions to settle: see `fob conflicts --show`,\n"
                    + "     then `fob resolve SERVICE ACCOUNT --keep local|remote`\n"), "\(conflicted.stderrText)")
        let id = try c.deviceID()
        try a.ok(["devices", "--revoke", id])
        #expect(try a.ok(["sync", "status"]).contains(" (\(id)): counter "))
        #expect(try a.ok(["sync", "status"]).contains(", revoked\n"))
        let refused = try c.run(["sync"])
        #expect(refused.status == 1, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("was revoked"), "\(refused.stderrText)")
    }

    /// Every device has a name beside its id: given with --name, else the
    /// host name; changed by `sync --name`; seen by the other devices; and
    /// `devices --revoke` takes it for the id.
    @Test func devicesHaveNamesShownBesideTheirIds() throws {
        let lab = try SyncLab()
        let a = try lab.device("a")
        let b = try lab.device("b")
        let c = try lab.device("c")
        try a.ok(["add", "mail", "ana"], input: "one\n")
        _ = try a.ok(["sync", "init", lab.remote, "--kdf", "interactive", "--name", "laptop"])
        _ = try b.ok(["sync", "join", lab.remote, "--name", "desk"])
        _ = try c.ok(["sync", "join", lab.remote])
        _ = try a.sync()
        let (aID, bID, cID) = (try a.deviceID(), try b.deviceID(), try c.deviceID())
        // c: the host name (the id alone on a machine whose host name cannot name a device).
        let cLabel = DeviceName.label(cID, name: DeviceName.hostName())
        #expect(try a.ok(["sync", "status"]).contains("device: laptop (\(aID))\n"))
        #expect(try c.ok(["sync", "status"]).contains("device: \(cLabel)\n"))
        let devices = try a.ok(["devices"])
        #expect(
            devices.contains("laptop (\(aID))  counter 1  (this vault)  added by itself at its counter 0, "),
            "\(devices)")
        #expect(devices.contains("desk (\(bID))  counter 1  added by laptop (\(aID)) at its counter "), "\(devices)")
        #expect(devices.contains("\(cLabel)  counter 1  added by laptop (\(aID)) at its counter "), "\(devices)")
        #expect(try a.ok(["sync", "status"]).contains("device desk (\(bID)): counter 1\n"))
        // A name that would not print as it is: refused before anything is done.
        let d = try lab.device("d")
        let bad = try d.run(["sync", "join", lab.remote, "--name", "esc\u{1B}[2J"])
        #expect(bad.status == 2, "\(bad.stderrText)")
        #expect(bad.stderrText.contains("--name wants 1 to 64 bytes"), "\(bad.stderrText)")
        #expect(try d.run(["sync", "status"]).status != 0)
        #expect(try b.run(["sync", "--name", " desk"]).status == 2)
        #expect(try b.run(["sync", "status", "--name", "desk"]).status == 2)
        // Renamed by a sync, seen by the others at theirs.
        try b.ok(["sync", "--name", "desktop"])
        _ = try a.sync()
        #expect(try a.ok(["devices"]).contains("desktop (\(bID))  counter 2  added by laptop (\(aID))"))
        // --revoke takes a name: not this vault's own, not an unknown one.
        #expect(try a.run(["devices", "--revoke", "laptop"]).status == 2)
        #expect(try a.run(["devices", "--revoke", "nobody"]).status == 2)
        let revoked = try a.run(["devices", "--revoke", "desktop"])
        #expect(revoked.status == 0, "\(revoked.stderrText)")
        #expect(revoked.stdoutText.hasPrefix("revoked desktop (\(bID))\n"), "\(revoked.stdoutText)")
        #expect(try a.ok(["devices"]).contains("desktop (\(bID))  counter 2  revoked  added by laptop (\(aID))"))
        // The revoked device hears of it by its own name.
        let refused = try b.run(["sync"])
        #expect(refused.stderrText.contains("this device, desktop (\(bID)), was revoked"), "\(refused.stderrText)")
    }

    @Test func syncInitRefusesAnUnknownKDFPreset() throws {
        let lab = try SyncLab()
        let a = try lab.device("a")
        let result = try a.run(["sync", "init", lab.remote, "--kdf", "fast"])
        #expect(result.status == 2)
        #expect(result.stderrText.contains("--kdf wants interactive, moderate or sensitive, not 'fast'"))
        // The hint names the command, not the device (the default name is the host name).
        #expect(result.stderrText.contains("Run 'fob sync --help' for its usage."), "\(result.stderrText)")
        // Nothing was pushed.
        #expect(try lab.git(["ls-remote", lab.remote]) == "")
    }

    @Test func joinWithTheVaultsPasswordFileSaysWhichPasswordItTried() throws {
        let lab = try SyncLab()
        let a = try lab.device("a")
        try a.ok(["add", "mail", "ana"], input: "one\n")
        _ = try a.ok(["sync", "init", lab.remote, "--kdf", "interactive"])
        // b's vault has another master password, in its password file.
        let b = Device(lab: lab, name: "b")
        _ = try Vault.create(at: URL(fileURLWithPath: b.vault), password: .text("other"), kdf: .testing)
        let otherFile = lab.directory.url.path + "/other-pw"
        _ = FileManager.default.createFile(atPath: otherFile, contents: Data("other\n".utf8))
        let env = lab.gitEnvironment.merging([
            "XDG_DATA_HOME": b.data, "FOB_PASSWORD_FILE": otherFile, "FOB_AGENT": "0",
        ]) {
            $1
        }
        let tried = try FobProcess.run(["--vault", b.vault, "sync", "join", lab.remote], environment: env)
        #expect(tried.status == 51)
        #expect(tried.stderrText.contains("this vault's password file"), "\(tried.stderrText)")
        #expect(tried.stderrText.contains("--tree-password-file"), "\(tried.stderrText)")
        let joined = try FobProcess.run(
            ["--vault", b.vault, "sync", "join", lab.remote, "--tree-password-file", lab.directory.url.path + "/pw"]
                + ["--accept-key", try #require(try lab.rosterFingerprint())], environment: env)
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(joined.stdoutText == "merged 1, conflicts 0\n")
    }
}

import FobSync
import FobTestSupport
import Foundation
import Testing

/// Sync through real git and a local bare repository, with the built `fob`.
@Suite(.serialized) struct SyncProcessTests {
    /// Two devices set up with one item each, synced both ways.
    static func pair() throws -> (SyncLab, Device, Device) {
        let lab = try SyncLab()
        let a = try lab.device("a")
        let b = try lab.device("b")
        try a.ok(["add", "mail", "ana"], input: "one\n")
        try b.ok(["add", "web", "bob"], input: "two\n")
        #expect(try a.ok(["sync", "init", lab.remote, "--kdf", "interactive"]) == "merged 0, conflicts 0\n")
        #expect(try b.ok(["sync", "join", lab.remote]) == "merged 1, conflicts 0\n")
        #expect(try a.sync() == "merged 1, conflicts 0\n")
        return (lab, a, b)
    }

    /// A ``pair()`` after a conflict on `mail ana`: a changed the notes
    /// ("a's notes") and the password ("from a"), b the password ("from
    /// b"); a's edit has the higher counter, so a's password won. Both synced.
    static func passwordConflictWonByA(sourceLocation: SourceLocation = #_sourceLocation) throws -> (
        SyncLab, Device, Device
    ) {
        let (lab, a, b) = try pair()
        try a.ok(["add", "other", "item"], input: "x\n", sourceLocation: sourceLocation)
        _ = try a.sync(sourceLocation: sourceLocation)
        try a.ok(
            ["update", "mail", "ana", "--comment", "a's notes"], input: "from a\n", sourceLocation: sourceLocation)
        try b.ok(["update", "mail", "ana"], input: "from b\n", sourceLocation: sourceLocation)
        _ = try a.sync(sourceLocation: sourceLocation)
        #expect(try b.sync().hasSuffix(", conflicts 1\n"), sourceLocation: sourceLocation)
        #expect(try a.sync().hasSuffix(", conflicts 1\n"), sourceLocation: sourceLocation)
        #expect(try a.secret("mail", "ana") == "from a", sourceLocation: sourceLocation)
        return (lab, a, b)
    }

    // 1.
    @Test func twoDevicesAddDifferentItemsAndBothHaveBoth() throws {
        let (_, a, b) = try Self.pair()
        #expect(try a.contents() == ["mail ana one -", "web bob two -"])
        #expect(try b.contents() == a.contents())
        #expect(try a.run(["verify"]).status == 0)
        #expect(try b.run(["verify"]).status == 0)
        // Nothing changed: nothing merged, and the trees agree.
        #expect(try b.sync() == "merged 0, conflicts 0\n")
        let status = try a.ok(["sync", "status"])
        #expect(status.contains("pending local changes: 0"), "\(status)")
        #expect(status.split(separator: "\n").filter { $0.hasPrefix("device ") }.count == 2, "\(status)")
    }

    /// The sync state is an item of the vault but no listing, export or
    /// search shows it; `verify` and `passwd` still carry it.
    @Test func theSyncStateIsInNoListingOrExport() throws {
        let (_, a, _) = try Self.pair()
        #expect(try a.ok(["ls"]).contains("fob-sync") == false)
        #expect(try a.items().map(\.service) == ["mail", "web"])
        let exported = try a.ok(["export"])
        #expect(exported.contains("\"mail\"") && !exported.contains("fob-sync"), "\(exported)")
        #expect(try a.ok(["export", "--format", "csv"]).contains("fob-sync") == false)
        #expect(try a.run(["ls", "fob-sync"]).status != 0)
        #expect(try a.run(["get", "fob-sync", "state"]).status == 44)
        #expect(try a.run(["verify"]).status == 0)
        // Still there for sync itself.
        #expect(try a.sync() == "merged 0, conflicts 0\n")
    }

    /// The terminal UI at 80x24 marks the conflicting item, says what the
    /// last sync did, and keeps the other device's version with `V` then
    /// `r`: only its conflicting part (the password), off the UI thread;
    /// this vault's notes, merged from its own edit, stay.
    @Test func theTerminalUIMarksAConflictAndKeepsTheOtherVersion() throws {
        let (lab, a, b) = try Self.passwordConflictWonByA()
        let tmux = try TmuxSession(
            width: 80, height: 24,
            command: [
                "/bin/sh", "-c", "\"$@\"; sleep 60", "sh", FobProcess.binaryURL.path, "--vault", a.vault,
                "--clipboard", "none", "--no-agent",
            ],
            environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data]) { $1 })
        try tmux.waitFor("Master password")
        try tmux.type("pw")
        try tmux.press("Enter")
        let screen = try tmux.waitForAll("!mail", "2 versions", "conflicts 1")
        #expect(screen.contains("Last sync "), "\(screen)")
        #expect(!screen.contains("!web"), "\(screen)")
        try tmux.press("F6")
        // Every answer has its button, and none is a letter.
        let asked = try tmux.waitForAll(
            "Sync conflict", "Ctrl-O the other", "[ Enter This vault's ]", "[ Ctrl-O The other ]", "[ Esc Cancel ]")
        // Who wrote each version: the vault's is a's edit, the other b's.
        let (aID, bID) = (try a.deviceID(), try b.deviceID())
        let mine = try #require(asked.range(of: aID), "\(asked)")
        let theirs = try #require(asked.range(of: bID), "\(asked)")
        #expect(mine.lowerBound < theirs.lowerBound, "\(asked)")
        // Both passwords masked; Ctrl-R reveals both, and hides them again.
        #expect(asked.contains("Ctrl-R reveals both passwords") && !asked.contains("from b"), "\(asked)")
        try tmux.press("C-r")
        _ = try tmux.waitForAll("This vault's    from a", "Other device's  from b", "Ctrl-R hides them")
        try tmux.press("C-r")
        try tmux.waitForAbsence(of: "from b")
        try tmux.press("C-o")
        let after = try tmux.waitFor("Kept the other device's version")
        #expect(!after.contains("!mail"), "\(after)")
        try tmux.press("C-q")
        try tmux.waitForAbsence(of: "Kept the other")
        #expect(try a.secret("mail", "ana") == "from b")
        #expect(try a.ok(["get", "mail", "ana", "--field", "notes"]) == "a's notes\n")
        #expect(try a.ok(["conflicts"]) == "")
    }

    // 2.
    @Test func editsOfDifferentFieldsAreBothKept() throws {
        let (_, a, b) = try Self.pair()
        try a.ok(["update", "mail", "ana", "--comment", "note from a"], input: "one\n")
        try b.ok(["update", "mail", "ana"], input: "secret from b\n")
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try b.sync() == "merged 1, conflicts 0\n")
        #expect(try a.sync() == "merged 1, conflicts 0\n")
        #expect(try a.contents() == ["mail ana secret from b note from a", "web bob two -"])
        #expect(try b.contents() == a.contents())
        #expect(try a.ok(["conflicts"]) == "")
    }

    // 3.
    @Test func bothEditThePasswordTheSameWinnerAndAConflictUntilResolved() throws {
        let (_, a, b) = try Self.pair()
        try a.ok(["update", "mail", "ana"], input: "from a\n")
        try b.ok(["update", "mail", "ana"], input: "from b\n")
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        // Whose value wins decides what each side merges; both see the conflict.
        #expect(try b.sync().hasSuffix(", conflicts 1\n"))
        #expect(try a.sync().hasSuffix(", conflicts 1\n"))
        let winner = try #require(try a.secret("mail", "ana"))
        #expect(["from a", "from b"].contains(winner))
        #expect(try b.secret("mail", "ana") == winner)
        #expect(try a.ok(["conflicts"]) == "mail\tana\t2 versions\n")
        #expect(try b.ok(["conflicts"]) == "mail\tana\t2 versions\n")
        // Resolved on b by keeping the other version, synced, gone on a.
        try b.ok(["resolve", "mail", "ana", "--keep", "remote"])
        let loser = winner == "from a" ? "from b" : "from a"
        #expect(try b.secret("mail", "ana") == loser)
        #expect(try b.ok(["conflicts"]) == "")
        #expect(try b.sync() == "merged 0, conflicts 0\n")
        #expect(try a.sync() == "merged 1, conflicts 0\n")
        #expect(try a.ok(["conflicts"]) == "")
        #expect(try a.secret("mail", "ana") == loser)
        #expect(try b.run(["resolve", "mail", "ana", "--keep", "local"]).status == 44)
    }

    // 4.
    @Test func anEditBeatsAConcurrentDeleteAndTwoDeletesMakeOne() throws {
        let (_, a, b) = try Self.pair()
        try a.ok(["rm", "mail", "ana"])
        try b.ok(["update", "mail", "ana"], input: "edited\n")
        _ = try a.sync()
        _ = try b.sync()
        // Where the delete is undone, sync says so, once.
        let undone = try a.run(["sync"])
        #expect(undone.status == 0)
        #expect(undone.stderrText.contains("the edit is kept"), "\(undone.stderrText)")
        #expect(try a.run(["sync"]).stderrText == "")
        #expect(try a.secret("mail", "ana") == "edited")
        #expect(try b.secret("mail", "ana") == "edited")
        try a.ok(["rm", "web", "bob"])
        try b.ok(["rm", "web", "bob"])
        _ = try a.sync()
        _ = try b.sync()
        _ = try a.sync()
        #expect(try a.secret("web", "bob") == nil)
        #expect(try b.secret("web", "bob") == nil)
        #expect(try a.contents() == b.contents())
        #expect(try a.run(["verify"]).status == 0)
    }

    // 6.
    @Test func aRemoteForcePushedBackIsRefusedNamingTheDevice() throws {
        let (lab, a, b) = try Self.pair()
        let old = try lab.git(["rev-parse", "main"], in: lab.remote).filter { !$0.isWhitespace }
        try a.ok(["update", "mail", "ana"], input: "newer\n")
        _ = try a.sync()
        _ = try b.sync()
        try lab.git(["update-ref", "refs/heads/main", old], in: lab.remote)
        let refused = try b.run(["sync"])
        #expect(refused.status == 93, "\(refused.stderrText)")
        // Named by its name and id.
        let aID = try a.deviceID()
        let named = "went back: device \(DeviceName.label(aID, name: DeviceName.hostName())) is at counter"
        #expect(refused.stderrText.contains(named), "\(refused.stderrText)")
        #expect(refused.stderrText.contains("and counter 2 was seen"), "\(refused.stderrText)")
        #expect(try b.secret("mail", "ana") == "newer")
    }

    @Test func anOldRevisionPutBackIsIgnoredAndReported() throws {
        let (lab, a, b) = try Self.pair()
        let clone = try lab.attackerClone()
        let before = try lab.git(["ls-files", "items"], in: clone).split(separator: "\n").map(String.init)
        var contents: [String: Data] = [:]
        for path in before { contents[path] = FileManager.default.contents(atPath: clone + "/" + path) }
        try a.ok(["update", "mail", "ana"], input: "newer\n")
        _ = try a.sync()
        _ = try b.sync()
        try lab.git(["pull", "-q", "--ff-only", "origin", "main"], in: clone)
        let after = Set(try lab.git(["ls-files", "items"], in: clone).split(separator: "\n").map(String.init))
        // The superseded revision back beside the current one.
        let old = try #require(before.first { !after.contains($0) })
        _ = FileManager.default.createFile(atPath: clone + "/" + old, contents: contents[old])
        try lab.forcePush(clone)
        let result = try b.run(["sync"])
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("ignored an old revision put back"), "\(result.stderrText)")
        #expect(try b.contents() == a.contents())
    }

    @Test func aFileRemovedMovedOrChangedIsRefused() throws {
        let (lab, a, b) = try Self.pair()
        _ = a
        let pristine = try lab.git(["rev-parse", "main"], in: lab.remote).filter { !$0.isWhitespace }
        let files = try lab.git(["ls-files", "items"], in: try lab.attackerClone()).split(separator: "\n").map(
            String.init)
        #expect(files.count == 2)
        // A flipped byte.
        var clone = try lab.attackerClone()
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: clone + "/" + files[0])))
        bytes[bytes.count - 3] ^= 1
        _ = FileManager.default.createFile(atPath: clone + "/" + files[0], contents: Data(bytes))
        try lab.forcePush(clone, message: "flip")
        var result = try b.run(["sync"])
        #expect(result.status == 93, "\(result.stderrText)")
        // The signature over the file fails first.
        #expect(result.stderrText.contains("is not signed by the device it names"), "\(result.stderrText)")
        // A file moved into the other item.
        try lab.git(["update-ref", "refs/heads/main", pristine], in: lab.remote)
        clone = try lab.attackerClone()
        let other = files[1].split(separator: "/").dropLast().joined(separator: "/")
        let moved = other + "/" + (files[0].split(separator: "/").last.map(String.init) ?? "")
        try lab.git(["mv", files[0], moved], in: clone)
        try lab.forcePush(clone, message: "move")
        result = try b.run(["sync"])
        #expect(result.status == 93, "\(result.stderrText)")
        // A current revision removed without a newer one.
        try lab.git(["update-ref", "refs/heads/main", pristine], in: lab.remote)
        clone = try lab.attackerClone()
        try lab.git(["rm", "-q", files[0]], in: clone)
        try lab.forcePush(clone, message: "remove")
        result = try b.run(["sync"])
        #expect(result.status == 93, "\(result.stderrText)")
        // The head that saw every file of the tree names the device.
        #expect(result.stderrText.contains("holds other revision files than device "), "\(result.stderrText)")
        // The honest tree again: syncing works.
        try lab.git(["update-ref", "refs/heads/main", pristine], in: lab.remote)
        #expect(try b.run(["sync"]).status == 0)
    }

    // 7.
    @Test func aVaultCopiedToAnotherDeviceIsRefused() throws {
        let (lab, a, _) = try Self.pair()
        let d = Device(lab: lab, name: "d")
        try FileManager.default.copyItem(atPath: a.vault, toPath: d.vault)
        try a.ok(["update", "mail", "ana"], input: "after the copy\n")
        _ = try a.sync()
        let refused = try d.run(["sync"])
        #expect(refused.status == 93, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("is a copy"), "\(refused.stderrText)")
        // Joining again takes a new device id and merges.
        try d.ok(["sync", "join", lab.remote])
        #expect(try d.contents() == a.contents())
    }

    // 10.
    @Test func fieldsSeedsAndAccessibilityTravelAsTheyAre() throws {
        let (_, a, b) = try Self.pair()
        try a.ok(
            [
                "add", "bank", "ana", "--field", "branch=north", "--hidden-field", "pin", "--url",
                "https://bank.example", "--accessible", "after-first-unlock", "--label", "Bank", "--kind", "token",
            ], input: "4321\nbank-secret\n")
        try a.ok(["totp", "set", "bank", "ana"], input: "JBSWY3DPEHPK3PXP\n")
        _ = try a.sync()
        _ = try b.sync()
        for field in ["pin", "branch", "url", "totp"] {
            #expect(
                try b.ok(["get", "bank", "ana", "--field", field]) == a.ok(["get", "bank", "ana", "--field", field]),
                "\(field)")
        }
        // Every attribute and the secret agree; only the vault's own revision counts differently.
        func withoutRevision(_ json: String) -> String {
            json.split(separator: ",").filter { !$0.hasPrefix("\"revision\"") }.joined(separator: ",")
        }
        #expect(
            withoutRevision(try b.ok(["get", "bank", "ana", "--json"]))
                == withoutRevision(try a.ok(["get", "bank", "ana", "--json"])))
    }

    @Test func missingGitAndAnUnreachableRemoteHaveTheirOwnStatuses() throws {
        let (lab, a, _) = try Self.pair()
        let noGit = try FobProcess.run(
            ["--vault", a.vault, "sync"],
            environment: lab.gitEnvironment.merging([
                "XDG_DATA_HOME": a.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw", "PATH": "/nonexistent",
            ]) { $1 })
        #expect(noGit.status == 60, "\(noGit.stderrText)")
        try FileManager.default.moveItem(atPath: lab.remote, toPath: lab.remote + ".away")
        try a.ok(["add", "local", "work"], input: "goes on\n")
        let unreachable = try a.run(["sync"])
        #expect(unreachable.status == 61, "\(unreachable.stderrText)")
        #expect(unreachable.stderrText.contains("fatal:"), "git's own message: \(unreachable.stderrText)")
        #expect(try a.secret("local", "work") == "goes on")
    }

    // 5.
    @Test(arguments: [11, 29] as [UInt64]) func threeDevicesConvergeAfterRandomOperations(seed: UInt64) throws {
        let lab = try SyncLab()
        let devices = [try lab.device("a"), try lab.device("b"), try lab.device("c")]
        try devices[0].ok(["sync", "init", lab.remote, "--kdf", "interactive"])
        try devices[1].ok(["sync", "join", lab.remote])
        try devices[2].ok(["sync", "join", lab.remote])
        var generator = SeededGenerator(seed: seed)
        let services = ["mail", "web", "bank"]
        // Every value acknowledged by a device, per item.
        var written: [String: Set<String>] = [:]
        for step in 0..<14 {
            let device = devices[Int.random(in: 0..<3, using: &generator)]
            let service = services[Int.random(in: 0..<services.count, using: &generator)]
            switch Int.random(in: 0..<5, using: &generator) {
            case 0:
                if try device.run(["rm", service, "ana"]).status == 0 { written[service, default: []].insert("-") }
            case 1:
                _ = try device.run(["sync"])
            default:
                let value = "\(device.name)\(step)"
                if try device.run(["save", service, "ana"], input: value + "\n").status == 0 {
                    written[service, default: []].insert(value)
                }
            }
        }
        // Two rounds in a random order bring everything everywhere.
        for _ in 0..<2 {
            for device in devices.shuffled(using: &generator) {
                let result = try device.run(["sync"])
                #expect(result.status == 0, "\(result.stderrText)")
                #expect(!result.stderrText.contains("CONFLICT"), "\(result.stderrText)")
            }
        }
        _ = try devices[0].sync()
        let reference = try devices[0].contents()
        for device in devices.dropFirst() { #expect(try device.contents() == reference, "seed \(seed)") }
        // What each item holds was acknowledged somewhere; conflicts agree too.
        for service in services {
            let current = try devices[0].secret(service, "ana") ?? "-"
            #expect(current == "-" || written[service, default: []].contains(current), "\(service): \(current)")
        }
        let conflicts = try devices[0].ok(["conflicts"])
        for device in devices.dropFirst() { #expect(try device.ok(["conflicts"]) == conflicts) }
        for device in devices { #expect(try device.run(["verify"]).status == 0) }
    }

    // 8.
    @Test(arguments: ["before-commit", "after-commit", "after-git-merge", "before-push", "after-push"])
    func aSyncKilledAnywhereIsFinishedByTheNextRun(point: String) throws {
        let (lab, a, b) = try Self.pair()
        try a.ok(["update", "mail", "ana"], input: "from a\n")
        try a.ok(["add", "new", "item"], input: "added\n")
        try b.ok(["update", "web", "bob", "--comment", "from b"], input: "two\n")
        _ = try b.sync()
        // A `git` first on PATH that kills its parent, `fob sync`, with
        // SIGKILL at one point of the cycle; fob itself has no hook for it.
        let bin = try lab.gitThatKillsItsCaller(at: point)
        let killed = try FobProcess.run(
            ["--vault", a.vault, "sync"],
            environment: lab.gitEnvironment.merging([
                "XDG_DATA_HOME": a.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw",
                "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
            ]) { $1 })
        #expect(killed.signal == SIGKILL || killed.status == 128 + SIGKILL, "\(point): \(killed.stderrText)")
        let rerun = try a.run(["sync"])
        #expect(rerun.status == 0, "\(point): \(rerun.stderrText)")
        _ = try b.sync()
        let expected = ["mail ana from a -", "new item added -", "web bob two from b"]
        #expect(try a.contents() == expected, "\(point)")
        #expect(try b.contents() == expected, "\(point)")
        #expect(try a.ok(["conflicts"]) == "", "\(point)")
        // Nothing doubled: one live revision per item in the tree.
        let files = try lab.git(["ls-tree", "-r", "--name-only", "HEAD", "items"], in: b.tree).split(separator: "\n")
        #expect(files.count == 3, "\(point): \(files)")
        try SyncSignatureTests.expectEverythingSigned(lab, devices: [a, b], point)
        #expect(try a.run(["verify"]).status == 0)
    }

    @Test func syncRunsThroughTheAgentAndStatusCountsConflicts() throws {
        let (lab, a, b) = try Self.pair()
        let agent = try DeviceAgent(lab, a)
        defer { agent.stop() }
        func viaAgent(_ arguments: [String], input: String = "") throws -> ProcessResult {
            try agent.run(arguments, input: input)
        }
        #expect(try viaAgent(["update", "mail", "ana"], input: "through the agent\n").status == 0)
        try b.ok(["update", "mail", "ana"], input: "from b\n")
        _ = try b.sync()
        let synced = try viaAgent(["sync"])
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(synced.stdoutText == "merged 1, conflicts 1\n" || synced.stdoutText == "merged 0, conflicts 1\n")
        let status = try viaAgent(["status", "--json"])
        let object = try JSONDecoder().decode(AgentStatus.self, from: Data(status.stdout))
        #expect(object.state == "unlocked")
        #expect(object.conflicts == 1)
        #expect(try viaAgent(["conflicts"]).stdoutText == "mail\tana\t2 versions\n")
        #expect(try viaAgent(["resolve", "mail", "ana", "--keep", "local"]).status == 0)
        #expect(try viaAgent(["sync", "--strict"]).stdoutText == "merged 0, conflicts 0\n")
        _ = try b.sync()
        #expect(try b.ok(["conflicts"]) == "")
        let (bc, ac) = (try b.contents(), try a.contents())
        #expect(bc == ac)
    }

    /// Sync's own records, written through the agent, stay out of the
    /// agent's listings as they stay out of a listing of the vault file.
    @Test func aSyncThroughTheAgentLeavesItsRecordsOutOfListings() throws {
        let (lab, a, _) = try Self.pair()
        let agent = try DeviceAgent(lab, a)
        defer { agent.stop() }
        // A first listing: the agent knows the items, and patches them after its writes.
        let direct = try a.ok(["ls"])
        #expect(try agent.run(["ls"]).stdoutText == direct)
        let synced = try agent.run(["sync"])
        #expect(synced.stdoutText == "merged 0, conflicts 0\n", "\(synced.stderrText)")
        #expect(try agent.run(["ls"]).stdoutText == direct)
        let json = try agent.run(["ls", "--json"])
        #expect(json.stdoutText == (try a.ok(["ls", "--json"])))
        let listed = try JSONDecoder().decode([Listed].self, from: Data(json.stdout))
        #expect(listed.map { "\($0.service) \($0.account)" } == ["mail ana", "web bob"])
    }

    @Test func aRevokedDeviceCanNoLongerSync() throws {
        let (_, a, b) = try Self.pair()
        let bID = try b.deviceID()
        #expect(try a.run(["devices", "--revoke", "0123456789abcdef"]).status == 2)
        let revoked = try a.run(["devices", "--revoke", bID])
        #expect(revoked.status == 0, "\(revoked.stderrText)")
        #expect(try a.ok(["devices"]).contains("(\(bID))  counter 1  revoked"))
        try b.ok(["update", "web", "bob"], input: "after the revocation\n")
        // The tree's new key is not b's: it is told why before any password is asked.
        let first = try b.run(["sync"])
        #expect(first.status == 1, "\(first.stderrText)")
        #expect(!first.stderrText.contains("new key"), "\(first.stderrText)")
        let refused = try b.run(["sync", "--tree-password-file", b.lab.directory.url.path + "/pw"])
        #expect(refused.status == 1, "\(refused.stderrText)")
        #expect(refused.stderrText.contains("was revoked"), "\(refused.stderrText)")
        #expect(try a.sync() == "merged 0, conflicts 0\n")
        #expect(try a.secret("web", "bob") == "two")
    }

    // 9, in part: no key epochs yet; the header follows the new password.
    @Test func passwdReSealsTheHeaderAndOtherDevicesKeepTheirEdits() throws {
        let (lab, a, b) = try Self.pair()
        try b.ok(["update", "web", "bob"], input: "unsynced on b\n")
        let newPassword = lab.directory.url.path + "/new-pw"
        _ = FileManager.default.createFile(atPath: newPassword, contents: Data("pw2\n".utf8))
        try a.ok(["passwd", "--new-password-file", newPassword])
        let synced = try FobProcess.run(
            ["--vault", a.vault, "--password-file", newPassword, "sync"],
            environment: lab.gitEnvironment.merging(["XDG_DATA_HOME": a.data]) { $1 })
        #expect(synced.status == 0, "\(synced.stderrText)")
        #expect(try b.sync() == "merged 0, conflicts 0\n")
        #expect(try b.secret("web", "bob") == "unsynced on b")
        // A new device joins with the new password, not the old one.
        let c = try lab.device("c")
        #expect(try c.run(["sync", "join", lab.remote]).status == 51)
        let joined = try c.run(["sync", "join", lab.remote, "--tree-password-file", newPassword])
        #expect(joined.status == 0, "\(joined.stderrText)")
        #expect(try c.contents() == b.contents())
        #expect(try c.contents() == ["mail ana one -", "web bob unsynced on b -"])
    }

    @Test func twoSyncsOfOneVaultAtOnceTakeTurns() throws {
        let (lab, a, b) = try Self.pair()
        try a.ok(["update", "mail", "ana"], input: "racing\n")
        let environment = lab.gitEnvironment.merging([
            "XDG_DATA_HOME": a.data, "FOB_PASSWORD_FILE": lab.directory.url.path + "/pw",
        ]) { $1 }
        let runs = try (0..<3).map { _ in try FobProcess.start(["--vault", a.vault, "sync"], environment: environment) }
        for run in runs {
            let result = run.wait(timeout: 120)
            #expect(result.status == 0, "\(result.stderrText)")
        }
        _ = try b.sync()
        #expect(try b.secret("mail", "ana") == "racing")
        #expect(
            try lab.git(["ls-tree", "-r", "--name-only", "HEAD", "items"], in: a.tree).split(separator: "\n").count == 2
        )
    }
}

/// An agent unlocked for one device's vault: every command of ``run(_:input:)``
/// is served by it (no password file).
struct DeviceAgent {
    let lab: SyncLab
    let device: Device
    let runtime: String

    init(_ lab: SyncLab, _ device: Device) throws {
        (self.lab, self.device, runtime) = (lab, device, lab.directory.url.path + "/runtime-\(device.name)")
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let unlocked = try FobProcess.run(
            ["--vault", device.vault, "unlock"],
            environment: environment.merging(["FOB_PASSWORD_FILE": lab.directory.url.path + "/pw"]) { $1 })
        #expect(unlocked.status == 0, "\(unlocked.stderrText)")
    }

    var environment: [String: String] {
        lab.gitEnvironment.merging([
            "XDG_DATA_HOME": device.data, "XDG_RUNTIME_DIR": runtime, "FOB_AGENT": "1",
        ]) { $1 }
    }

    func run(_ arguments: [String], input: String = "") throws -> ProcessResult {
        try FobProcess.run(["--vault", device.vault] + arguments, environment: environment, input: input)
    }

    /// Ends the agent (by the pid it reports).
    func stop() {
        if let status = try? run(["status", "--json"]),
            let object = try? JSONDecoder().decode(AgentStatus.self, from: Data(status.stdout)),
            let pid = object.pid
        {
            kill(pid_t(pid), SIGTERM)
        }
    }
}

/// What the sync tests read of `fob status --json`.
struct AgentStatus: Decodable {
    var state: String
    var pid: Int?
    var conflicts: Int?
}

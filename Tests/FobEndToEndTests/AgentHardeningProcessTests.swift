import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The agent as a process under attack and accident: sockets shared by two
/// vaults, timeouts, huge frame headers, vaults put back, foreign
/// directories, `fob run`, copies of a vault in use.
@Suite(.serialized) struct AgentHardeningProcessTests {
    /// Two vaults whose agents are forced onto one socket (`FOB_AGENT_SOCKET`):
    /// the agent of A never serves B.
    @Test func anAgentServesOnlyTheVaultItWasStartedFor() throws {
        let a = try AgentFixture()
        defer { a.stop() }
        let b = try AgentFixture()
        defer { b.stop() }
        let shared = a.runtime.url.path + "/fob/shared.sock"
        a.extraEnvironment = ["FOB_AGENT_SOCKET": shared]
        b.extraEnvironment = ["FOB_AGENT_SOCKET": shared, "XDG_RUNTIME_DIR": a.runtime.url.path]
        #expect(try a.run(["add", "mail", "ana"], input: "in-a", password: true).status == 0)
        #expect(try a.unlock().status == 0)
        #expect(try a.status()["state"] as? String == "unlocked")
        // B reaches A's agent, which refuses; B's secret lands in B, never in A.
        let add = try b.run(["add", "web", "bo"], input: "in-b", password: true)
        #expect(add.status == 0, "\(add.stderrText)")
        #expect(try a.run(["--no-agent", "get", "web", "bo"], password: true).status == 44)
        #expect(try b.run(["--no-agent", "get", "web", "bo"], password: true).stdoutText == "in-b\n")
        #expect(try b.run(["get", "mail", "ana"], password: true).status == 44)
        // Unlocking B is not "already unlocked": A's agent refuses it.
        let unlock = try b.run(["unlock"], password: true)
        #expect(unlock.status == 36, "\(unlock.stderrText)")
        #expect(!unlock.stderrText.contains("already unlocked"))
        #expect(unlock.stderrText.contains("not \(b.endpoint.vault)"))
        #expect(try a.status()["state"] as? String == "unlocked")
    }

    @Test func socketNamesAreACryptographicHashOfTheCanonicalPath() {
        let endpoint = AgentEndpoint(
            vaultURL: URL(fileURLWithPath: "/tmp/vault.db"), environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
        let name = URL(fileURLWithPath: endpoint.socket).lastPathComponent
        #expect(name == "agent-" + Sodium.hex(Sodium.genericHash(Array("/tmp/vault.db".utf8), length: 16)) + ".sock")
    }

    /// After the idle or maximum time only after-first-unlock items are
    /// open: what needs the whole vault answers as locked (36), never empty,
    /// "not found" or "duplicate".
    @Test func afterATimeoutWholeVaultAnswersAreLockedNotAbsent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock(["--idle", "0", "--max", "3"]).status == 0)
        #expect(
            try f.run(
                ["git-credential", "store"], input: "protocol=https\nhost=git.example\nusername=ana\npassword=g1\n\n"
            )
            .status == 0)
        let docker = #"{"ServerURL":"registry.example","Username":"bo","Secret":"d1"}"#
        #expect(try f.run(["docker-credential", "store"], input: docker).status == 0)
        #expect(try f.run(["add", "mail", "ana"], input: "m1").status == 0)
        let csv = f.runtime.file("export.csv")
        try Data("name,url,username,password,note\nmail,,ana,m1,\n".utf8).write(to: csv)
        #expect(try f.eventually(timeout: 8) { try f.status()["afterFirstUnlock"] as? Bool == true })
        let git = try f.run(["git-credential", "get"], input: "protocol=https\nhost=git.example\n\n")
        #expect(git.status == 36, "\(git.stdoutText) \(git.stderrText)")
        #expect(git.stdout.isEmpty)
        #expect(try f.run(["docker-credential", "get"], input: "registry.example").status == 36)
        #expect(try f.run(["docker-credential", "store"], input: docker).status == 36)
        #expect(try f.run(["docker-credential", "list"]).status == 36)
        #expect(try f.run(["import", "chrome-csv", csv.path]).status == 36)
        let ls = try f.run(["ls"])
        #expect(ls.status == 36)
        #expect(ls.stdout.isEmpty)
        // With the master password the whole vault answers.
        #expect(try f.run(["ls"], password: true).stdoutText.contains("mail"))
    }

    /// Connections that announce a huge frame and stall cost the agent a
    /// few KiB each, and other clients are served meanwhile.
    @Test func stalledHugeFramesNeitherGrowTheAgentNorBlockOthers() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock().status == 0)
        guard let pid = f.agentPid else {
            Issue.record("no agent")
            return
        }
        let before = Self.residentKiB(pid)
        var stalled: [Int32] = []
        defer { stalled.forEach { close($0) } }
        for _ in 0..<6 {
            // Past the hello, an import request's header claiming 512 MiB.
            let fd = f.connectPastHello()
            let n = UInt32(AgentProtocol.maxImportMessageBytes)
            let header = [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
            Self.send(fd, raw: header + AgentProtocol.magic + [AgentProtocol.version, 15])
            stalled.append(fd)
        }
        usleep(300_000)
        #expect(try f.status()["state"] as? String == "unlocked", "served while others stall")
        let after = Self.residentKiB(pid)
        #expect(after - before < 64 * 1024, "resident \(before) KiB → \(after) KiB")
    }

    static func send(_ fd: Int32, raw: [UInt8]) {
        _ = raw.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// VmRSS of `pid`, in KiB.
    static func residentKiB(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    /// An old copy of the vault put back by rename is refused (93) by the
    /// agent and by a command on the file, until `unlock --accept-rollback`.
    @Test func aVaultPutBackToAnEarlierWriteIsRefusedUntilAccepted() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let state = TemporaryDirectory(prefix: "fob-state")
        f.extraEnvironment = ["XDG_STATE_HOME": state.url.path]
        #expect(try f.run(["add", "mail", "ana"], input: "old", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let copy = f.vault.directory.file("copy.db").path
        #expect(try f.run(["backup", copy], password: true).status == 0)
        #expect(try f.run(["add", "web", "bo"], input: "new").status == 0)
        #expect(try f.run(["update", "mail", "ana"], input: "newer").status == 0)
        // Put the old copy back, as a restore would.
        for suffix in ["-wal", "-shm"] { unlink(f.vault.path + suffix) }
        #expect(rename(copy, f.vault.path) == 0)
        let get = try f.run(["get", "mail", "ana"], password: true)
        #expect(get.status == 93, "\(get.stdoutText) \(get.stderrText)")
        #expect(get.stdout.isEmpty)
        #expect(get.stderrText.contains("--accept-rollback"))
        #expect(try f.run(["--no-agent", "ls"], password: true).status == 93)
        let unlock = try f.unlock()
        #expect(unlock.status == 93, "\(unlock.stderrText)")
        // Accepted on purpose: the old state is the vault now.
        let accept = try f.unlock(["--accept-rollback"])
        #expect(accept.status == 0, "\(accept.stderrText)")
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "old\n")
        #expect(try f.run(["get", "web", "bo"]).status == 44)
        // One watermark for the vault; beside it, the access log's tail guard (`log-ID`).
        let files = try FileManager.default.contentsOfDirectory(atPath: state.url.path + "/fob/watermarks")
        let kept = files.filter { !$0.hasPrefix("log-") }
        #expect(kept.count == 1, "\(files)")
        for name in files {
            var st = stat()
            #expect(
                stat(state.url.path + "/fob/watermarks/" + name, &st) == 0 && st.st_mode & 0o777 == 0o600, "\(name)")
        }
    }

    /// With an `XDG_STATE_HOME` that does not exist yet, the watermark is
    /// still kept (the directory is made): an old copy put back is refused,
    /// and `unlock --accept-rollback` after the agent saw the newer write
    /// unlocks, rather than saying "accepted" and exiting 93 again and again.
    @Test func aMissingStateHomeIsMadeAndAcceptRollbackUnlocksTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let state = TemporaryDirectory(prefix: "fob-state")
        f.extraEnvironment = ["XDG_STATE_HOME": state.url.path + "/not-yet/state"]
        #expect(try f.unlock().status == 0)
        #expect(try f.run(["add", "mail", "ana"], input: "old").status == 0)
        let copy = f.vault.directory.file("copy.db").path
        #expect(try f.run(["backup", copy], password: true).status == 0)
        #expect(try f.run(["update", "mail", "ana"], input: "newer").status == 0)
        #expect(try f.run(["lock"]).status == 0)
        for suffix in ["-wal", "-shm"] { unlink(f.vault.path + suffix) }
        #expect(rename(copy, f.vault.path) == 0)
        #expect(try f.run(["--no-agent", "get", "mail", "ana"], password: true).status == 93)
        #expect(try f.unlock().status == 93)
        let accept = try f.unlock(["--accept-rollback"])
        #expect(accept.status == 0, "\(accept.stderrText)")
        #expect(accept.stderrText.contains("fob: unlocked"), "\(accept.stderrText)")
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "old\n")
        #expect(try f.unlock().status == 0)
    }

    /// Without XDG_RUNTIME_DIR, a `fob-UID` directory made first by another
    /// user is passed over for one under the state directory.
    @Test func aForeignTmpDirectoryDoesNotBlockTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let tmp = TemporaryDirectory(prefix: "fob-tmp")
        chmod(tmp.url.path, 0o1777)
        let foreign = tmp.url.path + "/fob-\(getuid())"
        let make = try ChildProcess.run(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid=65534", "--regid=65534", "--clear-groups", "/bin/mkdir", "-m", "755", foreign],
            environment: FobProcess.baseEnvironment)
        #expect(make.status == 0, "\(make.stderrText)")
        let home = TemporaryDirectory(prefix: "fob-home")
        f.extraEnvironment = ["XDG_RUNTIME_DIR": "", "TMPDIR": tmp.url.path, "HOME": home.url.path]
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        let unlock = try f.unlock()
        #expect(unlock.status == 0, "\(unlock.stderrText)")
        let status = try f.status()
        #expect(status["state"] as? String == "unlocked")
        #expect((status["socket"] as? String)?.hasPrefix(home.url.path + "/.local/state/fob/agent/") == true)
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "x\n")
    }

    /// The agent `fob run` starts is not a child of the command it becomes.
    @Test func fobRunDoesNotPassTheAgentOnAsAChild() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        let out = f.runtime.file("children").path
        let session = try FobProcess.startInTerminal(
            ["run", "--env", "X=mail/ana", "--", "/bin/sh", "-c", "cat /proc/$$/task/*/children > '\(out)'; echo ran"],
            environment: f.environment)
        #expect(session.waitFor("Master password"))
        session.send(f.vault.password + "\r")
        #expect(session.waitFor("ran"))
        _ = session.wait(timeout: 10)
        guard let agent = f.agentPid else {
            Issue.record("no agent started")
            return
        }
        let children = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: " ").compactMap {
            pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(!children.contains(agent), "children \(children), agent \(agent)")
    }

    /// A copy of vault.db alone, taken while the agent holds the vault open,
    /// has the item just added through it.
    @Test func aCopyOfTheMainFileAloneHoldsWritesMadeThroughTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock().status == 0)
        #expect(try f.run(["add", "mail", "ana"], input: "fresh").status == 0)
        let copy = TemporaryDirectory(prefix: "fob-copy")
        try FileManager.default.copyItem(atPath: f.vault.path, toPath: copy.file("vault.db").path)
        let r = try FobProcess.run(
            ["--no-agent", "--vault", copy.file("vault.db").path, "get", "mail", "ana"],
            environment: ["FOB_PASSWORD_FILE": f.vault.passwordFile])
        #expect(r.stdoutText == "fresh\n", "\(r.stderrText)")
    }

    /// A directory at mode 755: status reports (exit 0), and every message names its cause once.
    @Test func aLooseDirectoryIsReportedOnceAndStatusStillExitsZero() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        try FileManager.default.createDirectory(atPath: f.endpoint.directory, withIntermediateDirectories: true)
        chmod(f.endpoint.directory, 0o755)
        let status = try f.run(["status"])
        #expect(status.status == 0, "\(status.stderrText)")
        #expect(status.stdoutText.hasPrefix("state: stopped"))
        #expect(status.stderrText.components(separatedBy: "has mode 755").count == 2, "\(status.stderrText)")
        #expect(!status.stderrText.contains("interaction not allowed: interaction not allowed"))
        let unlock = try f.unlock()
        #expect(unlock.status == 36)
        #expect(unlock.stderrText.components(separatedBy: "has mode 755").count == 2, "\(unlock.stderrText)")
        #expect(unlock.stderrText.components(separatedBy: "errSecInteractionNotAllowed").count == 2)
    }
}

import FobAgent
import FobSecurity
import FobStore
import FobTestSupport
import FobTokens
import Foundation
@preconcurrency import Glibc
import Testing

@Suite(.serialized) struct AgentProcessTests {
    @Test func unlockOnceThenNoPasswordThenLock() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        #expect(try f.status()["state"] as? String == "stopped")
        let unlock = try f.unlock()
        #expect(unlock.status == 0, "\(unlock.stderrText)")
        #expect(try f.status()["state"] as? String == "unlocked")
        // No password file from here on.
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "pw1\n")
        #expect(try f.run(["add", "web", "bo"], input: "pw2").status == 0)
        #expect(try f.run(["add", "web", "bo"], input: "pw2").status == 45)
        #expect(try f.run(["get", "nope", "x"]).status == 44)
        #expect(try f.run(["update", "web", "bo"], input: "pw3").status == 0)
        let list = try f.run(["ls"])
        #expect(list.stdoutText.contains("mail") && list.stdoutText.contains("web"))
        #expect(try f.run(["rm", "web", "bo"]).status == 0)
        #expect(try f.run(["lock"]).status == 0)
        #expect(try f.status()["state"] as? String == "locked")
        let locked = try f.run(["get", "mail", "ana"])
        #expect(locked.status == 36)
        // The same answers without the agent.
        #expect(try f.run(["--no-agent", "get", "mail", "ana"], password: true).stdoutText == "pw1\n")
    }

    /// `--password-file -`: the first line of standard input is the master
    /// password also when the agent serves the vault and never asks it. It
    /// was left in the input, so `add` and `update` stored the master
    /// password and a newline in front of the secret (and sync spread it).
    @Test func thePasswordLineOfStandardInputIsNeverPartOfASecret() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let masterPassword = try String(contentsOfFile: f.vault.passwordFile, encoding: .utf8)
        let added = try f.run(["--password-file", "-", "add", "web", "bo"], input: masterPassword + "new secret")
        #expect(added.status == 0, "\(added.stderrText)")
        #expect(try f.run(["get", "web", "bo"]).stdoutText == "new secret\n")
        let updated = try f.run(["--password-file", "-", "update", "mail", "ana"], input: masterPassword + "pw2\n")
        #expect(updated.status == 0, "\(updated.stderrText)")
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "pw2\n")
        // The same without the agent.
        let direct = try f.run(["--no-agent", "--password-file", "-", "add", "x", "y"], input: masterPassword + "z")
        #expect(direct.status == 0, "\(direct.stderrText)")
        #expect(try f.run(["get", "x", "y"]).stdoutText == "z\n")
    }

    /// A second `fob unlock` finds the agent unlocked and asks nothing.
    @Test func unlockingAnUnlockedVaultAsksNothing() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let again = try f.run(["unlock"])
        #expect(again.status == 0, "\(again.stderrText)")
        #expect(again.stderrText.hasPrefix("fob: already unlocked "))
        // New timeouts are a new unlock: that one asks (here: no terminal, exit 36).
        #expect(try f.run(["unlock", "--idle", "60"]).status == 36)
    }

    /// Shell completion reads names from the agent, and only from it.
    @Test func completionNamesComeFromTheUnlockedAgentOnly() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw1\n", password: true).status == 0)
        #expect(try f.run(["add", "mail", "bo"], input: "pw2\n", password: true).status == 0)
        // No agent: nothing, and no prompt.
        #expect(try f.run(["__complete", "services"]).stdoutText == "")
        #expect(try f.unlock().status == 0)
        #expect(try f.run(["__complete", "services"]).stdoutText == "mail\u{0}")
        #expect(try f.run(["__complete", "accounts", "mail"]).stdoutText == "ana\u{0}bo\u{0}")
        #expect(try f.run(["lock"]).status == 0)
        #expect(try f.run(["__complete", "services"]).stdoutText == "")
    }

    @Test func aWrongPasswordIs51AndStartsLocked() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        try Data("wrong\n".utf8).write(to: f.vault.directory.file("wrong"))
        let result = try FobProcess.run(
            ["unlock", "--password-file", f.vault.directory.file("wrong").path], environment: f.environment)
        #expect(result.status == 51)
        #expect(try f.status()["state"] as? String == "locked")
    }

    @Test func idleTimeoutPolledByStatusStillLocks() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(
            try f.run(["add", "wifi", "home", "--accessible", "after-first-unlock"], input: "after", password: true)
                .status == 0)
        #expect(try f.run(["add", "mail", "ana"], input: "when", password: true).status == 0)
        #expect(try f.unlock(["--idle", "2"]).status == 0)
        let start = Date()
        // status every 100 ms is not activity.
        #expect(try f.eventually(timeout: 6) { try f.status()["state"] as? String == "locked" })
        #expect(Date().timeIntervalSince(start) >= 1.5)
        #expect(try f.status()["afterFirstUnlock"] as? Bool == true)
        #expect(try f.run(["get", "wifi", "home"]).stdoutText == "after\n")
        #expect(try f.run(["get", "mail", "ana"]).status == 36)
        #expect(try f.run(["lock"]).status == 0)
        #expect(try f.run(["get", "wifi", "home"]).status == 36)
    }

    @Test func maxTimeoutLocksDespiteActivity() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "when", password: true).status == 0)
        #expect(try f.unlock(["--idle", "0", "--max", "2"]).status == 0)
        var locked = false
        for _ in 0..<40 {
            if try f.run(["get", "mail", "ana"]).status == 36 {
                locked = true
                break
            }
            usleep(100_000)
        }
        #expect(locked)
    }

    @Test func twoHundredRoundsOfLockUnlockGet() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        var failures = 0
        for _ in 0..<200 {
            if try f.unlock().status != 0 { failures += 1 }
            if try f.run(["get", "mail", "ana"]).stdoutText != "x\n" { failures += 1 }
            if try f.run(["lock"]).status != 0 { failures += 1 }
        }
        #expect(failures == 0)
    }

    @Test func aSocketDirectoryOfAnotherUserOrModeIsRefused() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let dir = f.endpoint.directory
        #expect(mkdir(dir, 0o700) == 0)
        #expect(chown(dir, 65534, 65534) == 0)
        let other = try f.unlock()
        #expect(other.status == 36)
        #expect(other.stderrText.contains("belongs to uid 65534"))
        #expect(chown(dir, getuid(), getgid()) == 0)
        #expect(chmod(dir, 0o755) == 0)
        let mode = try f.unlock()
        #expect(mode.status == 36)
        #expect(mode.stderrText.contains("not 700"))
        #expect(chmod(dir, 0o700) == 0)
        #expect(try f.unlock().status == 0)
    }

    @Test func aConnectionFromAnotherUidIsDropped() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock().status == 0)
        // Let nobody reach the socket, to show the agent itself refuses it.
        chmod(f.runtime.url.path, 0o711)
        chmod(f.endpoint.directory, 0o711)
        chmod(f.endpoint.socket, 0o777)
        let request = AgentRequest.get(.key(service: "mail", account: "ana"), limitOne: true, detail: .secret).encoded()
        let frame = [UInt8(0), 0, 0, UInt8(request.count)] + request
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.settimeout(5)
            try:
                # The agent may drop the connection before the request is sent (EPIPE).
                s.sendall(bytes.fromhex(sys.argv[2]))
                data = s.recv(100)
            except Exception:
                data = b''
            print(len(data))
            """
        let hex = frame.map { String(format: "%02x", $0) }.joined()
        let python = try #require(
            ["/usr/bin/python3.11", "/usr/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) })
        let result = try ChildProcess.run(
            executable: "/usr/bin/setpriv",
            arguments: [
                "--reuid=65534", "--regid=65534", "--clear-groups", python, "-c", script, f.endpoint.socket, hex,
            ],
            environment: FobProcess.baseEnvironment)
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText == "0\n")
        chmod(f.endpoint.socket, 0o600)
        chmod(f.endpoint.directory, 0o700)
        chmod(f.runtime.url.path, 0o700)
        // And the owner is still served.
        #expect(try f.status()["state"] as? String == "unlocked")
    }

    /// A subscriber hears of a `fob add` made through the agent within
    /// 300 ms of the command's end (the agent tells as it writes).
    @Test func aSubscriberHearsOfAnAddThroughTheAgentWithin300Milliseconds() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock().status == 0)
        let heard = ArrivalLog<AgentEvent>()
        let subscription = try AgentClient(endpoint: f.endpoint).subscribe {
            heard.append(AgentEvent(kind: $0.kind, key: $0.key, revision: $0.revision))
        }
        defer { subscription.cancel() }
        let added = try f.run(["add", "mail", "ana"], input: "s3cret")
        let ended = Date()
        #expect(added.status == 0, "\(added.stderrText)")
        let event = AgentEvent(kind: .added, key: ItemKey(service: "mail", account: "ana"), revision: 1)
        let arrival = try #require(heard.arrival(of: event, timeout: 0.3))
        #expect(arrival.timeIntervalSince(ended) < 0.3)
        // A lock is told too.
        #expect(try f.run(["lock"]).status == 0)
        #expect(heard.arrival(of: AgentEvent(kind: .locked, key: nil), timeout: 1) != nil)
    }

    /// Each change a subscriber hears of carries the item's revision after
    /// it, whoever wrote: the agent (add, a conditional update) or another
    /// process that opened the vault itself; a deletion carries the one the
    /// item had.
    @Test func eventsCarryTheItemsRevisionAfterEachWrite() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.unlock().status == 0)
        let heard = ArrivalLog<AgentEvent>()
        let subscription = try AgentClient(endpoint: f.endpoint).subscribe {
            heard.append(AgentEvent(kind: $0.kind, key: $0.key, revision: $0.revision))
        }
        defer { subscription.cancel() }
        let key = ItemKey(service: "mail", account: "ana")

        #expect(try f.run(["add", "mail", "ana"], input: "one").status == 0)
        #expect(heard.arrival(of: AgentEvent(kind: .added, key: key, revision: 1)) != nil)
        let updated = try f.run(["update", "mail", "ana", "--if-revision", "1"], input: "two")
        #expect(updated.status == 0, "\(updated.stderrText)")
        #expect(heard.arrival(of: AgentEvent(kind: .changed, key: key, revision: 2)) != nil)
        // A write the agent did not make is heard with its revision too.
        let direct = try f.run(
            ["--no-agent", "update", "mail", "ana", "--if-revision", "2"], input: "three", password: true)
        #expect(direct.status == 0, "\(direct.stderrText)")
        #expect(heard.arrival(of: AgentEvent(kind: .changed, key: key, revision: 3)) != nil)
        #expect(try f.run(["rm", "mail", "ana", "--if-revision", "3"]).status == 0)
        #expect(heard.arrival(of: AgentEvent(kind: .deleted, key: key, revision: 3)) != nil)
        // No change was heard without its revision, nor at another one.
        for revision in [nil, 1, 4] as [UInt64?] {
            #expect(heard.arrival(of: AgentEvent(kind: .changed, key: key, revision: revision), timeout: 0) == nil)
        }
    }

    /// An agent of an older protocol version is a clear error naming both
    /// versions, and `fob unlock` replaces it with one of this version.
    @Test func anAgentOfAnOlderProtocolIsReplacedByUnlock() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        mkdir(f.endpoint.directory, 0o700)
        // Answers every request as an agent of protocol version 2 does.
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1])
            s.listen(8)
            print("ready", flush=True)
            text = b"protocol version 2"
            body = b"FOBA" + bytes([2, 0xFF]) + len(text).to_bytes(4, "big") + text
            while True:
                c, _ = s.accept()
                try:
                    c.settimeout(2)
                    c.recv(65536)
                    c.sendall(len(body).to_bytes(4, "big") + body)
                except Exception:
                    pass
                c.close()
            """
        let old = Process()
        old.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        old.arguments = ["-c", script, f.endpoint.socket]
        let ready = Pipe()
        old.standardOutput = ready
        try old.run()
        defer {
            kill(old.processIdentifier, SIGKILL)
            old.waitUntilExit()
        }
        _ = ready.fileHandleForReading.availableData
        let refused = try f.run(["ls"])
        #expect(
            refused.stderrText.contains("the agent speaks protocol version 2, this fob speaks \(AgentProtocol.version)")
        )
        let unlocked = try f.unlock()
        #expect(unlocked.status == 0, "\(unlocked.stderrText)")
        #expect(
            unlocked.stderrText.contains("the agent spoke protocol version 2, this fob speaks \(AgentProtocol.version)")
        )
        #expect(try f.status()["state"] as? String == "unlocked")
    }

    @Test func anAgentKilledWithSIGKILLIsReplaced() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let pid = try #require(f.agentPid)
        kill(pid, SIGKILL)
        #expect(f.eventually { !AgentFixture.isRunning(pid) })
        #expect(FileManager.default.fileExists(atPath: f.endpoint.socket)) // stale
        #expect(try f.status()["state"] as? String == "stopped")
        #expect(try f.run(["get", "mail", "ana"]).status == 36)
        #expect(try f.run(["get", "mail", "ana"], password: true).stdoutText == "x\n")
        #expect(try f.unlock().status == 0)
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "x\n")
        #expect(f.agentPid != pid)
    }

    @Test func aReplacedVaultFileLocksTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let copy = f.vault.directory.file("copy.db").path
        #expect(try f.run(["--no-agent", "--vault", copy, "init", "--kdf", "interactive"], password: true).status == 0)
        #expect(rename(copy, f.vault.path) == 0)
        #expect(try f.run(["get", "mail", "ana"]).status == 36)
        #expect(try f.status()["state"] as? String == "locked")
    }

    @Test func passwdInAnotherProcessLocksTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        // Another process changes the password without telling the agent.
        let vault = try f.vault.open()
        try vault.changePassword(to: .text("new one"))
        vault.lock()
        #expect(try f.run(["get", "mail", "ana"]).status == 36)
        #expect(try f.status()["state"] as? String == "locked")
    }

    @Test func garbageOversizedAndSilentClientsDoNotStallOthers() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        // A client that says nothing, and one that stops mid-frame.
        let silent = f.connect()
        let partial = f.connect()
        _ = send(partial, [0, 0, 0, 50, 1, 2], 6, 0)
        // Garbage gets a typed error answer.
        let garbage = f.connectPastHello()
        let junk: [UInt8] = [0, 0, 0, 5] + Array("hello".utf8)
        _ = send(garbage, junk, junk.count, Int32(MSG_NOSIGNAL))
        var answer = [UInt8](repeating: 0, count: 512)
        let n = recv(garbage, &answer, answer.count, 0)
        #expect(n > 10)
        #expect(String(decoding: answer[0..<max(n, 0)], as: UTF8.self).contains("bad request"))
        close(garbage)
        // A huge length is refused before anything is read.
        let huge = f.connectPastHello()
        _ = send(huge, [0x7F, 0xFF, 0xFF, 0xFF], 4, Int32(MSG_NOSIGNAL))
        #expect(recv(huge, &answer, answer.count, 0) <= 0)
        close(huge)
        // Past the usual limit only an import request may go on: a 2 MiB
        // frame whose header is a `get` is dropped after its header.
        let large = f.connectPastHello()
        let header: [UInt8] = [0, 0x20, 0, 0] + AgentProtocol.magic + [AgentProtocol.version, 4]
        _ = send(large, header, header.count, Int32(MSG_NOSIGNAL))
        #expect(recv(large, &answer, answer.count, 0) <= 0)
        close(large)
        // A connection that does not start with a hello gets a refusal, not an answer.
        let noHello = f.connect()
        let status = [0, 0, 0, 6] + AgentProtocol.magic + [AgentProtocol.version, 1]
        _ = send(noHello, status, status.count, Int32(MSG_NOSIGNAL))
        let refused = recv(noHello, &answer, answer.count, 0)
        #expect(String(decoding: answer[0..<max(refused, 0)], as: UTF8.self).contains("did not start with a hello"))
        close(noHello)
        // Others are served meanwhile.
        let start = Date()
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "x\n")
        #expect(Date().timeIntervalSince(start) < 3)
        // A client that disconnects mid-request.
        close(partial)
        close(silent)
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "x\n")
        let pid = try #require(f.agentPid)
        #expect(kill(pid, 0) == 0)
    }

}

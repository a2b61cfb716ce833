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

    /// `fob import` through the unlocked agent asks nothing, and an import
    /// larger than any other request (here about 5 MiB) lands in one piece.
    @Test func importGoesThroughTheAgentInOneTransaction() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        let csv = f.runtime.file("export.csv")
        var text = "name,url,username,password,note\n"
        for i in 0..<20_000 {
            text +=
                "svc\(i % 40),https://svc\(i % 40).example/,user\(i),secret-\(i)-\(String(repeating: "x", count: 120)),\n"
        }
        try Data(text.utf8).write(to: csv)
        #expect(text.utf8.count > AgentProtocol.maxMessageBytes)
        #expect(try f.run(["import", "chrome-csv", csv.path, "--dry-run"]).status == 36, "no agent: no password")
        #expect(try f.unlock().status == 0)
        let result = try f.run(["import", "chrome-csv", csv.path], timeout: 120)
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText.contains("Imported 20000 entries"))
        #expect(try f.run(["get", "svc7", "user7"]).stdoutText == "secret-7-\(String(repeating: "x", count: 120))\n")
        #expect(try f.run(["ls"]).stdoutText.split(separator: "\n").count >= 20_001)
        // A second import of the same file with --on-duplicate skip changes nothing.
        let again = try f.run(["import", "chrome-csv", csv.path, "--on-duplicate", "skip"], timeout: 120)
        #expect(again.status == 0, "\(again.stderrText)")
        #expect(try f.run(["--no-agent", "get", "svc7", "user7"], password: true).status == 0)
    }

    @Test func aHundredParallelClientsAllSucceed() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let children = try (0..<100).map { _ in
            try FobProcess.start(["get", "mail", "ana"], environment: f.environment)
        }
        let results = children.map { $0.wait(timeout: 60) }
        #expect(results.filter { $0.status == 0 && $0.stdoutText == "x\n" }.count == 100)
    }

    @Test func aPasswordFileAloneNeverStartsAnAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.run(["get", "mail", "ana"], password: true).status == 0)
        #expect(try f.status()["state"] as? String == "stopped")
    }

    /// FobSecurity uses the agent when it holds the vault unlocked (no
    /// password file); locked or stopped is errSecInteractionNotAllowed.
    @Test func secItemGoesThroughTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana", "--label", "Mail"], input: "from fob", password: true).status == 0)
        try SharedSettingLock.secItemVault.withLock { () throws -> Void in
            FobKeychain.configure(environment: ["FOB_VAULT": f.vault.path, "XDG_RUNTIME_DIR": f.runtime.url.path])
            defer { FobKeychain.reset() }
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "mail",
                kSecAttrAccount as String: "ana", kSecReturnData as String: true,
            ]
            var result: AnyObject?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecInteractionNotAllowed) // stopped
            #expect(try f.unlock().status == 0)
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            #expect(result as? Data == Data("from fob".utf8))
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api",
                kSecAttrAccount as String: "ci", kSecValueData as String: Data("tok".utf8),
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecDuplicateItem)
            #expect(try f.run(["get", "api", "ci"]).stdoutText == "tok\n")
            let update: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "api",
            ]
            #expect(
                SecItemUpdate(update as CFDictionary, [kSecAttrLabel as String: "CI"] as CFDictionary) == errSecSuccess)
            #expect(try f.run(["ls", "--json"]).stdoutText.contains("\"CI\""))
            #expect(SecItemDelete(update as CFDictionary) == errSecSuccess)
            #expect(SecItemDelete(update as CFDictionary) == errSecItemNotFound)
            #expect(try f.run(["lock"]).status == 0)
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecInteractionNotAllowed)
        }
    }

    /// The terminal UI opens on its main screen while the agent holds the
    /// vault unlocked, and shows the unlock screen once `fob lock` runs elsewhere.
    @Test func theTerminalUIFollowsTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let command = ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", FobProcess.binaryURL.path, "--clipboard", "none"]
        let tmux = try TmuxSession(command: command, environment: f.environment)
        do {
            try waitForMainScreen(tmux, listing: "mail")
        } catch {
            Issue.record("no main screen: \(try tmux.capture())")
            return
        }
        #expect(try !tmux.capture().contains("Master password"))
        #expect(try tmux.capture().contains("mail"))
        let start = Date()
        #expect(try f.run(["lock"]).status == 0)
        _ = try tmux.waitFor("Master password", timeout: 5)
        #expect(Date().timeIntervalSince(start) < 2.5)
        // Unlocking in the UI unlocks the agent too.
        try tmux.type(f.vault.password)
        try tmux.press("Enter")
        try waitForMainScreen(tmux, listing: "mail")
        #expect(f.eventually(timeout: 5) { (try? f.status()["state"] as? String) == "unlocked" })
        // Issue 20: `l` in the UI locks the vault for every process, as `fob lock` does.
        try tmux.type("l")
        _ = try tmux.waitFor("Master password")
        #expect(f.eventually(timeout: 5) { (try? f.status()["state"] as? String) == "locked" })
        #expect(try f.run(["get", "mail", "ana"]).status == 36, "fob get needs the password again")
        try tmux.press("q")
    }

    /// Issue 20: an agent killed without a lock is reported as stopped, not
    /// as a lock made elsewhere.
    @Test func aKilledAgentIsReportedAsStopped() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "x", password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let command = ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", FobProcess.binaryURL.path, "--clipboard", "none"]
        let tmux = try TmuxSession(command: command, environment: f.environment)
        try waitForMainScreen(tmux, listing: "mail")
        let pid = try #require(f.agentPid)
        #expect(kill(pid, SIGKILL) == 0)
        let screen = try tmux.waitFor("Master password", timeout: 5)
        #expect(screen.contains("The agent stopped"))
        #expect(!screen.contains("Locked elsewhere"))
        try tmux.press("q")
    }

    /// `fob oauth token` reads a valid token through the agent: no password.
    @Test func oauthTokenGoesThroughTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let set = OAuthTokenSet(
            accessToken: "at-123", expiresAt: Date().addingTimeInterval(3_600),
            tokenEndpoint: URL(string: "https://example.invalid/token")!, clientID: "cli")
        let json = String(decoding: set.encoded(), as: UTF8.self)
        #expect(try f.run(["save", "api", "ci", "--kind", "oauth"], input: json, password: true).status == 0)
        #expect(try f.run(["oauth", "token", "api", "ci"]).status == 36)
        #expect(try f.unlock().status == 0)
        let token = try f.run(["oauth", "token", "api", "ci"])
        #expect(token.status == 0, "\(token.stderrText)")
        #expect(token.stdoutText == "at-123\n")
    }

    /// `fob jwt SERVICE ACCOUNT` and `fob logout` work on items: through the
    /// unlocked agent they ask nothing, and the logout then locks the agent.
    @Test func jwtAndLogoutGoThroughTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let token = jwt(exp: 4_000_000_000)
        #expect(try f.run(["save", "api", "ci", "--kind", "token"], input: token, password: true).status == 0)
        #expect(try f.run(["add", "mail", "ana"], input: "pw", password: true).status == 0)
        #expect(try f.run(["jwt", "api", "ci"]).status == 36, "no agent, no terminal, no password file")
        #expect(try f.unlock().status == 0)
        let decoded = try f.run(["jwt", "api", "ci"])
        #expect(decoded.status == 0, "\(decoded.stderrText)")
        #expect(decoded.stdoutText.contains("\"sub\""))
        let logout = try f.run(["logout", "--yes"])
        #expect(logout.status == 0, "\(logout.stderrText)")
        #expect(logout.stdoutText == "Logged out: deleted 1 token/OAuth item\n")
        #expect(try f.status()["state"] as? String == "locked")
        #expect(try f.run(["--no-agent", "get", "api", "ci"], password: true).status == 44)
        #expect(try f.run(["--no-agent", "get", "mail", "ana"], password: true).stdoutText == "pw\n")
    }

    /// A command that opens the whole vault (here `fob export`) and asked
    /// the master password on the terminal hands it to the agent, as item
    /// commands do; `fob passwd` does not.
    @Test func aPasswordAskedOnTheTerminalUnlocksTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        #expect(try f.run(["add", "mail", "ana"], input: "pw", password: true).status == 0)
        let out = f.runtime.file("export.csv").path
        let command = [
            "/bin/sh", "-c", "\"$@\"; sleep 60", "sh", FobProcess.binaryURL.path, "export", "--format", "csv",
            "--output", out,
        ]
        let tmux = try TmuxSession(command: command, environment: f.environment)
        _ = try tmux.waitFor("Master password")
        try tmux.type(f.vault.password)
        try tmux.press("Enter")
        _ = try tmux.waitFor("plaintext")
        #expect(f.eventually(timeout: 10) { (try? f.status()["state"] as? String) == "unlocked" })
        #expect(try f.run(["get", "mail", "ana"]).stdoutText == "pw\n")
    }

    /// The terminal UI's logout wipe (`W`, `y`) locks the agent, as `fob logout` does.
    @Test func theTerminalUILogoutWipeLocksTheAgent() throws {
        let f = try AgentFixture()
        defer { f.stop() }
        let token = jwt(exp: 4_000_000_000)
        #expect(try f.run(["add", "api", "ci", "--kind", "token"], input: token, password: true).status == 0)
        #expect(try f.unlock().status == 0)
        let command = ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", FobProcess.binaryURL.path, "--clipboard", "none"]
        let tmux = try TmuxSession(command: command, environment: f.environment)
        try waitForMainScreen(tmux, listing: "api")
        // Keys are taken once the first second on a vault unlocked already is over.
        try tmux.waitFor("early keys ignored")
        try tmux.type("W")
        _ = try tmux.waitFor("Delete 1 item, clear the clipboard and lock? (y/n)")
        try tmux.type("y")
        _ = try tmux.waitFor("Master password")
        #expect(f.eventually(timeout: 5) { (try? f.status()["state"] as? String) == "locked" })
        #expect(try f.run(["get", "api", "ci"], password: true).status == 44)
        try tmux.press("q")
    }
}

/// Waits for the terminal UI's main screen: the list's legend, and the
/// preview of `service` (the only item, so the one highlighted).
private func waitForMainScreen(_ tmux: TmuxSession, listing service: String) throws {
    try tmux.waitUntil("the main screen listing \(service)") {
        $0.contains("/ filter") && !$0.contains("Master password")
            && $0.range(of: "Service +\(service) ", options: .regularExpression) != nil
    }
}

import FobAgent
import FobSSH
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Answers every question with one answer and keeps the questions.
private final class RecordingAsker: AccessAsker, @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [AccessQuestion] = []
    let answer: AccessAnswer?

    init(_ answer: AccessAnswer?) { self.answer = answer }

    var questions: [AccessQuestion] { lock.withLock { asked } }

    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        lock.withLock { asked.append(question) }
        return answer.map { .answered($0) } ?? .unreachable
    }
}

/// Each SSH signature passes the key item's consent rule per destination,
/// and each decision is in the access log as channel `ssh`.
@Suite struct SSHConsentTests {
    private struct Fixture {
        let v: TestVault
        let core: AgentCore
        let approval: VaultSSHApproval
        let key: SSHPrivateKey
        let watermarks: VaultWatermarks
    }

    private func fixture(default mode: AccessRule.Mode, confirm: Bool = false, answer: AccessAnswer?) throws
        -> (Fixture, RecordingAsker)
    {
        let v = try TestVault()
        try v.vault.setAccessDefault(mode)
        let key = try SSHPrivateKey.generate(.ed25519)
        try v.vault.add(
            SSHKeyItem.item(
                name: "work", key: key, comment: "me@work", constraints: SSHKeyConstraints(confirm: confirm)))
        v.vault.lock()
        let watermarks = VaultWatermarks(environment: ["XDG_STATE_HOME": v.directory.file("state").path])
        try FileManager.default.createDirectory(at: v.directory.file("state"), withIntermediateDirectories: true)
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock(), watermarks: watermarks)
        let asker = RecordingAsker(answer)
        core.gate.askers = [asker]
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)).isOK)
        return (
            Fixture(v: v, core: core, approval: VaultSSHApproval(core: core), key: key, watermarks: watermarks), asker
        )
    }

    private static let ssh = Requester(
        pid: getpid(), uid: getuid(), executable: "/usr/bin/ssh",
        identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 0),
        terminal: "/dev/pts/4")

    private func sign(_ f: Fixture, host: String?, forwarded: Bool = false, confirm: Bool = false) -> SSHSignContext {
        let destination =
            host.map { SSHDestination(state: .verified, names: [$0], isForwarded: forwarded) }
            ?? SSHDestination(state: .unverified, isForwarded: forwarded)
        return SSHSignContext(
            key: f.key.publicKey, comment: "me@work", itemName: "work", destination: destination, confirm: confirm,
            peerPID: getpid(), isUserAuthentication: true, requester: SSHConsentTests.ssh)
    }

    private func log(_ f: Fixture) throws -> [AccessLogEntry] {
        #expect(f.core.flushAccessLog())
        let fresh = try Vault(url: f.v.vault.url)
        try fresh.unlock(password: f.v.password)
        let keys = AccessLogKeys(logKey: try #require(try fresh.accessLogKey(create: false)))
        let head = AccessLogHead.read(AccessLogHead.path(directory: f.watermarks.directory, keys: keys))
        let report = AccessLogReader.read(AccessLogLocation(vaultURL: f.v.vault.url), keys: keys, head: head)
        #expect(report.problems == [])
        return report.records.map(\.entry).filter { $0.channel == .ssh }
    }

    @Test func aLeaseCoversOneKeyForOneDestinationOnly() throws {
        let (f, asker) = try fixture(default: .ask, answer: .lease(seconds: 300))
        #expect(f.approval.approve(sign(f, host: "build.test")) == .allow)
        #expect(f.approval.approve(sign(f, host: "build.test")) == .allow)
        #expect(asker.questions.count == 1)
        #expect(f.approval.approve(sign(f, host: "other.test")) == .allow)
        #expect(
            asker.questions.map(\.item) == [
                "SSH key work (\(f.key.publicKey.fingerprint)) to log in to build.test (verified)",
                "SSH key work (\(f.key.publicKey.fingerprint)) to log in to other.test (verified)",
            ])
        #expect(asker.questions.first?.context.channel == .ssh)
        let entries = try log(f)
        #expect(entries.map(\.event) == [.prompt, .read, .read, .prompt, .read])
        #expect(entries.map(\.decision) == [nil, .allowedLease, .allowedLease, nil, .allowedLease])
        #expect(entries[2].detail == "a lease; for build.test (verified); key \(f.key.publicKey.fingerprint)")
        #expect(entries[1].item == ItemKey(service: SSHKeyItem.service, account: "work"))
        #expect(entries[1].requester.executable == "/usr/bin/ssh")
        #expect(entries[1].requester.pid == getpid())
        f.core.lockAll()
    }

    @Test func aConfirmKeyAsksEveryTimeWhateverTheRuleOrAnswer() throws {
        let (f, asker) = try fixture(default: .any, confirm: true, answer: .untilLock)
        #expect(f.approval.approve(sign(f, host: "build.test", confirm: true)) == .allow)
        #expect(f.approval.approve(sign(f, host: "build.test", confirm: true)) == .allow)
        #expect(asker.questions.count == 2)
        #expect(asker.questions.first?.reason == "the key was added with ssh-add -c: every signature is confirmed")
        #expect(try log(f).map(\.decision) == [nil, .allowedOnce, nil, .allowedOnce])
        f.core.lockAll()
    }

    @Test func aForwardedRequestIsAskedAndADenialRefuses() throws {
        let (f, asker) = try fixture(default: .any, answer: .deny)
        #expect(f.approval.approve(sign(f, host: "build.test")) == .allow)
        #expect(asker.questions.isEmpty)
        #expect(
            f.approval.approve(sign(f, host: "inner.test", forwarded: true))
                == .deny("ssh may not sign: the user refused"))
        #expect(
            asker.questions.map(\.item) == [
                "SSH key work (\(f.key.publicKey.fingerprint)) to log in to inner.test (verified, forwarded)"
            ])
        let entries = try log(f)
        #expect(entries.map(\.event) == [.read, .prompt, .denial])
        #expect(
            entries.last?.detail.hasSuffix("for inner.test (verified, forwarded); key \(f.key.publicKey.fingerprint)")
                == true)
        f.core.lockAll()
    }

    @Test func noChannelRefusesAndAnUnverifiedDestinationIsNamedSo() throws {
        let (f, asker) = try fixture(default: .ask, answer: nil)
        #expect(
            f.approval.approve(sign(f, host: nil))
                == .deny(
                    "the vault's default rule is 'ask', and no one could be asked"))
        #expect(
            asker.questions.map(\.item) == [
                "SSH key work (\(f.key.publicKey.fingerprint)) to log in to unverified destination"
            ])
        #expect(try log(f).map(\.decision) == [nil, .noChannel])
        f.core.lockAll()
    }

    @Test func aRequesterThatCannotBeNamedIsRefused() throws {
        let (f, asker) = try fixture(default: .any, answer: .once)
        var context = sign(f, host: "build.test")
        context.requester = nil
        #expect(
            f.approval.approve(context)
                == .deny("the program asking cannot be named (it ended, or /proc cannot be read)"))
        #expect(asker.questions.isEmpty)
        f.core.lockAll()
    }

    @Test func alwaysWritesTheProgramIntoTheKeysRule() throws {
        let (f, asker) = try fixture(default: .ask, answer: .always)
        #expect(f.approval.approve(sign(f, host: "build.test")) == .allow)
        #expect(f.approval.approve(sign(f, host: "other.test")) == .allow)
        #expect(asker.questions.count == 1)
        #expect(try log(f).map(\.event) == [.prompt, .ruleChange, .read])
        f.core.lockAll()
    }
}

/// A signature that finds the vault locked asks for the master password
/// through pinentry (on the requester's terminal when it has one), unlocks, then signs.
@Suite struct SSHUnlockTests {
    let directory = TemporaryDirectory(prefix: "fob-ssh-unlock")

    /// A pinentry that answers `GETPIN` with `answer` and logs each command.
    func pinentry(answer: String) throws -> [String: String] {
        let path = directory.file("pinentry").path
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while read -r line; do
              echo "$line" >> '\(directory.file("log").path)'
              case "$line" in
                GETPIN) echo '\(answer)'; case '\(answer)' in D*) echo OK;; esac;;
                BYE) echo OK; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o755)
        return ["FOB_PINENTRY": path, "PATH": "/usr/bin:/bin", "TERM": "xterm-256color"]
    }

    private func signRequest(_ key: SSHPublicKey) -> [UInt8] {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessage.signRequest)
        writer.string(key.blob)
        writer.string([7, 7, 7])
        writer.uint32(0)
        return writer.bytes
    }

    private func run(answer: String) throws -> (answer: [UInt8], state: AgentStatus.State, key: SSHPublicKey) {
        let f = try OneKeyVault(.ecdsaP256)
        #expect(f.unlock())
        let (key, core) = (f.key, f.core)
        let approval = VaultSSHApproval(
            core: core, password: SSHUnlockPrompt(environment: try pinentry(answer: answer)).password(for:))
        let service = SSHAgentService(
            source: VaultSSHKeys(core: core), approval: approval, knownHosts: { KnownHosts(text: "") }, log: { _ in },
            now: { 0 })
        let requester = Requester(
            pid: getpid(), uid: getuid(), executable: "/usr/bin/ssh-keygen", identity: nil, terminal: "/dev/pts/4")
        var state = SSHConnectionState(peerPID: getpid(), requester: requester)
        var list = SSHWriter()
        list.byte(SSHAgentMessage.requestIdentities)
        _ = service.respond(to: list.bytes, state: &state) // the public halves are seen while unlocked
        core.lockAll()
        let answer = service.respond(to: signRequest(key.publicKey), state: &state)
        defer { core.lockAll() }
        return (answer, core.state, key.publicKey)
    }

    @Test func theRightPasswordUnlocksAndTheSignatureIsMade() throws {
        let (answer, state, key) = try run(answer: "D correct horse")
        #expect(state == .unlocked)
        var reader = SSHReader(Array(answer.dropFirst(4)))
        #expect(try reader.byte() == SSHAgentMessage.signResponse)
        #expect(key.verify(signature: try reader.string(), over: [7, 7, 7]))
        let log = try String(contentsOf: directory.file("log"), encoding: .utf8)
        #expect(log.contains("OPTION ttyname=/dev/pts/4\nOPTION ttytype=xterm-256color\n"))
        #expect(log.contains("SETPROMPT Master password:\nSETTIMEOUT 60\nGETPIN\n"))
        #expect(
            log.contains(
                "SETDESC ssh-keygen (pid \(getpid()), /usr/bin/ssh-keygen) asks the SSH agent for a signature with "
                    + "SSH key work (\(key.fingerprint)) to sign data (not a login) for unverified destination."))
    }

    @Test func aWrongPasswordOrACancelLeavesItLockedAndRefuses() throws {
        for answer in ["D wrong horse", "ERR 83886179 Operation cancelled <Pinentry>"] {
            let (reply, state, _) = try run(answer: answer)
            #expect(reply == SSHAgentResponse.failure)
            #expect(state == .locked)
        }
    }
}

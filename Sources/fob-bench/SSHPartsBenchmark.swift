import FobAgent
import FobSSH
import FobStore
import FobSystem
import Foundation
@preconcurrency import Glibc

/// Where one signature's time goes inside the SSH agent (`fob-bench ssh`):
/// naming the requester through `/proc` (once per connection), the consent
/// decision (the key item's rule, the access log entry queued), reading the
/// private key from the vault, the signature itself, and the whole answer
/// to a SIGN_REQUEST, each the median of 500 runs in this process over an
/// agent core of its own (no socket, no thread wake-ups).
enum SSHPartsBenchmark {
    static func run(scratch: URL) throws {
        print("  parts of one signature, inside the agent (median of 500):")
        let url = scratch.appendingPathComponent("ssh-parts/vault.db")
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let password = SecretBytes(utf8: "bench")
        let vault = try Vault.create(
            at: url, password: password, kdf: KDFParameters(opslimit: 1, memlimit: 8192), accessDefault: .any)
        let key = try SSHPrivateKey.generate(.ed25519)
        try vault.add(SSHKeyItem.item(name: "bench", key: key, comment: "bench"))
        vault.lock()
        let core = AgentCore(vaultURL: url)
        _ = core.handle(.unlock(password: password, idleSeconds: 0, maxSeconds: 0))
        defer { core.lockAll() }
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { return }
        defer {
            close(pair[0])
            close(pair[1])
        }
        let programs = FobPrograms()
        let tName = median { _ = try? ProcessInspector.requester(onSocket: pair[0], fob: programs) }
        let requester = try ProcessInspector.requester(onSocket: pair[0], fob: programs)
        let approval = VaultSSHApproval(core: core)
        let keys = VaultSSHKeys(core: core)
        let context = SSHSignContext(
            key: key.publicKey, comment: "bench", itemName: "bench", destination: .unverified, confirm: false,
            peerPID: getpid(), isUserAuthentication: false, requester: requester)
        let tApprove = median { _ = approval.approve(context) }
        let tRead = median { _ = try? keys.privateKey(named: "bench") }
        let data = [UInt8](repeating: 7, count: 64)
        let tSign = median { _ = try? key.sign(data, flags: 0) }
        let service = SSHAgentService(
            source: keys, approval: approval, knownHosts: { KnownHosts(paths: []) }, log: { _ in },
            now: { 0 })
        var request: [UInt8] = [13]
        SSHPartsBenchmark.string(key.publicKey.blob, to: &request)
        SSHPartsBenchmark.string(data, to: &request)
        request += [0, 0, 0, 0]
        var state = SSHConnectionState(peerPID: getpid(), requester: requester)
        guard service.respond(to: request, state: &state).count > 9 else {
            print("    the signature was refused; skipped")
            return
        }
        let tWhole = median { _ = service.respond(to: request, state: &state) }
        for (name, t) in [
            ("naming the requester (/proc, per connection)", tName), ("consent decision (rule, log entry)", tApprove),
            ("private key read from the vault", tRead), ("Ed25519 signature", tSign),
            ("whole SIGN_REQUEST answer", tWhole),
        ] {
            print("    " + pad(name) + String(format: "%10.1f µs", t))
        }
    }

    /// An SSH `string`: a 4-byte big-endian length, then the bytes.
    static func string(_ bytes: [UInt8], to out: inout [UInt8]) {
        let n = UInt32(bytes.count)
        out += [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + bytes
    }

    /// The median of 500 runs of `body`, in microseconds.
    static func median(_ body: () -> Void) -> Double {
        AgentBenchmark.median(500, body) * 1000
    }
}

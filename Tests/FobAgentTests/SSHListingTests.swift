import FobSSH
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobAgent

/// Listing SSH keys reads no secret and names no one: the public half of a
/// key item is in its listing, so the access rules never ask for `fob ssh
/// ls`, `fob ssh pub` or a client's list of identities, and the SSH socket
/// names its peer (pid, executable, parents) only when the peer asks for a
/// signature, which is still decided and recorded under that name.
@Suite struct SSHListingTests {
    @Test func aKeyItemsListingKeepsItsPublicFieldsAndNothingElse() throws {
        let key = try SSHPrivateKey.generate(.ed25519)
        var item = SSHKeyItem.item(name: "work", key: key, comment: "me@work", hosts: ["*.example.com"])
        item.customFields.append(CustomField(name: "note", value: SecretBytes(utf8: "a private note")))
        let listed = ItemOperations.listed(item)
        #expect(listed.secret == nil)
        #expect(SSHKeyItem.stored(listed)?.key == key.publicKey)
        #expect(SSHKeyItem.details(listed)?.hosts == ["*.example.com"])
        #expect(listed.customFields.first { $0.name == "note" }?.value.unsafeString == "")
        // Another kind of item with a field of the same name keeps nothing.
        var password = Item(service: "s", account: "a", secret: SecretBytes(utf8: "pw"))
        password.customFields = [CustomField(name: "ssh-public-key", value: SecretBytes(utf8: "not public"))]
        #expect(ItemOperations.listed(password).customFields.first?.value.unsafeString == "")
        #expect(
            ItemOperations.searchAttributes(item).customFields.map { $0.value.unsafeString }
                == listed.customFields.map { $0.value.unsafeString })
    }

    @Test func aListingOfKeysNeedsNoConsentUnderAnAskRule() throws {
        let v = try TestVault()
        try v.vault.setAccessDefault(.ask)
        try v.vault.add(SSHKeyItem.item(name: "work", key: try SSHPrivateKey.generate(.ed25519), comment: "c"))
        v.vault.lock()
        let core = AgentCore(vaultURL: v.vault.url, clock: ManualAgentClock())
        #expect(core.handle(.unlock(password: v.password, idleSeconds: 0, maxSeconds: 0)).isOK)
        let asker = RefusingAsker()
        core.gate.askers = [asker]
        let context = AccessContext(requester: SSHListingTests.requester(pid: getpid()), channel: .command("ssh"))
        let query = ItemQuery(service: SSHKeyItem.service, kind: .sshKey)
        guard
            case .success(let request) = core.consent(to: .get(query, limitOne: false, detail: .listing), from: context),
            case .items(let found) = core.handle(request)
        else {
            Issue.record("the listing was refused")
            return
        }
        #expect(SSHKeyItem.stored(found[0])?.name == "work")
        #expect(asker.count == 0)
        #expect(try VaultSSHKeys(core: core).storedKeys().map(\.name) == ["work"])
        #expect(asker.count == 0)
    }

    static func requester(pid: Int32) -> Requester {
        Requester(
            pid: pid, uid: getuid(), executable: "/usr/bin/ssh",
            identity: ExecutableIdentity(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4, owner: 0))
    }

    @Test func theSocketNamesItsPeerOnlyForASignatureAndTheRecordNamesIt() throws {
        let f = try OneKeyVault()
        #expect(f.unlock())
        let (v, key, core) = (f.vault, f.key, f.core)
        let recorded = KeptEntries()
        core.gate.recorder = recorded
        let runtime = TemporaryDirectory(prefix: "fob-rt")
        let endpoint = AgentEndpoint(vaultURL: v.vault.url, environment: ["XDG_RUNTIME_DIR": runtime.url.path])
        try endpoint.prepareDirectory()
        let service = SSHAgentService(
            source: VaultSSHKeys(core: core), approval: VaultSSHApproval(core: core),
            knownHosts: { KnownHosts(paths: []) }, log: { _ in }, now: { 0 })
        let named = NamedPeers()
        let listener = SSHAgentListener(endpoint: endpoint, service: service) { _ in named.name() }
        try listener.bind()
        #expect(listener.start())
        defer { listener.stop() }

        let listing = try SSHClientSocket(listener.socket)
        for _ in 0..<3 { #expect(try listing.exchange([SSHAgentMessage.requestIdentities]).first == 12) }
        listing.close()
        #expect(named.count == 0)

        let signing = try SSHClientSocket(listener.socket)
        #expect(try signing.exchange([SSHAgentMessage.requestIdentities]).first == 12)
        var sign = SSHWriter()
        sign.byte(SSHAgentMessage.signRequest)
        sign.string(key.publicKey.blob)
        sign.string([1, 2, 3])
        sign.uint32(0)
        #expect(try signing.exchange(sign.bytes).first == SSHAgentMessage.signResponse)
        #expect(try signing.exchange(sign.bytes).first == SSHAgentMessage.signResponse)
        signing.close()
        #expect(named.count == 1)
        let reads = recorded.all.filter { $0.channel == .ssh && $0.event == .read }
        #expect(reads.count == 2)
        #expect(reads.allSatisfy { $0.requester.pid == 4343 && $0.requester.executable == "/usr/bin/ssh" })
    }
}

/// An asker that counts its questions and refuses.
private final class RefusingAsker: AccessAsker, @unchecked Sendable {
    private let lock = NSLock()
    private var asked = 0
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        lock.withLock { asked += 1 }
        return .answered(.deny)
    }
    var count: Int { lock.withLock { asked } }
}

/// The access log entries a gate wrote.
final class KeptEntries: AccessRecorder, @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [AccessLogEntry] = []
    func record(_ entry: AccessLogEntry) { lock.withLock { entries.append(entry) } }
    var all: [AccessLogEntry] { lock.withLock { entries } }
}

/// Counts how often the listener named a peer.
final class NamedPeers: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0
    func name() -> Requester? {
        lock.withLock { calls += 1 }
        return SSHListingTests.requester(pid: 4343)
    }
    var count: Int { lock.withLock { calls } }
}

/// A client of the SSH agent socket: one frame out, one frame back.
final class SSHClientSocket {
    private var fd: Int32

    init(_ path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0 else { throw KeychainError.io("connect: \(errno)") }
    }

    /// Sends `message` as a frame and returns the answer's bytes after its length.
    func exchange(_ message: [UInt8]) throws -> [UInt8] {
        try SocketIO.writeFrame(fd, message, until: SocketIO.monotonic() + 10)
        return try SocketIO.readFrame(fd, until: SocketIO.monotonic() + 10)
    }

    func close() {
        _ = Glibc.close(fd)
        fd = -1
    }

    deinit { if fd >= 0 { _ = Glibc.close(fd) } }
}

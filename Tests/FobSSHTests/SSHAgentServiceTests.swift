import FobSystem
import FobTestSupport
import Foundation
import Testing

@testable import FobSSH

/// Keys in memory standing for the vault.
final class MemorySource: SSHKeySource, @unchecked Sendable {
    var keys: [(SSHStoredKey, SSHPrivateKey)] = []
    var locked = false
    var isLocked: Bool { locked }

    func storedKeys() throws(SSHKeySourceError) -> [SSHStoredKey] {
        if locked { throw .locked }
        return keys.map(\.0)
    }

    func privateKey(named name: String) throws(SSHKeySourceError) -> SSHPrivateKey {
        if locked { throw .locked }
        guard let found = keys.first(where: { $0.0.name == name }) else { throw .notFound }
        return found.1
    }

    func store(_ key: SSHPrivateKey, comment: String, constraints: SSHKeyConstraints) throws(SSHKeySourceError) {
        if locked { throw .locked }
        let stored = SSHStoredKey(
            name: comment, key: key.publicKey, comment: comment, destinations: constraints.destinations,
            confirm: constraints.confirm)
        keys.append((stored, key))
    }

    @discardableResult
    func add(_ name: String, hosts: [String] = []) throws -> SSHPrivateKey {
        let key = try SSHPrivateKey.generate(.ed25519)
        keys.append(
            (SSHStoredKey(name: name, key: key.publicKey, comment: name, hosts: SSHHostRules(patterns: hosts)), key))
        return key
    }
}

final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

/// A server's host key and a bind it signs for `sessionID`.
func hostBind(_ host: SSHPrivateKey, session: [UInt8], forwarding: Bool = false) throws -> SessionBind {
    SessionBind(
        hostKey: host.publicKey, sessionID: session, signature: try host.sign(session, flags: SSHSignFlags.rsaSHA512),
        isForwarding: forwarding)
}

func frameBody(_ frame: [UInt8]) -> [UInt8] { Array(frame.dropFirst(4)) }

func offered(_ answer: [UInt8]) throws -> [String] {
    var reader = SSHReader(frameBody(answer))
    #expect(try reader.byte() == SSHAgentMessage.identitiesAnswer)
    var comments: [String] = []
    for _ in 0..<(try reader.uint32()) {
        _ = try reader.string()
        comments.append(try reader.text())
    }
    return comments.sorted()
}

/// Counts how often a connection's peer is named.
final class NamingCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func name() -> Requester? {
        lock.withLock { count += 1 }
        return Requester(pid: 4242, uid: getuid(), executable: "/usr/bin/ssh", identity: nil)
    }
    var calls: Int { lock.withLock { count } }
}

/// An approval that allows and keeps each signature's requester.
final class SeenRequesters: SSHSignApproval, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [Requester?] = []
    func approve(_ context: SSHSignContext) -> SSHSignDecision {
        lock.withLock { seen.append(context.requester) }
        return .allow
    }
    func unlock(for context: SSHSignContext) -> Bool { false }
    var pids: [Int32?] { lock.withLock { seen.map { $0?.pid } } }
}

@Suite struct SSHAgentServiceTests {
    let source = MemorySource()
    let log = LogLines()
    let hostA: SSHPrivateKey
    let hostB: SSHPrivateKey
    let service: SSHAgentService

    init() throws {
        hostA = try SSHPrivateKey.generate(.ed25519)
        hostB = try SSHPrivateKey.generate(.ecdsaP256)
        let text =
            "alpha.test \(hostA.publicKey.line(comment: ""))\n[beta.test]:2222 \(hostB.publicKey.line(comment: ""))\n"
        let log = self.log
        service = SSHAgentService(
            source: source, knownHosts: { KnownHosts(text: text) }, log: { log.append($0) }, now: { 0 })
    }

    func request(_ type: UInt8, _ body: (inout SSHWriter) -> Void = { _ in }) -> [UInt8] {
        var writer = SSHWriter()
        writer.byte(type)
        body(&writer)
        return writer.bytes
    }

    @Test func aBoundSessionIsOfferedOnlyTheKeysAllowedForItsHost() throws {
        try source.add("everywhere")
        try source.add("alpha-only", hosts: ["alpha.test"])
        try source.add("beta-only", hosts: ["beta.test"])
        var state = SSHConnectionState()
        #expect(
            try offered(service.respond(to: request(11), state: &state)) == ["alpha-only", "beta-only", "everywhere"])
        let bind = try hostBind(hostA, session: Array(repeating: 7, count: 32))
        #expect(service.respond(to: bind.message, state: &state) == SSHAgentResponse.success)
        #expect(try offered(service.respond(to: request(11), state: &state)) == ["alpha-only", "everywhere"])
        var other = SSHConnectionState()
        _ = service.respond(to: try hostBind(hostB, session: [1, 2, 3]).message, state: &other)
        #expect(try offered(service.respond(to: request(11), state: &other)) == ["beta-only", "everywhere"])
    }

    @Test func aForgedSessionBindIsRefusedAndTheConnectionGetsNothing() throws {
        let key = try source.add("k")
        var forged = try hostBind(hostA, session: Array(repeating: 1, count: 32))
        forged.sessionID = Array(repeating: 2, count: 32)
        var state = SSHConnectionState()
        #expect(service.respond(to: forged.message, state: &state) == SSHAgentResponse.failure)
        #expect(try offered(service.respond(to: request(11), state: &state)) == [])
        let sign = request(13) {
            $0.string(key.publicKey.blob)
            $0.string([1, 2, 3])
            $0.uint32(0)
        }
        #expect(service.respond(to: sign, state: &state) == SSHAgentResponse.failure)
        #expect(log.all.contains { $0.contains("session-bind refused") })
    }

    @Test func signsWithAVaultKeyAndTheSignatureVerifies() throws {
        let key = try source.add("k")
        var state = SSHConnectionState()
        let answer = service.respond(
            to: request(13) {
                $0.string(key.publicKey.blob)
                $0.string([9, 9, 9])
                $0.uint32(0)
            }, state: &state)
        var reader = SSHReader(frameBody(answer))
        #expect(try reader.byte() == SSHAgentMessage.signResponse)
        #expect(key.publicKey.verify(signature: try reader.string(), over: [9, 9, 9]))
    }

    @Test func aLockedVaultListsTheLastKnownKeysAndRefusesToSignWithALogLine() throws {
        let key = try source.add("k")
        var state = SSHConnectionState()
        _ = service.respond(to: request(11), state: &state)
        source.locked = true
        #expect(try offered(service.respond(to: request(11), state: &state)) == ["k"])
        let sign = request(13) {
            $0.string(key.publicKey.blob)
            $0.string([1])
            $0.uint32(0)
        }
        #expect(service.respond(to: sign, state: &state) == SSHAgentResponse.failure)
        #expect(log.all.last?.contains("the vault is locked") == true)
    }

    @Test func unknownExtensionsLockAndSmartcardMessagesAnswerFailure() throws {
        var state = SSHConnectionState()
        let unknown = request(27) { $0.string("nonsense@example.com") }
        #expect(service.respond(to: unknown, state: &state) == SSHAgentResponse.failure)
        #expect(service.respond(to: request(22) { $0.string("pw") }, state: &state) == SSHAgentResponse.failure)
        #expect(service.respond(to: request(20), state: &state) == SSHAgentResponse.failure)
        #expect(service.respond(to: [], state: &state) == SSHAgentResponse.failure)
        let query = service.respond(to: request(27) { $0.string("query") }, state: &state)
        #expect(query == SSHAgentResponse.query(["session-bind@openssh.com", "query"]))
    }

    @Test func addIdentityStoresTheKeyAndAnUnknownConstraintIsRefused() throws {
        let key = try SSHPrivateKey.generate(.ecdsaP256)
        var state = SSHConnectionState()
        let add = request(17) {
            $0.raw(key.privateWire().unsafeArray)
            $0.string("added")
        }
        #expect(service.respond(to: add, state: &state) == SSHAgentResponse.success)
        #expect(source.keys.map(\.0.comment) == ["added"])
        let constrained = request(25) {
            $0.raw(key.privateWire().unsafeArray)
            $0.string("c")
            $0.byte(255)
            $0.string("unknown@example.com")
        }
        #expect(service.respond(to: constrained, state: &state) == SSHAgentResponse.failure)
    }

    @Test func aForwardedChainIsSeenAsForwardedAndDestinationConstraintsFollowTheHops() throws {
        let key = try SSHPrivateKey.generate(.ed25519)
        let toA = SSHDestinationConstraint(
            from: SSHDestinationHop(user: "", hostname: "", keys: []),
            to: SSHDestinationHop(
                user: "", hostname: "alpha.test", keys: [SSHHopKey(key: hostA.publicKey, isCA: false)]))
        var state = SSHConnectionState()
        let add = request(25) {
            $0.raw(key.privateWire().unsafeArray)
            $0.string("restricted")
            $0.byte(255)
            $0.string("restrict-destination-v00@openssh.com")
            $0.string(SSHKeyConstraints(destinations: [toA]).destinationsWire)
        }
        #expect(service.respond(to: add, state: &state) == SSHAgentResponse.success)
        var toAlpha = SSHConnectionState()
        _ = service.respond(to: try hostBind(hostA, session: [1]).message, state: &toAlpha)
        #expect(try offered(service.respond(to: request(11), state: &toAlpha)) == ["restricted"])
        var toBeta = SSHConnectionState()
        _ = service.respond(to: try hostBind(hostB, session: [2]).message, state: &toBeta)
        #expect(try offered(service.respond(to: request(11), state: &toBeta)) == [])
        var forwarded = SSHConnectionState()
        _ = service.respond(to: try hostBind(hostA, session: [3], forwarding: true).message, state: &forwarded)
        _ = service.respond(to: try hostBind(hostB, session: [4]).message, state: &forwarded)
        let destination = service.destination(for: forwarded)
        #expect(destination.isForwarded)
        #expect(destination.state == .verified)
        #expect(destination.names == ["[beta.test]:2222"])
    }

    @Test func thePeerIsNamedOnlyAtItsFirstSignatureAndEverySignatureNamesIt() throws {
        let key = try source.add("k")
        let approval = SeenRequesters()
        let service = SSHAgentService(
            source: source, approval: approval, knownHosts: { KnownHosts(text: "") }, log: { _ in }, now: { 0 })
        let naming = NamingCount()
        var state = SSHConnectionState(peerPID: 4242) { naming.name() }
        for _ in 0..<3 { #expect(try offered(service.respond(to: request(11), state: &state)) == ["k"]) }
        _ = service.respond(to: request(27) { $0.string("query") }, state: &state)
        #expect(naming.calls == 0)
        #expect(state.requester == nil)
        let sign = request(13) {
            $0.string(key.publicKey.blob)
            $0.string([5])
            $0.uint32(0)
        }
        #expect(frameBody(service.respond(to: sign, state: &state)).first == SSHAgentMessage.signResponse)
        #expect(frameBody(service.respond(to: sign, state: &state)).first == SSHAgentMessage.signResponse)
        #expect(naming.calls == 1)
        #expect(approval.pids == [4242, 4242])
    }
}

import FobStore
import FobSystem
import FobTestSupport
import Foundation
import Testing

@testable import FobAgent

/// An asker that records who was asked about and answers `once`.
private final class RecordingAsker: AccessAsker, @unchecked Sendable {
    private let lock = NSLock()
    private var asked: [AccessContext] = []
    var contexts: [AccessContext] { lock.withLock { asked } }
    func ask(_ question: AccessQuestion, timeout: Double) -> AccessOutcome {
        lock.withLock { asked.append(question.context) }
        return .answered(.once)
    }
}

/// A request made for a D-Bus client (``AgentRequest/forClient(pid:request:)``):
/// its wire form, and the agent ignoring the pid from any peer but Fob's provider.
@Suite struct ClientForwardingTests {
    @Test func aRequestForAClientTravelsWithItsPid() throws {
        let inner = AgentRequest.getItems(ids: [UUID(), UUID()], detail: .secretOnly)
        let bytes = AgentRequest.forClient(pid: 4242, request: inner).encoded()
        let decoded = try bytes.withUnsafeBytes { try AgentRequest.decode($0) }
        guard case .forClient(4242, .getItems(let ids, .secretOnly)) = decoded else {
            Issue.record("decoded as \(decoded)")
            return
        }
        #expect(ids.count == 2)
        #expect(decoded.isItemOperation && !decoded.isWrite)
        #expect(decoded.unwrapped.isItemOperation)
    }

    @Test func nestedOrPidlessClaimsAreRefused() {
        let nested = AgentRequest.forClient(pid: 7, request: .forClient(pid: 8, request: .status)).encoded()
        #expect(throws: AgentProtocolError.badField("a request made for a client")) {
            try nested.withUnsafeBytes { try AgentRequest.decode($0) }
        }
        let subscribe = AgentRequest.forClient(pid: 7, request: .subscribe).encoded()
        #expect(throws: AgentProtocolError.badField("a request made for a client")) {
            try subscribe.withUnsafeBytes { try AgentRequest.decode($0) }
        }
        let noPid = AgentRequest.forClient(pid: 0, request: .status).encoded()
        #expect(throws: AgentProtocolError.badField("a client's pid")) {
            try noPid.withUnsafeBytes { try AgentRequest.decode($0) }
        }
    }

    /// This test process is not Fob's provider: the pid it claims is
    /// ignored, and the question names the requester the peer itself gives.
    @Test func aPidClaimedByAnotherPeerIsIgnored() throws {
        let served = try AgentConnectionTests.Served()
        defer { served.stop() }
        let asker = RecordingAsker()
        served.server.core.gate.askers = [asker]
        let connection = AgentConnection(endpoint: served.endpoint)
        guard case .written = try connection.send(.add(Item(service: "mail", account: "ana", secret: .text("s")))),
            case .written = try connection.send(.update(.key(service: "mail", account: "ana"), ruleChanges(.ask)))
        else {
            Issue.record("setup")
            return
        }
        let before = asker.contexts.count
        connection.clientPID = 1
        guard case .items(let items) = try connection.send(.get(service: "mail", account: "ana")) else {
            Issue.record("the read was refused")
            return
        }
        #expect(items.first?.secret?.unsafeString == "s")
        let asked = asker.contexts.dropFirst(before)
        #expect(asked.count == 1)
        // In-process, the agent's executable is this test's: the peer is Fob's
        // own (not its provider), so the requester is the test's parent, as for
        // `fob get`, and never the pid the peer claimed.
        #expect(asked.first?.requester.pid == getppid())
        #expect(asked.first?.requester.via?.pid == getpid())
        #expect(asked.first?.channel != .secretService)
    }

    private func ruleChanges(_ mode: AccessRule.Mode) -> ItemChanges {
        var changes = ItemChanges()
        changes.accessRule = AccessRule(mode: mode)
        return changes
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobAgent

/// One connection carries many requests after one hello; a connection the
/// agent closed is opened again before a request is sent, never after.
@Suite struct AgentConnectionTests {
    /// An agent served by this process on a private socket.
    final class Served: @unchecked Sendable {
        let runtime = TemporaryDirectory(prefix: "fob-rt")
        let vault: TestVault
        let server: AgentServer
        private let done = DispatchSemaphore(value: 0)

        init(idleTimeout: Double = 60) throws {
            chmod(runtime.url.path, 0o700)
            vault = try TestVault()
            vault.vault.lock()
            let endpoint = AgentEndpoint(vaultURL: vault.vault.url, environment: ["XDG_RUNTIME_DIR": runtime.url.path])
            server = AgentServer(endpoint: endpoint, core: AgentCore(vaultURL: URL(fileURLWithPath: endpoint.vault)))
            server.idleTimeout = idleTimeout
            try server.bind()
            let thread = Thread { [server, done] in
                server.run()
                done.signal()
            }
            thread.start()
            guard case .ok = server.core.handle(.unlock(password: vault.password, idleSeconds: 0, maxSeconds: 0)) else {
                throw KeychainError.authFailed
            }
        }

        var endpoint: AgentEndpoint { server.endpoint }

        func stop() {
            unlink(server.endpoint.socket)
            done.wait()
        }
    }

    @Test func oneConnectionServesAThousandRequestsWithOneHello() throws {
        let served = try Served()
        defer { served.stop() }
        let connection = AgentConnection(endpoint: served.endpoint)
        let hellos = served.server.acceptedHellos
        guard case .written(1, _) = try connection.send(.add(Item(service: "mail", account: "ana", secret: .text("s"))))
        else {
            Issue.record("add")
            return
        }
        var answered = 1
        for _ in 0..<999 {
            if case .items(let items) = try connection.send(.get(service: "mail", account: "ana")),
                items.first?.secret?.unsafeString == "s"
            {
                answered += 1
            }
        }
        #expect(answered == 1_000)
        #expect(served.server.acceptedHellos - hellos == 1)
        #expect(connection.connectionsOpened == 1)
    }

    /// The agent closed the connection while it sat idle: the next request
    /// opens another, transparently.
    @Test func aClosedConnectionIsOpenedAgainBeforeTheRequest() throws {
        let served = try Served(idleTimeout: 0.2)
        defer { served.stop() }
        let connection = AgentConnection(endpoint: served.endpoint)
        guard case .status = try connection.send(.status) else {
            Issue.record("status")
            return
        }
        // Wait until the agent has closed it (the socket reads as closed).
        let fd = try #require(connection.socketForTests)
        let until = Date().addingTimeInterval(5)
        while Date() < until && !SocketIO.isStale(fd) { usleep(20_000) }
        #expect(SocketIO.isStale(fd))
        guard case .status = try connection.send(.status) else {
            Issue.record("status after the close")
            return
        }
        #expect(connection.connectionsOpened == 2)
        #expect(served.server.acceptedHellos == 2)
    }

    /// A request sent whole that gets no answer is `.noAnswer`, never sent again.
    @Test func aRequestSentWholeWithoutAnAnswerIsNoAnswer() throws {
        let runtime = TemporaryDirectory(prefix: "fob-rt")
        chmod(runtime.url.path, 0o700)
        let v = try TestVault()
        let endpoint = AgentEndpoint(vaultURL: v.vault.url, environment: ["XDG_RUNTIME_DIR": runtime.url.path])
        try endpoint.prepareDirectory()
        // A fake agent: accepts the hello, reads one request, closes without answering.
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var (address, length) = try endpoint.address()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) }
        }
        #expect(bound == 0 && listen(listener, 4) == 0)
        let requests = ArrivalLog<Int>()
        let thread = Thread {
            for attempt in 0..<2 {
                let fd = accept(listener, nil, nil)
                guard fd >= 0 else { return }
                _ = try? SocketIO.readFrame(fd, until: SocketIO.monotonic() + 5, limit: AgentHello.maxBytes)
                try? SocketIO.writeFrame(fd, AgentResponse.ok.encoded(), until: SocketIO.monotonic() + 5)
                if (try? SocketIO.readFrame(fd, until: SocketIO.monotonic() + 5)) != nil { requests.append(attempt) }
                close(fd)
            }
        }
        thread.start()
        let connection = AgentConnection(endpoint: endpoint, timeout: 5)
        #expect(throws: AgentClientError.noAnswer("the agent closed the connection")) {
            try connection.send(.add(Item(service: "mail", account: "ana", secret: .text("s"))))
        }
        #expect(requests.arrival(of: 0) != nil)
        #expect(requests.arrival(of: 1, timeout: 0.3) == nil, "the request was not sent again")
        shutdown(listener, Int32(SHUT_RDWR))
    }
}

import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// What a command does when the agent does not answer a request.
@Suite(.serialized) struct AgentFallbackProcessTests {
    /// Issue: after an agent's transport error a write was made again on the
    /// file while the agent might still make the first. A fake agent reads
    /// each request whole and closes without an answer: a read falls back to
    /// the file, a write does not (and says so), and nothing is written twice.
    @Test func aWriteTheAgentReceivedButDidNotAnswerIsNotMadeAgainOnTheFile() throws {
        let f = try AgentFixture()
        #expect(try f.run(["--no-agent", "add", "mail", "ana"], input: "one\n", password: true).status == 0)
        let agent = try SilentAgent(endpoint: f.endpoint)
        defer { agent.stop() }
        // Without the master password: a command given it opens the vault itself, never the agent.
        let removed = try f.run(["rm", "mail", "ana"])
        #expect(removed.status == 1, "\(removed.stderrText)")
        #expect(removed.stderrText.contains("may or may not have been made"), "\(removed.stderrText)")
        let moved = try f.run(["mv", "mail", "ana", "web"])
        #expect(moved.status == 1, "\(moved.stderrText)")
        #expect(agent.requests >= 2)
        // A read is safe to make again on the file (with the master password, here).
        let read = try f.run(["get", "mail", "ana"], password: true)
        #expect(read.status == 0 && read.stdoutText == "one\n", "\(read.stderrText)")
        #expect(try f.run(["--no-agent", "get", "mail", "ana"], password: true).stdoutText == "one\n")
    }
}

/// A socket where an agent would listen that answers each connection's
/// hello `ok`, then reads the request frame whole (a 4-byte big-endian
/// length, then the bytes) and closes without answering it.
final class SilentAgent: @unchecked Sendable {
    private let fd: Int32
    private let path: String
    private let lock = NSLock()
    private var count = 0
    private var thread: Thread?

    /// How many whole requests it has read.
    var requests: Int { lock.withLock { count } }

    init(endpoint: AgentEndpoint) throws {
        try endpoint.prepareDirectory()
        path = endpoint.socket
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0 && listen(fd, 8) == 0)
        let listener = fd
        let thread = Thread { [weak self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                // The hello is answered `ok`; the request after it never is.
                if SilentAgent.readFrame(client), SilentAgent.writeFrame(client, AgentResponse.ok.encoded()),
                    SilentAgent.readFrame(client)
                {
                    self?.lock.withLock { self?.count += 1 }
                }
                close(client)
            }
        }
        self.thread = thread
        thread.start()
    }

    private static func readFrame(_ fd: Int32) -> Bool {
        func read(_ n: Int) -> [UInt8]? {
            var out = [UInt8](repeating: 0, count: n)
            var got = 0
            while got < n {
                let r = out.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + got, n - got) }
                guard r > 0 else { return nil }
                got += r
            }
            return out
        }
        guard let header = read(4) else { return false }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        return read(length) != nil
    }

    private static func writeFrame(_ fd: Int32, _ payload: [UInt8]) -> Bool {
        let count = UInt32(payload.count)
        let frame = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: count >> $0) } + payload
        return frame.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == frame.count
    }

    /// Stops listening and removes the socket.
    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        unlink(path)
    }
}

import CLinux
import FobSSH
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The SSH agent socket of a vault's agent process: beside the agent's own
/// socket in the same 0700 directory, it speaks the SSH agent protocol
/// (``SSHAgentService``) to connections from this user only (`SO_PEERCRED`).
/// Each connection has its own thread and its own session-bind state, and
/// stays open as long as the client keeps it (ssh holds it for a session).
public final class SSHAgentListener: @unchecked Sendable {
    /// The socket's path.
    public let socket: String
    private let service: SSHAgentService
    private let listener: UnixListener
    private let stopLock = Lock()
    private var stopped = false
    /// Names a connection's peer from its socket; run only when a request needs it.
    private let nameRequester: @Sendable (Int32) -> Requester?

    /// The SSH socket of a vault's agent: its socket's name with `-ssh`
    /// before `.sock` (`agent-ssh.sock` for the default vault).
    public static func socketPath(for endpoint: AgentEndpoint) -> String {
        let base = endpoint.socket.hasSuffix(".sock") ? String(endpoint.socket.dropLast(5)) : endpoint.socket
        return base + "-ssh.sock"
    }

    /// - Parameters:
    ///   - endpoint: the vault's agent endpoint (its directory must be prepared).
    ///   - service: the answers.
    ///   - nameRequester: names the peer of a connected socket (pid, executable,
    ///     parent chain, terminal: ``ProcessInspector/requester(onSocket:fob:)``);
    ///     called once per connection, at its first signature request, never
    ///     for a connection that only lists keys.
    public init(
        endpoint: AgentEndpoint, service: SSHAgentService,
        nameRequester: (@Sendable (Int32) -> Requester?)? = nil
    ) {
        socket = SSHAgentListener.socketPath(for: endpoint)
        listener = UnixListener(path: socket)
        self.service = service
        let fob = FobPrograms()
        self.nameRequester = nameRequester ?? { fd in try? ProcessInspector.requester(onSocket: fd, fob: fob) }
    }

    /// Binds the socket (mode 0600 in the agent's 0700 directory), replacing a stale one.
    /// - Throws: `.io` when it cannot listen.
    public func bind() throws(KeychainError) {
        unlink(socket)
        try listener.bind(backlog: 64, what: "SSH agent")
    }

    /// Takes the listening socket a service manager passed (systemd's
    /// `fob-ssh-agent.socket`, ``SocketActivation``) instead of binding one.
    /// - Parameter fd: a listening Unix stream socket bound to ``socket``.
    /// - Throws: `.param` naming what the descriptor is instead.
    public func adopt(listener fd: Int32) throws(KeychainError) {
        try listener.adopt(fd)
    }

    /// Serves on a thread of its own until ``stop()``.
    /// - Returns: whether the thread started.
    @discardableResult
    public func start() -> Bool {
        DetachedThread.start { [self] in run() }
    }

    /// Stops accepting and removes the socket (unless a service manager passed it: the socket is its own).
    public func stop() {
        stopLock.lock()
        stopped = true
        stopLock.unlock()
        if !listener.inherited { unlink(socket) }
    }

    private var isStopped: Bool {
        stopLock.lock()
        defer { stopLock.unlock() }
        return stopped
    }

    private func run() {
        while !isStopped {
            service.noteLockState()
            guard listener.awaitConnection(milliseconds: 200), let (client, peer) = listener.accept() else { continue }
            if !DetachedThread.start({ [self] in serve(client, pid: peer.pid) }) { close(client) }
        }
        listener.close()
    }

    /// One connection: requests and answers in turn until the client closes
    /// it, sends a frame over 256 KiB, or is idle for an hour.
    private func serve(_ fd: Int32, pid: Int32) {
        defer { close(fd) }
        var state = SSHConnectionState(peerPID: pid) { [nameRequester] in nameRequester(fd) }
        while !isStopped {
            guard
                var message = try? SocketIO.readFrame(
                    fd, until: SocketIO.monotonic() + 3600, limit: SSHAgentMessage.maxLength)
            else { return }
            var answer = service.respond(to: message, state: &state)
            message.wipe()
            // The answer is already a frame; write it whole.
            let written = answer.withUnsafeBytes { raw in SSHAgentListener.writeAll(fd, raw) }
            answer.wipe()
            guard written else { return }
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = send(fd, bytes.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
            if n > 0 {
                done += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}

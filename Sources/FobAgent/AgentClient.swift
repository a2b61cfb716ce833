import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Why the agent could not be used.
public enum AgentClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No agent runs for this vault (no socket, or a stale one).
    case stopped
    /// The socket or its directory is not safe (another owner, a bad mode),
    /// or the agent runs as another user: nothing was sent.
    case unsafe(String)
    /// The agent speaks another protocol version, or answered garbage.
    case protocolError(AgentProtocolError)
    /// The connection failed or timed out before the whole request was
    /// sent: the agent cannot have acted on it.
    case io(String)
    /// The whole request was sent, but no answer came (a timeout, a closed
    /// connection): the agent may have carried it out, so a write must not be
    /// made again elsewhere as if it had not been.
    case noAnswer(String)

    public var description: String {
        switch self {
        case .stopped: return "no agent runs for this vault"
        case .unsafe(let why): return why
        case .protocolError(let error): return "agent: \(error)"
        case .io(let why): return "agent: \(why)"
        case .noAnswer(let why): return "agent: \(why)"
        }
    }

    /// As a keychain error (`.interactionNotAllowed` for every case but
    /// `.io` and `.noAnswer`), for commands and FobSecurity.
    public var keychainError: KeychainError {
        switch self {
        case .io(let why), .noAnswer(let why): return .io("agent: \(why)")
        default: return .interactionNotAllowed(description)
        }
    }
}

/// The agent's client: connects, checks that socket and agent belong to
/// this user, sends one request on a connection of its own and reads the
/// answer (``AgentConnection`` keeps one open for many).
public struct AgentClient: Sendable {
    /// The socket of the vault's agent.
    public let endpoint: AgentEndpoint
    /// How long a request may take, in seconds (an unlock pays the KDF).
    public var timeout: Double = 120

    /// - Parameter endpoint: where the agent listens.
    public init(endpoint: AgentEndpoint) { self.endpoint = endpoint }

    /// Whether an agent accepts connections on the endpoint's socket.
    public static func isAnswering(_ endpoint: AgentEndpoint) -> Bool {
        guard let fd = try? AgentClient(endpoint: endpoint).connect() else { return false }
        close(fd)
        return true
    }

    /// Connects, after checking the directory and the socket, and checks the
    /// agent's uid with `SO_PEERCRED`.
    /// - Throws: `.stopped` when nothing listens; `.unsafe` for a bad
    ///   directory, a socket of another owner, or an agent of another uid.
    func connect() throws(AgentClientError) -> Int32 {
        do {
            try endpoint.checkDirectory()
        } catch .io {
            throw .stopped
        } catch {
            throw .unsafe(error.reason)
        }
        var st = stat()
        guard lstat(endpoint.socket, &st) == 0 else { throw .stopped }
        guard (st.st_mode & S_IFMT) == S_IFSOCK, st.st_uid == getuid() else {
            throw .unsafe("\(endpoint.socket) is not a socket of yours; remove it")
        }
        let fd = fob_unix_socket_cloexec()
        guard fd >= 0 else { throw .io("socket: \(String(cString: strerror(errno)))") }
        guard let (initial, length) = try? endpoint.address() else {
            close(fd)
            throw .io("socket path too long")
        }
        var address = initial
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            if code == ECONNREFUSED || code == ENOENT { throw .stopped }
            throw .io("cannot connect to \(endpoint.socket): \(String(cString: strerror(code)))")
        }
        guard let peer = SocketIO.peer(fd), peer.uid == getuid() else {
            close(fd)
            throw .unsafe("the agent on \(endpoint.socket) does not run as you; nothing was sent")
        }
        return fd
    }

    /// Sends `request` on a connection of its own (``AgentConnection``,
    /// closed on return) and returns the agent's answer: for a one-shot
    /// command; a long-lived client keeps an ``AgentConnection``.
    /// - Parameters:
    ///   - request: the request (its password or secret is wiped from the sent bytes).
    ///   - withSecrets: keep the secret of an `.items` answer.
    /// - Throws: as ``AgentConnection/send(_:withSecrets:)``.
    public func send(_ request: AgentRequest, withSecrets: Bool = true) throws(AgentClientError) -> AgentResponse {
        try AgentConnection(endpoint: endpoint, timeout: timeout).send(request, withSecrets: withSecrets)
    }

    /// As ``AgentConnection/send(_:withSecrets:eachItem:)``, on a connection of its own.
    public func send(_ request: AgentRequest, withSecrets: Bool = true, eachItem: (Item) -> Void)
        throws(AgentClientError) -> AgentResponse
    {
        try AgentConnection(endpoint: endpoint, timeout: timeout).send(
            request, withSecrets: withSecrets, eachItem: eachItem)
    }

    /// Subscribes to the agent's changes (``AgentConnection/subscribe(onEvent:onEnd:)``).
    public func subscribe(
        onEvent: @escaping @Sendable (AgentEvent) -> Void, onEnd: @escaping @Sendable () -> Void = {}
    ) throws(AgentClientError) -> AgentSubscription {
        try AgentConnection(endpoint: endpoint, timeout: timeout).subscribe(onEvent: onEvent, onEnd: onEnd)
    }

    /// Starts `fob agent --detach` for this vault, which starts the agent
    /// in a new session with no descriptor but /dev/null and exits at once;
    /// waits for it, then until the agent answers. So the agent is nobody's
    /// child here: a process that execs a command next (`fob run`) does not
    /// pass the agent on to it as a child.
    /// - Parameters:
    ///   - executable: the `fob` binary (normally `/proc/self/exe`).
    ///   - vaultPath: passed as `--vault`.
    ///   - environment: the agent's environment (no secret in it).
    /// - Throws: `.io` when it cannot start or does not answer within 5 s;
    ///   `.unsafe` for a bad directory.
    public func start(executable: String, vaultPath: String, environment: [String: String]) throws(AgentClientError) {
        do {
            try endpoint.prepareDirectory()
        } catch {
            throw .unsafe(error.reason)
        }
        let launcher: pid_t
        do {
            launcher = try ChildProcessSpawner.spawn(
                executable: executable, arguments: ["agent", "--detach", "--vault", vaultPath],
                environment: environment, standardInput: .null,
                standardOutput: .null, standardError: .null, newSession: true)
        } catch {
            throw .io("cannot start the agent: \(error)")
        }
        var status: Int32 = 0
        while waitpid(launcher, &status, 0) < 0 && errno == EINTR {}
        let until = SocketIO.monotonic() + 5
        while SocketIO.monotonic() < until {
            if AgentClient.isAnswering(endpoint) { return }
            usleep(5_000)
        }
        throw .io("the agent did not start within 5 s")
    }

    /// Starts `fob agent --vault VAULT` in a new session with no descriptor
    /// but /dev/null, and does not wait for it (what `fob agent --detach`
    /// does before it exits).
    /// - Parameters: as ``start(executable:vaultPath:environment:)``.
    /// - Returns: the agent's pid.
    /// - Throws: `.io` when it cannot start.
    public static func spawnDetached(executable: String, vaultPath: String, environment: [String: String])
        throws(AgentClientError) -> pid_t
    {
        do {
            return try ChildProcessSpawner.spawn(
                executable: executable, arguments: ["agent", "--vault", vaultPath],
                environment: environment, standardInput: .null,
                standardOutput: .null, standardError: .null, newSession: true)
        } catch {
            throw .io("cannot start the agent: \(error)")
        }
    }
}

/// A subscription to the agent's changes (``AgentClient/subscribe(onEvent:onEnd:)``).
public final class AgentSubscription: @unchecked Sendable {
    private let lock = Lock()
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    /// Whether events may still come.
    public var isActive: Bool {
        lock.lock()
        defer { lock.unlock() }
        return fd >= 0
    }

    /// Ends the subscription: no event is delivered after the reading
    /// thread sees the connection shut down.
    public func cancel() {
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    /// Closes the connection (the reading thread, once it stops).
    func finish() {
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 { close(fd) }
        fd = -1
    }

    deinit { cancel() }
}

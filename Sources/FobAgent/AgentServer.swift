import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// The agent process: listens on the vault's socket, serves each
/// connection on its own thread (a hello, then any number of requests, each
/// answered before the next is read), and applies the timeouts.
///
/// Every connection is checked with `SO_PEERCRED` and dropped unless it
/// comes from this user. A client that sends garbage, too much or nothing
/// only loses its own connection; one that stays silent longer than
/// ``idleTimeout`` between requests is closed; requests reach ``AgentCore``
/// one at a time.
public final class AgentServer: @unchecked Sendable {
    /// Where it listens.
    public let endpoint: AgentEndpoint
    /// The state and answers.
    public let core: AgentCore
    /// How long the hello, and each request once its first byte arrived,
    /// may take to arrive, and each answer to be sent, in seconds (an import
    /// past ``AgentProtocol/maxMessageBytes`` one more second per MiB).
    public var connectionDeadline: Double = 5
    /// How long a connection may stay silent between requests, in seconds,
    /// before the agent closes it (a client reconnects).
    public var idleTimeout: Double = 60
    /// The most connections served at once; later ones wait to be accepted.
    public var maxConnections = 128
    private let listener: UnixListener
    private var socketIdentity: (dev_t, ino_t)?
    private let counter = Lock()
    private var active = 0
    private var hellos = 0
    /// The served vault's path, which every hello is checked against (taken
    /// from the URL once: `URL.path` costs thousands of instructions a call).
    private let servedPath: String
    /// Fob's own executables, whose requests are made for the program that ran them.
    private let fobPrograms = FobPrograms()

    /// How many hellos this server has accepted: one per connection, so a
    /// client that keeps its connection open adds one whatever the number of
    /// its requests (tests and benchmarks read it).
    public var acceptedHellos: Int {
        counter.lock()
        defer { counter.unlock() }
        return hellos
    }

    nonisolated(unsafe) private static var stopRequested: sig_atomic_t = 0

    /// - Parameters:
    ///   - endpoint: the socket and its directory.
    ///   - core: the agent's state.
    public init(endpoint: AgentEndpoint, core: AgentCore) {
        self.endpoint = endpoint
        self.core = core
        servedPath = core.vaultURL.path
        listener = UnixListener(path: endpoint.socket)
    }

    /// Binds the socket: prepares the directory (0700, this user's), and
    /// replaces a stale socket (one no agent answers on).
    /// - Throws: `.interactionNotAllowed` for a bad directory; `.duplicateItem`
    ///   when an agent already answers on this socket; `.io`.
    public func bind() throws(KeychainError) {
        try endpoint.prepareDirectory()
        if AgentClient.isAnswering(endpoint) {
            throw .duplicateItem("an agent already runs for \(endpoint.vault) on \(endpoint.socket)")
        }
        unlink(endpoint.socket)
        try listener.bind(backlog: 256, what: "agent")
        var st = stat()
        if lstat(endpoint.socket, &st) == 0 { socketIdentity = (st.st_dev, st.st_ino) }
    }

    /// Takes the listening socket a service manager passed (socket
    /// activation, ``SocketActivation``) instead of binding one: it must be a
    /// listening Unix stream socket bound to ``AgentEndpoint/socket``, in a
    /// directory of this user's with mode 0700. The socket file stays when
    /// the agent stops: it is the service manager's.
    /// - Parameter fd: the descriptor (``SocketActivation/firstDescriptor``).
    /// - Throws: `.param` when the socket is not this vault's (the unit serves
    ///   the default vault only); `.interactionNotAllowed` for a bad
    ///   directory; `.io` when it is missing.
    public func adopt(listener fd: Int32) throws(KeychainError) {
        // The descriptor first, as the service manager's mistake is the likelier one (checked again by `adopt`).
        try SocketActivation.checkListener(fd, boundTo: endpoint.socket)
        try endpoint.checkDirectory()
        var st = stat()
        guard lstat(endpoint.socket, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK, st.st_uid == getuid() else {
            throw .interactionNotAllowed("\(endpoint.socket) is not a socket of yours; remove it")
        }
        try listener.adopt(fd)
        socketIdentity = (st.st_dev, st.st_ino)
    }

    /// Serves until SIGTERM, SIGINT or SIGHUP, or until its socket is removed
    /// or replaced; then locks (wiping every key) and removes its socket
    /// (unless a service manager passed it).
    public func run() {
        signal(SIGPIPE, SIG_IGN)
        for sig in [SIGTERM, SIGINT, SIGHUP] {
            signal(sig) { _ in AgentServer.stopRequested = 1 }
        }
        while AgentServer.stopRequested == 0 && socketIsOurs() {
            core.tick()
            guard listener.awaitConnection(milliseconds: 200) else { continue }
            counter.lock()
            let busy = active >= maxConnections
            counter.unlock()
            if busy {
                usleep(5_000)
                continue
            }
            guard let (client, peer) = listener.accept() else { continue }
            counter.lock()
            active += 1
            counter.unlock()
            let started = DetachedThread.start { [self] in
                serve(client, peer: AccessLogRequester(pid: peer.pid, uid: peer.uid))
                close(client)
                counter.lock()
                active -= 1
                counter.unlock()
            }
            if !started {
                close(client)
                counter.lock()
                active -= 1
                counter.unlock()
            }
        }
        core.lockAll()
        if socketIsOurs() && !listener.inherited { unlink(endpoint.socket) }
        listener.close()
    }

    private func socketIsOurs() -> Bool {
        var st = stat()
        guard lstat(endpoint.socket, &st) == 0, let socketIdentity else { return false }
        return st.st_dev == socketIdentity.0 && st.st_ino == socketIdentity.1
    }

    /// Reads the client's ``AgentHello`` and answers it: `true` when the
    /// client means this agent's vault and may send its request.
    private func acceptsHello(_ fd: Int32, until deadline: Double) -> Bool {
        guard var hello = try? SocketIO.readFrame(fd, until: deadline, limit: AgentHello.maxBytes) else { return false }
        defer { hello.wipe() }
        switch AgentHello.verdict(hello, served: servedPath) {
        case .accepted:
            counter.lock()
            hellos += 1
            counter.unlock()
            return (try? SocketIO.writeFrame(fd, AgentResponse.ok.encoded(), until: deadline)) != nil
        case .refused(let reason):
            try? SocketIO.writeFrame(fd, AgentHello.refusal(reason), until: deadline)
        case .versionMismatch:
            try? SocketIO.writeFrame(fd, AgentResponse.versionMismatch(), until: deadline)
        }
        return false
    }

    /// A subscription: `.ok`, then each event as it comes, until the client
    /// closes the connection, a write fails, or the agent stops.
    private func serveSubscription(_ fd: Int32) {
        // Fob's own terminal UI (named from /proc, not claimed) also hears consent questions.
        var context: AccessContext?
        let terminalUI = (try? name(fd, &context).get())?.isTerminalUI ?? false
        guard let id = core.subscribe(terminalUI: terminalUI) else {
            let refused = AgentResponse.failure(.io("too many subscribers")).encoded()
            try? SocketIO.writeFrame(fd, refused, until: SocketIO.monotonic() + connectionDeadline)
            return
        }
        defer { core.subscribers.remove(id) }
        do {
            try SocketIO.writeFrame(fd, AgentResponse.ok.encoded(), until: SocketIO.monotonic() + connectionDeadline)
            while AgentServer.stopRequested == 0 {
                guard let events = core.subscribers.next(id, timeout: 0.5) else { return }
                for event in events {
                    try SocketIO.writeFrame(
                        fd, AgentResponse.event(event).encoded(), until: SocketIO.monotonic() + connectionDeadline)
                }
                // The client sends nothing after its request: readable means closed.
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, 0) != 0 { return }
            }
        } catch {
            return
        }
    }

    /// Names the peer (``ProcessInspector``, once per connection: `context`
    /// keeps it) and applies the access rules (``AgentCore/consent(to:from:)``)
    /// to a request that needs them. A ``AgentRequest/forClient(pid:request:)``
    /// from Fob's own Secret Service provider is decided for that client
    /// (named from its pid, channel "Secret Service"); from any other peer
    /// its pid is ignored.
    /// - Returns: the request to answer (never a `forClient`), or the refusal.
    private func consent(to request: AgentRequest, on fd: Int32, requester context: inout AccessContext?)
        -> Result<AgentRequest, KeychainError>
    {
        switch request.unwrapped {
        case .get(_, _, .listing), .getItems(_, .listing), .get(_, _, .searchAttributes),
            .getItems(_, .searchAttributes), .status, .lock, .unlock, .unlockWithKey, .list, .delete,
            .save, .applyImport, .subscribe:
            return .success(request.unwrapped)
        default: break
        }
        let named: AccessContext
        switch name(fd, &context) {
        case .success(let found): named = found
        case .failure(let refusal): return .failure(refusal)
        }
        guard case .forClient(let pid, let inner) = request, let provider = named.requester.via,
            fobPrograms.isSecretServiceProvider(provider.executable)
        else { return core.consent(to: request.unwrapped, from: named) }
        do {
            let client = try ProcessInspector.requester(pid: pid, forwardedBy: provider)
            return core.consent(to: inner, from: AccessContext(requester: client, channel: .secretService))
        } catch {
            return .failure(.interactionNotAllowed("the Secret Service client cannot be named: \(error)"))
        }
    }

    /// The peer of `fd`, named once per connection (`context` keeps it).
    private func name(_ fd: Int32, _ context: inout AccessContext?) -> Result<AccessContext, KeychainError> {
        if let context { return .success(context) }
        do {
            let requester = try ProcessInspector.requester(onSocket: fd, fob: fobPrograms)
            let channel = requester.via.map { AccessChannel.ofFobPeer(arguments: $0.arguments) } ?? .program
            let named = AccessContext(requester: requester, channel: channel)
            context = named
            return .success(named)
        } catch {
            return .failure(.interactionNotAllowed("the requester cannot be named: \(error)"))
        }
    }

    /// An answer to a consent question (``AgentRequest/answer(question:_:)``):
    /// taken only from Fob's own terminal UI; the first answer wins.
    private func settle(_ id: UInt64, _ value: AccessAnswer, on fd: Int32, requester context: inout AccessContext?)
        -> AgentResponse
    {
        switch name(fd, &context) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let named) where !named.isTerminalUI:
            return .failure(.param("only Fob's terminal UI answers consent questions"))
        case .success:
            return core.terminalUI.settle(id, with: value)
                ? .ok : .failure(.itemNotFound("question \(id) is no longer open"))
        }
    }

    /// One connection: the hello, then requests and their answers in turn,
    /// until the client closes it, stays silent past ``idleTimeout``, sends
    /// a frame that cannot be read, subscribes, or the agent stops.
    /// `peer` is the peer as `SO_PEERCRED` names it, for the access log.
    private func serve(_ fd: Int32, peer: AccessLogRequester) {
        guard acceptsHello(fd, until: SocketIO.monotonic() + connectionDeadline) else { return }
        // Named at the first request that needs it, once per connection.
        var requester: AccessContext?
        while AgentServer.stopRequested == 0 {
            guard SocketIO.awaitReadable(fd, seconds: idleTimeout) else { return }
            guard
                var payload = try? SocketIO.readFrame(
                    fd, until: SocketIO.monotonic() + connectionDeadline, largeImport: true)
            else { return }
            defer { payload.wipe() }
            var answer: [UInt8]
            do throws(AgentProtocolError) {
                let request = try payload.withUnsafeBytes { raw in
                    Result { () throws(AgentProtocolError) in try AgentRequest.decode(raw) }
                }.get()
                if case .subscribe = request {
                    payload.wipe()
                    serveSubscription(fd)
                    return
                }
                if case .answer(let id, let value) = request {
                    answer = settle(id, value, on: fd, requester: &requester).encoded()
                } else {
                    switch consent(to: request, on: fd, requester: &requester) {
                    case .success(let allowed): answer = core.respond(to: allowed, from: peer)
                    case .failure(let refusal): answer = AgentResponse.failure(refusal).encoded()
                    }
                }
            } catch .versionMismatch {
                answer = AgentResponse.versionMismatch()
            } catch {
                answer = AgentResponse.failure(.param("bad request: \(error)")).encoded()
            }
            defer { answer.wipe() }
            // The answer gets its own deadline: an unlock spends its time in the KDF.
            guard (try? SocketIO.writeFrame(fd, answer, until: SocketIO.monotonic() + connectionDeadline)) != nil else {
                return
            }
        }
    }
}

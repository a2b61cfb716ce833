import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// One connection to the vault's agent, kept open for many requests: the
/// hello (``AgentHello``) is made once, when the connection opens, and each
/// request after it is one exchange (a request frame, its answer frame).
///
/// A connection the agent closed meanwhile (it restarted, or closed the
/// connection after ``AgentServer/idleTimeout``) is opened again once,
/// transparently, but only while the request has not been wholly sent: a
/// request sent whole that gets no answer is ``AgentClientError/noAnswer(_:)``,
/// since the agent may have carried it out.
///
/// - Important: use it from one thread at a time (it is not `Sendable`); a
///   caller shared between threads serializes its requests (as
///   `AgentStore` does). ``subscribe(onEvent:onEnd:)`` opens a connection
///   of its own for the change feed.
public final class AgentConnection {
    /// The socket of the vault's agent.
    public let endpoint: AgentEndpoint
    /// How long one request may take, in seconds, connecting included (an unlock pays the KDF).
    public var timeout: Double
    private var fd: Int32 = -1
    /// When the connection last finished an exchange (monotonic seconds).
    private var lastUsed = 0.0
    /// How many times this instance opened a connection (and so made a hello).
    public private(set) var connectionsOpened = 0
    /// The process id of the client the requests are made for (the Secret
    /// Service provider's D-Bus client), or `nil`: while set, each item
    /// request goes as ``AgentRequest/forClient(pid:request:)``.
    public var clientPID: Int32?

    /// A connection left unused this long, in seconds, is opened afresh
    /// before the next request rather than risk the agent's idle close (60 s)
    /// crossing the request.
    static let reuseSeconds = 45.0

    /// Makes a connection object; the socket opens at the first request.
    /// - Parameters:
    ///   - endpoint: where the agent listens.
    ///   - timeout: seconds one request may take (default 120).
    public init(endpoint: AgentEndpoint, timeout: Double = 120) {
        self.endpoint = endpoint
        self.timeout = timeout
    }

    /// Whether a socket is open now (it may still have been closed by the agent).
    public var isOpen: Bool { fd >= 0 }

    /// The open socket, or `nil` (for tests that watch it close).
    var socketForTests: Int32? { fd >= 0 ? fd : nil }

    /// Closes the socket; the next request opens another.
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    deinit { close() }

    /// Connects and makes the hello, within `deadline`.
    private func open(until deadline: Double) throws(AgentClientError) {
        let socket = try AgentClient(endpoint: endpoint).connect()
        do {
            try SocketIO.writeFrame(socket, AgentHello.encoded(vault: endpoint.vault), until: deadline)
            try AgentHello.check(answer: SocketIO.readFrame(socket, until: deadline, limit: AgentHello.maxBytes))
        } catch let error as AgentClientError {
            Glibc.close(socket)
            throw error
        } catch {
            Glibc.close(socket)
            throw .io(AgentConnection.reason(error, timeout: timeout))
        }
        fd = socket
        connectionsOpened += 1
    }

    /// Sends `request` and returns the agent's answer.
    /// - Parameters:
    ///   - request: the request (its password or secret is wiped from the sent bytes).
    ///   - withSecrets: keep the secret of an `.items` answer.
    /// - Throws: ``AgentClientError``: `.noAnswer` when the whole request
    ///   was sent but no answer was read (the agent may have acted on it);
    ///   `.io` when it was not wholly sent; `.stopped`, `.unsafe`, `.protocolError`.
    public func send(_ request: AgentRequest, withSecrets: Bool = true) throws(AgentClientError) -> AgentResponse {
        try exchange(request) { raw throws(AgentProtocolError) in
            try AgentResponse.decode(raw, withSecrets: withSecrets)
        }
    }

    /// Sends `request` and hands each item of an `.items` answer to
    /// `eachItem` as it is decoded, in the answer's order, instead of
    /// collecting them: a listing of thousands of items never lives decoded
    /// all at once, and the answer's bytes are wiped and freed on return.
    /// - Parameters:
    ///   - request: as ``send(_:withSecrets:)``.
    ///   - withSecrets: keep the secret of each item.
    ///   - eachItem: called once per item, on this thread.
    /// - Returns: the answer; `.items([])` for items handed to `eachItem`.
    /// - Throws: as ``send(_:withSecrets:)``; `.protocolError` for an item
    ///   that does not decode (those before it were handed over).
    public func send(_ request: AgentRequest, withSecrets: Bool = true, eachItem: (Item) -> Void)
        throws(AgentClientError) -> AgentResponse
    {
        try withoutActuallyEscaping(eachItem) { handOver throws(AgentClientError) in
            try exchange(request) { raw throws(AgentProtocolError) in
                try AgentResponse.decode(raw, withSecrets: withSecrets, eachItem: handOver)
            }
        }
    }

    /// The items with these persistent IDs (``AgentRequest/getItems(ids:detail:)``),
    /// in the order asked; an ID no item has is left out.
    /// - Parameters:
    ///   - ids: persistent IDs (``Item/persistentID``), at most ``AgentProtocol/maxIDsPerRequest``.
    ///   - detail: how much of each item (``ItemDetail``).
    /// - Returns: the agent's answer: `.items`, or `.failure` with the
    ///   vault's error (`.interactionNotAllowed` while locked, `.param`).
    /// - Throws: as ``send(_:withSecrets:)``.
    public func get(ids: [UUID], detail: ItemDetail) throws(AgentClientError) -> AgentResponse {
        try send(.getItems(ids: ids, detail: detail), withSecrets: detail == .secret || detail == .secretOnly)
    }

    /// Sends `request` and decodes the answer's frame with `decode`.
    private func exchange(
        _ request: AgentRequest, decode: (UnsafeRawBufferPointer) throws(AgentProtocolError) -> AgentResponse
    ) throws(AgentClientError) -> AgentResponse {
        // Encoded before connecting: the agent gives a connection only a few
        // seconds to send its request, and a large import takes a while to encode.
        var message: [UInt8]
        if let clientPID, request.isItemOperation {
            message = AgentRequest.forClient(pid: clientPID, request: request).encoded()
        } else {
            message = request.encoded()
        }
        defer { message.wipe() }
        let deadline = SocketIO.monotonic() + timeout
        if fd >= 0 && (SocketIO.isStale(fd) || SocketIO.monotonic() - lastUsed > AgentConnection.reuseSeconds) {
            close()
        }
        var reopened = false
        while true {
            let reused = fd >= 0
            if !reused { try open(until: deadline) }
            do {
                // An agent reads a frame whole before it acts: one not wholly sent is never carried out.
                try SocketIO.writeFrame(fd, message, until: deadline)
            } catch {
                close()
                // The agent closed a connection kept open (it restarted): once more on a new one.
                if reused && !reopened && !AgentConnection.isTimeout(error) {
                    reopened = true
                    continue
                }
                throw .io(AgentConnection.reason(error, timeout: timeout))
            }
            return try answer(until: deadline, decode: decode)
        }
    }

    /// Reads and decodes the answer to a request sent whole.
    private func answer(
        until deadline: Double, decode: (UnsafeRawBufferPointer) throws(AgentProtocolError) -> AgentResponse
    ) throws(AgentClientError) -> AgentResponse {
        do {
            var answer = try SocketIO.readFrame(
                fd, until: deadline, limit: AgentProtocol.maxResponseBytes, wholeAtOnce: true)
            defer { answer.wipe() }
            let decoded = try answer.withUnsafeBytes { raw in
                Result { () throws(AgentProtocolError) in try decode(raw) }
            }.get()
            lastUsed = SocketIO.monotonic()
            return decoded
        } catch let error as AgentProtocolError {
            close()
            throw .protocolError(error)
        } catch SocketIO.Failure.tooLarge(let n) {
            close()
            throw .protocolError(.tooLarge(n))
        } catch {
            close()
            throw .noAnswer(AgentConnection.reason(error, timeout: timeout))
        }
    }

    private static func isTimeout(_ error: SocketIO.Failure) -> Bool {
        if case .timedOut = error { return true }
        return false
    }

    /// Why a socket call failed, in words.
    static func reason(_ error: any Error, timeout: Double) -> String {
        switch error as? SocketIO.Failure {
        case .closed?: return "the agent closed the connection"
        case .timedOut?: return "the agent did not answer within \(Int(timeout)) s"
        case .tooLarge(let n)?: return "an answer of \(n) bytes is over the limit"
        case .system(let code)?: return String(cString: strerror(code))
        case nil: return "\(error)"
        }
    }

    /// Subscribes to the agent's change feed (``AgentRequest/subscribe``) on
    /// a connection of its own: `onEvent` is called on a thread of its own
    /// for each ``AgentEvent``, in the order the agent published them, and
    /// `onEnd` once when the subscription ends (cancelled, the agent stopped
    /// or the connection failed).
    /// - Returns: the subscription; ``AgentSubscription/cancel()`` ends it.
    /// - Throws: ``AgentClientError``; `.io` when the agent refuses (too many subscribers).
    public func subscribe(
        onEvent: @escaping @Sendable (AgentEvent) -> Void, onEnd: @escaping @Sendable () -> Void = {}
    ) throws(AgentClientError) -> AgentSubscription {
        let feed = AgentConnection(endpoint: endpoint, timeout: timeout)
        guard case .ok = try feed.send(.subscribe) else {
            throw .io("the agent refused the subscription")
        }
        let fd = feed.fd
        feed.fd = -1
        let subscription = AgentSubscription(fd: fd)
        let started = DetachedThread.start {
            while let frame = try? SocketIO.readFrame(fd, until: .infinity, limit: AgentProtocol.maxMessageBytes) {
                let response = frame.withUnsafeBytes { raw in
                    Result { () throws(AgentProtocolError) in try AgentResponse.decode(raw) }
                }
                guard case .success(.event(let event)) = response else { break }
                onEvent(event)
            }
            subscription.finish()
            onEnd()
        }
        guard started else {
            subscription.finish()
            throw .io("subscribe: cannot start a thread")
        }
        return subscription
    }
}

@available(*, unavailable)
extension AgentConnection: Sendable {}

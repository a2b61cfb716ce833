import CLinux
import FobStore
import FobSystem
@preconcurrency import Glibc

/// A listening Unix stream socket of the agent process (its own socket or
/// its SSH agent socket): bound here with mode 0600 (through the umask) or
/// passed by a service manager, and accepting only connections from this
/// user (`SO_PEERCRED`). The descriptor is this object's until ``close()``.
final class UnixListener: @unchecked Sendable {
    /// The socket's path.
    let path: String
    /// Whether a service manager passed the socket (``adopt(_:)``): the
    /// socket file is then the service manager's, and stays at stop.
    private(set) var inherited = false
    private var descriptor: Int32 = -1

    /// A listener for `path`, not yet listening.
    init(path: String) { self.path = path }

    /// The address of the socket at `path`.
    /// - Parameter what: the socket's name in the error (`agent`, `SSH agent`).
    /// - Throws: `.param` when the path does not fit in `sun_path`.
    static func address(of path: String, what: String) throws(KeychainError) -> (sockaddr_un, socklen_t) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw .param("the \(what) socket path \(path) is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in bytes.enumerated() { raw[i] = b }
        }
        return (address, socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1))
    }

    /// Creates the socket, binds it to ``path`` with mode 0600 and listens.
    /// A file already at ``path`` is the caller's to remove first.
    /// - Parameters:
    ///   - backlog: the most connections waiting to be accepted.
    ///   - what: the socket's name in errors.
    /// - Throws: `.param` for a path too long; `.io` when it cannot listen.
    func bind(backlog: Int32, what: String) throws(KeychainError) {
        let fd = fob_unix_socket_cloexec()
        guard fd >= 0 else { throw .io("socket: \(String(cString: strerror(errno)))") }
        var address: sockaddr_un
        let length: socklen_t
        do {
            (address, length) = try UnixListener.address(of: path, what: what)
        } catch {
            Glibc.close(fd)
            throw error
        }
        let old = umask(0o177)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        umask(old)
        guard rc == 0, listen(fd, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw .io("cannot listen on \(path): \(reason)")
        }
        descriptor = fd
    }

    /// Takes the listening socket a service manager passed (``SocketActivation``).
    /// - Parameter fd: a listening Unix stream socket bound to ``path``.
    /// - Throws: `.param` naming what the descriptor is instead.
    func adopt(_ fd: Int32) throws(KeychainError) {
        try SocketActivation.checkListener(fd, boundTo: path)
        descriptor = fd
        inherited = true
    }

    /// Waits at most `milliseconds` for a connection to accept.
    func awaitConnection(milliseconds: Int32) -> Bool {
        var p = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) > 0
    }

    /// Accepts one connection (close-on-exec). One from another user is
    /// closed at once.
    /// - Returns: the connected socket and its peer's uid and pid, or `nil`.
    func accept() -> (fd: Int32, peer: (uid: uid_t, pid: pid_t))? {
        let client = fob_accept_cloexec(descriptor, nil, nil)
        guard client >= 0 else { return nil }
        guard let peer = SocketIO.peer(client), peer.uid == getuid() else {
            Glibc.close(client)
            return nil
        }
        return (client, peer)
    }

    /// Stops listening: closes the descriptor (the socket file stays).
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }
}

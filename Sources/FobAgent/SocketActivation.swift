import CLinux
import FobStore
@preconcurrency import Glibc

/// Listening sockets handed over by a service manager (socket activation),
/// with the semantics of systemd's `sd_listen_fds(3)`: the sockets are the
/// descriptors from ``firstDescriptor`` on, `LISTEN_FDS` gives their count,
/// and they are meant only for the process whose pid is `LISTEN_PID` (a
/// child that inherited the variables is not that process).
///
/// The check is done here rather than through libsystemd, so that `fob`
/// links no D-Bus library.
public enum SocketActivation {
    /// The first descriptor passed (`SD_LISTEN_FDS_START`).
    public static let firstDescriptor: Int32 = 3

    /// The variables of the protocol, removed by ``forget()``.
    static let variables = ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"]

    /// How many descriptors the service manager passed to the process `pid`.
    /// - Parameters:
    ///   - environment: reads `LISTEN_PID` and `LISTEN_FDS` (decimal).
    ///   - pid: this process's pid (`getpid()`).
    /// - Returns: the count, or 0 when none was passed to `pid`: a variable
    ///   missing or not a number, `LISTEN_PID` naming another process, or a
    ///   count that is not positive.
    public static func passedCount(environment: [String: String], pid: pid_t) -> Int {
        guard let listenPID = environment["LISTEN_PID"].flatMap({ pid_t($0) }), listenPID == pid,
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count > 0
        else { return 0 }
        return count
    }

    /// Removes the protocol's variables from this process's environment, so
    /// that no program it starts takes the sockets for its own.
    public static func forget() {
        for name in variables { unsetenv(name) }
    }

    /// Checks that `fd` is a listening Unix stream socket bound to `path`,
    /// and marks it close-on-exec.
    /// - Throws: `.param` naming what the descriptor is instead (another
    ///   kind of descriptor, not listening, or bound elsewhere).
    static func checkListener(_ fd: Int32, boundTo path: String) throws(KeychainError) {
        var type: Int32 = 0
        var listening: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 else {
            throw .param("descriptor \(fd) from the service manager is not a socket")
        }
        size = socklen_t(MemoryLayout<Int32>.size)
        guard type == Int32(SOCK_STREAM.rawValue), getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &size) == 0,
            listening == 1
        else {
            throw .param("descriptor \(fd) from the service manager is not a listening stream socket")
        }
        guard let bound = boundPath(fd), bound == path else {
            throw .param(
                "the service manager's socket \(boundPath(fd) ?? "(not a Unix socket)") is not this vault's, \(path): "
                    + "its unit serves the default vault only")
        }
        _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
    }

    /// The path a Unix socket is bound to, or nil for another family or an
    /// unnamed socket: which of the passed sockets (the agent's, the SSH
    /// agent's) a descriptor is.
    public static func boundPath(_ fd: Int32) -> String? {
        var address = sockaddr_un()
        var length = socklen_t(MemoryLayout<sockaddr_un>.size)
        let rc = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard rc == 0, address.sun_family == sa_family_t(AF_UNIX) else { return nil }
        let count = Int(length) - MemoryLayout<sa_family_t>.size
        guard count > 0 else { return nil }
        let bytes = withUnsafeBytes(of: &address.sun_path) { raw in Array(raw.prefix(count)) }
        let path = bytes.prefix { $0 != 0 }
        guard !path.isEmpty else { return nil }
        return String(decoding: path, as: UTF8.self)
    }
}

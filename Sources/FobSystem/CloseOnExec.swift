import CLinux
@preconcurrency import Glibc

/// Descriptors that are close-on-exec from the moment they exist.
///
/// Setting `FD_CLOEXEC` after `pipe()` or `accept()` leaves a window in
/// which another thread's `posix_spawn` hands the new descriptor to a child
/// (a clipboard helper that then keeps a pipe or the browser's socket open).
/// Every pipe and accepted socket in Fob comes from here (`pipe2(O_CLOEXEC)`,
/// `accept4(SOCK_CLOEXEC)`); sockets are made with `SOCK_CLOEXEC` and files
/// opened with `O_CLOEXEC` at their call sites.
public enum CloseOnExec {
    /// A pipe whose ends are close-on-exec (and non-blocking when asked) from the start.
    /// - Parameter nonBlocking: also `O_NONBLOCK` on both ends (self-pipes read from `poll`).
    /// - Returns: the read and write ends; the caller closes both.
    /// - Returns: `nil` with `errno` set (EMFILE, ENFILE) when `pipe2(2)` fails.
    public static func pipe(nonBlocking: Bool = false) -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [-1, -1]
        let flags = O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)
        guard pipe2(&fds, flags) == 0 else { return nil }
        return (fds[0], fds[1])
    }

    /// Accepts a connection on the listening socket `fd`; the new socket is
    /// close-on-exec from the start (`accept4(SOCK_CLOEXEC)`).
    /// - Returns: the connected socket, or -1 with `errno` set as by `accept(2)`.
    public static func accept(_ fd: Int32) -> Int32 {
        fob_accept_cloexec(fd, nil, nil)
    }
}

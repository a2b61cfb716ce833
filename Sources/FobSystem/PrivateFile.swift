@preconcurrency import Glibc

/// Creates or opens Fob's own small files next to the vault (the lock file,
/// the clipboard clearer's state file) without following a symbolic link
/// someone planted in their place.
///
/// Every open is `O_NOFOLLOW | O_CLOEXEC` with mode 0600, and refuses a
/// file that is not a regular file (a FIFO would block, a device would be
/// written to). Truncation, when asked for, happens only after these checks
/// (`ftruncate`, never `O_TRUNC`), so a link or device is never emptied.
public enum PrivateFile {
    /// Why a private file could not be opened.
    public struct OpenError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The `errno` value: `ELOOP` for a symbolic link, `EINVAL` for a
        /// file that is not a regular file, else what `open(2)` said.
        public let code: Int32
        /// The file's path.
        public let path: String
        /// `cannot open PATH: reason` (a symbolic link or other non-regular file is named as such).
        public var description: String {
            switch code {
            case ELOOP: return "cannot open \(path): it is a symbolic link"
            case EINVAL: return "cannot open \(path): not a regular file"
            default: return "cannot open \(path): \(String(cString: strerror(code)))"
            }
        }
    }

    /// Opens `path` for reading and writing, creating it with mode 0600 if
    /// it does not exist; never follows a symbolic link in its last component.
    /// - Parameters:
    ///   - path: the file.
    ///   - truncate: empty the file after it was checked.
    ///   - create: create the file if it is missing.
    /// - Returns: a descriptor (close-on-exec) the caller closes.
    /// - Throws: ``OpenError`` with `ELOOP` (a symbolic link), `EINVAL` (not
    ///   a regular file, such as a FIFO or device; opened without blocking),
    ///   `ENOENT` (missing and `create` is false) or another `open(2)` error.
    public static func open(_ path: String, truncate: Bool = false, create: Bool = true) throws(OpenError) -> Int32 {
        // O_NONBLOCK so that a FIFO in the file's place cannot block the open;
        // it is refused just below, and cleared for a regular file.
        var flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK
        if create { flags |= O_CREAT }
        var fd: Int32
        repeat { fd = Glibc.open(path, flags, 0o600) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw OpenError(code: errno, path: path) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw OpenError(code: code, path: path)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw OpenError(code: EINVAL, path: path)
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        // Only our own file is narrowed to 0600; another user's is left alone.
        if info.st_uid == geteuid() && info.st_mode & 0o7777 != 0o600 { fchmod(fd, 0o600) }
        if truncate && ftruncate(fd, 0) != 0 {
            let code = errno
            close(fd)
            throw OpenError(code: code, path: path)
        }
        return fd
    }
}

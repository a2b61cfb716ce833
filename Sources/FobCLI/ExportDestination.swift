import FobStore
import FobSystem
@preconcurrency import Glibc

/// Where `fob export` writes: standard output, a new file created 0600
/// with `O_EXCL`, or (with `--force` over an existing file) a new 0600 file
/// beside it that is renamed over it once everything is written. An
/// existing file is therefore never truncated in place: until the rename it
/// keeps its contents (and its other hard links always do), and a failed
/// export leaves it as it was.
struct ExportDestination {
    /// The descriptor to write to; `nil` to write through standard output.
    private(set) var fd: Int32?
    /// The file named by `--output`, if any.
    let path: String?
    /// The new file renamed over ``path`` by ``commit()``, if any.
    private var temporary: String?
    /// The file this run created (to remove when the export fails).
    private var created: String?
    private var closeOnEnd = false

    /// Opens the destination before the vault is unlocked, so that a path
    /// that cannot be written fails first.
    /// - Parameters:
    ///   - path: `--output`, or `nil` for standard output.
    ///   - force: whether an existing file may be replaced.
    ///   - standardOutput: the command's output.
    /// - Throws: ``CLIFailure`` for an existing file without `force`;
    ///   `KeychainError.io` when the file cannot be created or made 0600.
    init(path: String?, force: Bool, standardOutput: any ByteSink) throws {
        self.path = path
        guard let path else {
            fd = (standardOutput as? FileDescriptorSink)?.fd
            return
        }
        var info = stat()
        let exists = lstat(path, &info) == 0
        if exists && !force { throw CLIFailure("\(path) exists; not overwriting it without --force") }
        let type = info.st_mode & S_IFMT
        if exists && (type == S_IFCHR || type == S_IFIFO) {
            // A terminal or a pipe named on purpose (`--output /dev/tty --force`): written as a stream.
            fd = try Self.open(path, flags: O_WRONLY | O_CLOEXEC | O_NOCTTY)
            closeOnEnd = true
            return
        }
        let target = exists ? Self.temporaryName(beside: path) : path
        fd = try Self.open(target, flags: O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        closeOnEnd = true
        created = target
        if exists { temporary = target }
        guard fchmod(fd!, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            abandon()
            throw KeychainError.io("cannot make \(target) private (mode 0600): \(reason)")
        }
    }

    /// Flushes the file to disk and, for `--force` over an existing file,
    /// renames the new file over it.
    /// - Throws: `KeychainError.io` when `fsync` or `rename` fails (the
    ///   new file is removed and the old one kept).
    mutating func commit() throws {
        guard let fd, closeOnEnd else { return }
        if created != nil && fsync(fd) != 0 {
            throw KeychainError.io("cannot write \(path ?? ""): \(String(cString: strerror(errno)))")
        }
        if let temporary, let path, rename(temporary, path) != 0 {
            throw KeychainError.io("cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        created = nil
        temporary = nil
        close(fd)
        self.fd = nil
        closeOnEnd = false
    }

    /// Closes the file and removes what this run created and did not commit.
    mutating func abandon() {
        if let fd, closeOnEnd { close(fd) }
        fd = nil
        closeOnEnd = false
        if let created { unlink(created) }
        created = nil
        temporary = nil
    }

    private static func open(_ path: String, flags: Int32) throws -> Int32 {
        var fd: Int32
        repeat { fd = Glibc.open(path, flags, 0o600) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw KeychainError.io("cannot create \(path): \(String(cString: strerror(errno)))") }
        return fd
    }

    /// `.NAME.fob-export-RANDOM` in the directory of `path`.
    private static func temporaryName(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        return directory + "." + name + ".fob-export-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }
}

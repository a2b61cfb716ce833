import CLinux
import FoundationEssentials
@preconcurrency import Glibc

/// Starts child programs (clipboard helpers, `fob copy`'s detached clearer,
/// the programs tests run) with `posix_spawn`: an explicit environment,
/// every signal at its default and none blocked, only descriptors 0–2
/// inherited, optionally in a new session.
///
/// Foundation's `Process` on Linux (swift-corelibs-foundation) is not used
/// because it cannot do four of these things:
/// - it sets neither `POSIX_SPAWN_SETSIGDEF` nor `POSIX_SPAWN_SETSIGMASK`,
///   so a signal this process ignores (SIGPIPE) stays ignored in the child;
///   a helper that keeps running (xclip owning the selection) must obey
///   SIGTERM and SIGPIPE like any other program;
/// - it cannot start a new session: it only puts the child in a new process
///   group (`POSIX_SPAWN_SETPGROUP`), which also makes the child a group
///   leader, so the clearer's own `setsid()` then fails with EPERM;
/// - the child inherits one more descriptor, the socket `Process` watches to
///   learn that the child ended, so a helper's long-lived forked child keeps
///   it open, and `waitUntilExit()` blocks until that child ends too;
/// - it does not retry a spawn that fails with ETXTBSY (a program just
///   written whose descriptor another thread's child briefly holds).
///
/// - Important: secrets go to a child only through a pipe on its standard
///   input (see ``makePipe()`` and ``FileDescriptorIO/writeAll(_:to:)``), never in its
///   arguments or environment, which other users can read in `/proc`.
public enum ChildProcessSpawner {
    /// Where one of the child's standard streams (0, 1 or 2) comes from.
    public enum Stream: Sendable, Equatable {
        /// A copy (`dup2`) of one of this process's descriptors, such as a
        /// pipe's end. The streams are set in the order 0, 1, 2, so
        /// `.descriptor(0)` for standard output is the child's new stdin.
        case descriptor(Int32)
        /// A file the child opens, with `open(2)` flags such as `O_WRONLY`.
        case file(String, flags: Int32)
        /// `/dev/null`, opened for reading on stdin and for writing on 1 and 2.
        case null
    }

    /// A failure to make a pipe or start a child; ``code`` is the `errno` value.
    public struct SpawnError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The `errno` value, such as `ENOENT` or `EACCES`.
        public let code: Int32
        /// What failed (`pipe`, `posix_spawn`).
        public let operation: String
        /// The system's text for ``code`` (`strerror`).
        public var reason: String { String(cString: strerror(code)) }
        /// `operation: reason`.
        public var description: String { "\(operation): \(reason)" }
    }

    /// How many times a spawn failing with ETXTBSY is retried, 10 ms apart.
    private static let busyRetries = 50

    /// Makes a pipe whose two ends are close-on-exec from the start
    /// (`pipe2(O_CLOEXEC)`, so no child started meanwhile by another thread
    /// inherits them except as the stream it is given).
    /// - Returns: the read and write descriptors; the caller closes both.
    /// - Throws: ``SpawnError`` with the `errno` of `pipe2(2)` (EMFILE, ENFILE).
    public static func makePipe() throws(SpawnError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard fob_pipe_cloexec(&fds) == 0 else { throw SpawnError(code: errno, operation: "pipe2") }
        return (fds[0], fds[1])
    }

    /// Starts `executable` and returns at once; the caller waits for it
    /// (`waitpid`) unless it is meant to outlive this process.
    ///
    /// The child gets exactly `environment`, every signal at its default
    /// disposition and an empty signal mask (threads of this process may
    /// block signals), and no descriptor above 2 (with glibc 2.34 or later;
    /// before that, only those not marked close-on-exec leak).
    /// - Parameters:
    ///   - executable: an absolute path (`PATH` is not searched).
    ///   - arguments: the arguments after the program name (never a secret).
    ///   - environment: the child's complete environment (never a secret).
    ///   - standardInput: the child's descriptor 0.
    ///   - standardOutput: the child's descriptor 1.
    ///   - standardError: the child's descriptor 2.
    ///   - newSession: start the child in a new session (`POSIX_SPAWN_SETSID`):
    ///     no controlling terminal, and no hangup when this terminal closes.
    /// - Returns: the child's process id.
    /// - Throws: ``SpawnError`` with the `posix_spawn` error (ENOENT, EACCES,
    ///   ENOEXEC, ETXTBSY after retrying for half a second, ENOMEM).
    public static func spawn(
        executable: String, arguments: [String], environment: [String: String],
        standardInput: Stream, standardOutput: Stream, standardError: Stream,
        newSession: Bool = false
    ) throws(SpawnError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [standardInput, standardOutput, standardError].enumerated() {
            let fd = Int32(target)
            switch stream {
            case .descriptor(let source):
                posix_spawn_file_actions_adddup2(&actions, source, fd)
            case .file(let path, let flags):
                posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0)
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        // After the streams: the descriptors they were copied from go too.
        _ = closeFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        var none = sigset_t()
        sigfillset(&all)
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        if newSession { flags |= setSID }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        var rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        var attempts = 0
        while rc == ETXTBSY && attempts < busyRetries {
            attempts += 1
            usleep(10_000)
            rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        }
        guard rc == 0 else { throw SpawnError(code: rc, operation: "posix_spawn \(executable)") }
        return pid
    }

    /// The exit status of a `waitpid` status word: the program's exit code,
    /// or 128 + the signal number when a signal ended it (as shells report).
    /// - Parameter status: the status `waitpid` stored.
    public static func exitCode(waitStatus status: Int32) -> Int32 {
        let signal = status & 0x7f
        return signal != 0 ? 128 + signal : (status >> 8) & 0xff
    }

    /// glibc's `POSIX_SPAWN_SETSID` (2.26+; a GNU extension Swift does not see).
    private static let setSID: Int32 = 0x80

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the
    /// Glibc module does not show; looked up once with `dlsym`.
    private static let closeFrom: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()
}

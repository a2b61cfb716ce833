import CLinux
import FoundationEssentials
@preconcurrency import Glibc

/// Why a requester could not be named.
public enum RequesterError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `SO_PEERCRED` or the pidfd failed: the `errno`.
    case noCredentials(Int32)
    /// The process ended (or its pid was reused) while it was being read.
    case gone(Int32)

    public var description: String {
        switch self {
        case .noCredentials(let code): return "cannot identify the peer: \(String(cString: strerror(code)))"
        case .gone(let pid): return "process \(pid) ended while it was being identified"
        }
    }
}

/// The fields of `/proc/PID/stat` a requester needs (proc(5)).
public struct ProcStat: Sendable, Equatable {
    /// Field 2 without its parentheses: the kernel's 15-byte name.
    public var comm: String
    /// Field 4.
    public var parent: Int32
    /// Field 6: the session leader's pid.
    public var session: Int32
    /// Field 7: the controlling terminal's device number (0: none).
    public var terminalDevice: UInt32
    /// Field 22: the start time in clock ticks after boot.
    public var startTime: UInt64

    /// Parses the file's text. `comm` may hold spaces and parentheses, so
    /// the fields after it are counted from the last `)`.
    /// - Returns: `nil` for anything that is not such a line.
    public static func parse(_ bytes: [UInt8]) -> ProcStat? {
        guard let open = bytes.firstIndex(of: UInt8(ascii: "(")),
            let close = bytes.lastIndex(of: UInt8(ascii: ")")), open < close
        else { return nil }
        let comm = String(decoding: bytes[(open + 1)..<close], as: UTF8.self)
        let rest = bytes[(close + 1)...].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
        // rest[0] is field 3 (state); field n is rest[n - 3].
        guard rest.count >= 20 else { return nil }
        func number<T: FixedWidthInteger>(_ field: Int, _: T.Type) -> T? {
            T(String(decoding: rest[field - 3], as: UTF8.self))
        }
        guard let parent = number(4, Int32.self), let session = number(6, Int32.self),
            let tty = number(7, Int64.self), let start = number(22, UInt64.self)
        else { return nil }
        return ProcStat(
            comm: comm, parent: parent, session: session, terminalDevice: UInt32(truncatingIfNeeded: tty),
            startTime: start)
    }
}

/// Reads who a process is from `/proc` (proc(5)) and checks, through a
/// pidfd, that the pid still named the same process afterwards.
public enum ProcessInspector {
    /// Names the process at the other end of a connected Unix socket.
    ///
    /// The pidfd comes from `SO_PEERPIDFD` (else `pidfd_open` of the
    /// `SO_PEERCRED` pid); `/proc/PID` is read, then the pidfd is polled: a
    /// process that ended meanwhile (whose pid may now be another's) is
    /// `.gone`. When the peer is one of Fob's own programs
    /// (``FobPrograms/contains(_:identity:)``), the requester is its parent,
    /// read the same way, and ``Requester/via`` names the peer; a shell
    /// that only started the peer (``behindLaunchers(_:started:)``) is
    /// passed over for the program that ran it.
    /// - Parameters:
    ///   - socket: a connected `AF_UNIX` socket.
    ///   - fob: Fob's own executables.
    /// - Throws: `.noCredentials`, `.gone`.
    public static func requester(onSocket socket: Int32, fob: FobPrograms) throws(RequesterError) -> Requester {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard fob_peer_credentials(socket, &uid, &pid) == 0 else { throw .noCredentials(errno) }
        var pidfd = fob_peer_pidfd(socket)
        if pidfd < 0 { pidfd = fob_pidfd_open(pid) }
        guard pidfd >= 0 else { throw errno == ESRCH ? .gone(pid) : .noCredentials(errno) }
        defer { close(pidfd) }
        let peer = try read(pid: pid, uid: uid, pidfd: pidfd)
        let isFob =
            fob.contains(peer.executable, identity: peer.identity)
            // What was read of its file must still be this process's.
            || (fob.containsReplaced(peer.executable, pid: pid) && stillRunning(pidfd))
        guard isFob, let parent = peer.parents.first else { return peer }
        let via = ProcessSummary(
            pid: peer.pid, executable: peer.executable, name: peer.programName, arguments: peer.arguments)
        return behindLaunchers(try requester(pid: parent.pid, forwardedBy: via), started: peer.arguments)
    }

    /// `requester`, or, while it is a shell that only started the program
    /// with arguments `started` (``ShellLauncher``: `sh -c 'git-credential-fob
    /// get'`), the program that ran that shell, read the same way. A shell
    /// whose parent is pid 1, or cannot be read, stays the requester.
    /// - Parameters:
    ///   - requester: the program that ran Fob's, with ``Requester/via`` set.
    ///   - started: the `argv` of Fob's program.
    public static func behindLaunchers(_ requester: Requester, started: [String]) -> Requester {
        var current = requester
        var child = started
        for _ in 0..<4 {
            guard ShellLauncher.onlyStarts(child, shell: current.arguments), let parent = current.parents.first,
                parent.pid > 1, let via = current.via,
                let next = try? self.requester(pid: parent.pid, forwardedBy: via)
            else { break }
            child = current.arguments
            current = next
        }
        return current
    }

    /// Names a process by its pid, as a peer that is Fob's own program
    /// passes it on (the parent of `fob get`, or the D-Bus sender the
    /// Secret Service provider saw).
    /// - Parameters:
    ///   - pid: the process.
    ///   - via: Fob's process that passed it on.
    /// - Throws: `.gone` when it ended; `.noCredentials` when it cannot be read.
    public static func requester(pid: Int32, forwardedBy via: Requester) throws(RequesterError) -> Requester {
        try requester(
            pid: pid,
            forwardedBy: ProcessSummary(
                pid: via.pid, executable: via.executable, name: via.programName, arguments: via.arguments))
    }

    /// As ``requester(pid:forwardedBy:)-(_,Requester)``, with Fob's process as
    /// a parent chain shows it (``Requester/via`` of the peer's requester).
    /// - Throws: `.gone` when it ended; `.noCredentials` when it cannot be read.
    public static func requester(pid: Int32, forwardedBy via: ProcessSummary) throws(RequesterError) -> Requester {
        let pidfd = fob_pidfd_open(pid)
        guard pidfd >= 0 else { throw errno == ESRCH ? .gone(pid) : .noCredentials(errno) }
        defer { close(pidfd) }
        var status = stat()
        guard stat("/proc/\(pid)", &status) == 0 else { throw .gone(pid) }
        var requester = try read(pid: pid, uid: status.st_uid, pidfd: pidfd)
        requester.via = via
        return requester
    }

    /// Reads one process, then checks that its pidfd says it still runs.
    private static func read(pid: Int32, uid: UInt32, pidfd: Int32) throws(RequesterError) -> Requester {
        let base = "/proc/\(pid)"
        guard let statBytes = FileDescriptorIO.readFile(atPath: base + "/stat", limit: 4096),
            let stat = ProcStat.parse(statBytes)
        else { throw .gone(pid) }
        let executable = link(base + "/exe") ?? ""
        let arguments = self.arguments(of: pid)
        let cgroup = Self.cgroup(of: pid)
        let requester = Requester(
            pid: pid, uid: uid, executable: executable, identity: identity(ofFile: base + "/exe"),
            arguments: arguments, workingDirectory: link(base + "/cwd") ?? "",
            parents: parents(of: stat, pid: pid), terminal: terminalPath(stat.terminalDevice), cgroup: cgroup,
            systemdUnit: systemdUnit(inCgroup: cgroup), flatpakAppID: flatpakAppID(of: pid))
        // Still running: so everything read above was this process's.
        guard stillRunning(pidfd) else { throw .gone(pid) }
        return requester
    }

    /// Whether the process of `pidfd` has not ended (its pid is not yet another's).
    static func stillRunning(_ pidfd: Int32) -> Bool {
        var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) == 0
    }

    /// Whether `pid` is in the agent's own mount namespace (`/proc/PID/ns/mnt`
    /// is the same namespace as `/proc/self/ns/mnt`); `false` when unreadable.
    static func sharesMountNamespace(_ pid: Int32) -> Bool {
        var theirs = stat()
        var ours = stat()
        guard stat("/proc/\(pid)/ns/mnt", &theirs) == 0, stat("/proc/self/ns/mnt", &ours) == 0 else { return false }
        return theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev
    }

    /// The target of a symbolic link in `/proc`.
    static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, Int(PATH_MAX))
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The identity of the file at `path` (followed: `/proc/PID/exe` gives the running file).
    public static func identity(ofFile path: String) -> ExecutableIdentity? {
        var st = Glibc.stat()
        guard stat(path, &st) == 0 else { return nil }
        return ExecutableIdentity(
            device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: UInt64(st.st_size),
            modifiedNanoseconds: Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec),
            owner: st.st_uid)
    }

    /// `argv`, bounded by ``Requester/maxArguments`` and ``Requester/maxArgumentBytes``.
    static func arguments(of pid: Int32) -> [String] {
        guard let bytes = FileDescriptorIO.readFile(atPath: "/proc/\(pid)/cmdline", limit: 16_384) else { return [] }
        return bytes.split(separator: 0, omittingEmptySubsequences: false).prefix(Requester.maxArguments)
            .map { String(decoding: $0.prefix(Requester.maxArgumentBytes), as: UTF8.self) }
            .filter { !$0.isEmpty }
    }

    /// The parents of a process, nearest first, up to its session leader
    /// (included), pid 1, or ``Requester/maxParents``. A process that leads
    /// its own session still names its direct parent (the program that
    /// started it, which Fob's own commands answer for).
    static func parents(of stat: ProcStat, pid: Int32) -> [ProcessSummary] {
        var chain: [ProcessSummary] = []
        var current = stat
        var leaderReached = false
        while chain.count < Requester.maxParents, !leaderReached, current.parent > 0 {
            let parent = current.parent
            guard let bytes = FileDescriptorIO.readFile(atPath: "/proc/\(parent)/stat", limit: 4096),
                let next = ProcStat.parse(bytes)
            else { break }
            let name = arguments(of: parent).first.map { String($0.split(separator: "/").last ?? "") } ?? next.comm
            // A parent's executable is not read: rules match the requester's
            // own, and prompts and the record name parents by name and pid.
            chain.append(ProcessSummary(pid: parent, executable: "", name: name.isEmpty ? next.comm : name))
            current = next
            leaderReached = parent == stat.session || pid == stat.session
            if parent == 1 { break }
        }
        return chain
    }

    /// The device file of a terminal's device number: a pseudo-terminal
    /// (majors 136–143) is `/dev/pts/N`, a virtual console (major 4,
    /// minors below 64) `/dev/ttyN`; checked against the file's own number.
    static func terminalPath(_ device: UInt32) -> String? {
        guard device != 0 else { return nil }
        let major = (device >> 8) & 0xFFF
        let minor = (device & 0xFF) | ((device >> 12) & 0xFFF00)
        let path: String
        switch major {
        case 136...143: path = "/dev/pts/\((major - 136) * 256 + minor)"
        case 4 where minor < 64: path = "/dev/tty\(minor)"
        default: return "tty(\(major),\(minor))"
        }
        var st = stat()
        guard stat(path, &st) == 0, UInt32(truncatingIfNeeded: st.st_rdev) & 0xFFFFF == device & 0xFFFFF else {
            return "tty(\(major),\(minor))"
        }
        return path
    }

    /// The cgroup path of `pid`, from `/proc/PID/cgroup` (``cgroup(procFile:)``).
    static func cgroup(of pid: Int32) -> String {
        guard let bytes = FileDescriptorIO.readFile(atPath: "/proc/\(pid)/cgroup", limit: 4096) else { return "" }
        return cgroup(procFile: bytes)
    }

    /// The cgroup path systemd keeps a process in, from the bytes of
    /// `/proc/PID/cgroup` (lines `ID:CONTROLLERS:PATH`): the unified
    /// hierarchy's line (`0::PATH`) unless it is missing or `/`, as on a
    /// host with only cgroup v1 hierarchies, where systemd's own
    /// `name=systemd` line holds the path; `""` when neither is present.
    public static func cgroup(procFile bytes: [UInt8]) -> String {
        var unified: String?
        var named: String?
        for raw in bytes.split(separator: UInt8(ascii: "\n")) {
            let fields = raw.split(separator: UInt8(ascii: ":"), maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else { continue }
            let path = String(decoding: fields[2], as: UTF8.self)
            if fields[0].elementsEqual("0".utf8), fields[1].isEmpty {
                unified = path
            } else if fields[1].elementsEqual("name=systemd".utf8) {
                named = path
            }
        }
        if let unified, unified != "/" { return unified }
        return named ?? unified ?? ""
    }

    /// The innermost `.service` or `.scope` of a cgroup path, if any.
    public static func systemdUnit(inCgroup path: String) -> String? {
        path.split(separator: "/").reversed().first { $0.hasSuffix(".service") || $0.hasSuffix(".scope") }
            .map(String.init)
    }

    /// `name=` of the `[Application]` group of `/proc/PID/root/.flatpak-info`.
    static func flatpakAppID(of pid: Int32) -> String? {
        guard let bytes = FileDescriptorIO.readFile(atPath: "/proc/\(pid)/root/.flatpak-info", limit: 65_536) else {
            return nil
        }
        return flatpakAppID(info: bytes)
    }

    /// `name=` of the `[Application]` group of a `.flatpak-info` key file.
    public static func flatpakAppID(info bytes: [UInt8]) -> String? {
        var inApplication = false
        for raw in bytes.split(separator: UInt8(ascii: "\n")) {
            let line = String(decoding: raw, as: UTF8.self)
            if line.hasPrefix("[") {
                inApplication = line == "[Application]"
            } else if inApplication, line.hasPrefix("name=") {
                let name = String(line.dropFirst(5))
                return name.isEmpty ? nil : name
            }
        }
        return nil
    }
}

/// Fob's own executables: the agent's (the `fob` that runs it) and the
/// helpers installed beside it (`fob-secret-service`, …). A request from
/// one of them is made for the program that ran it.
///
/// A peer is Fob's when the file it runs is the agent's own file (same
/// device and inode, even if that file was since removed or replaced), or
/// is the file now installed at the agent's path or at a helper's path
/// beside it: an upgrade that replaces `fob` while the agent runs leaves
/// the new `fob` recognised. The path alone is never enough: the running
/// file's device and inode (from `/proc/PID/exe`) must be those of the file
/// at that path as the agent sees it, so a program that only shows that path
/// (another file bind-mounted there in a mount namespace of its own, which
/// `/proc/PID/exe` names by the path it has there) is not Fob. Trust in an
/// upgraded file is trust in the directory: whoever may write there may put
/// any program there, as they may put any helper. A program still running a
/// file removed before this agent started is Fob's on that same trust, with
/// the checks of ``containsReplaced(_:pid:)``.
public struct FobPrograms: Sendable {
    /// The agent's executable and its identity.
    public var own: (path: String, identity: ExecutableIdentity?)
    /// The directory of the agent's executable, where its helpers are.
    public var directory: String
    /// The identities of the helpers (`fob-…`) in ``directory`` when this
    /// was made: a helper that still runs a file an upgrade since replaced
    /// (its path now ends in ` (deleted)`) is still Fob's.
    public var helpers: [ExecutableIdentity]

    /// - Parameter executable: the agent's executable (`/proc/self/exe` when
    ///   `nil`); the ` (deleted)` the kernel adds to a removed file's path is
    ///   dropped, so an agent whose file was replaced still knows where Fob is
    ///   installed.
    public init(executable: String? = nil) {
        var path = executable ?? ProcessInspector.link("/proc/self/exe") ?? ""
        if path.hasSuffix(Requester.deletedSuffix) { path.removeLast(Requester.deletedSuffix.count) }
        own = (path, ProcessInspector.identity(ofFile: executable ?? "/proc/self/exe"))
        directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        helpers = FobPrograms.helperIdentities(in: directory)
    }

    /// The identity of every `fob-…` file in `directory`.
    static func helperIdentities(in directory: String) -> [ExecutableIdentity] {
        guard !directory.isEmpty, let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var found: [ExecutableIdentity] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name.hasPrefix("fob-"), let identity = ProcessInspector.identity(ofFile: directory + "/" + name)
            else { continue }
            found.append(identity)
        }
        return found
    }

    /// Whether the peer running `path` (its `/proc/PID/exe`) with `identity`
    /// (that file's) is Fob's: the agent's own file or a helper's as they
    /// were when this was made, or the file installed now at the agent's
    /// path or at a helper's (``isHelper(_:)``).
    public func contains(_ path: String, identity: ExecutableIdentity?) -> Bool {
        guard let identity else { return false }
        func same(_ other: ExecutableIdentity?) -> Bool {
            other.map { $0.device == identity.device && $0.inode == identity.inode } ?? false
        }
        // A file seen at start must be unchanged too: once it is removed, its
        // inode number may be given to another file, which is not Fob.
        func unchanged(_ other: ExecutableIdentity?) -> Bool {
            other.map {
                same($0) && $0.size == identity.size && $0.modifiedNanoseconds == identity.modifiedNanoseconds
            } ?? false
        }
        if unchanged(own.identity) || helpers.contains(where: unchanged) { return true }
        guard !own.path.isEmpty, path == own.path || isHelper(path) else { return false }
        return same(ProcessInspector.identity(ofFile: path))
    }

    /// Whether the peer `pid`, whose file was removed after it started
    /// (`path`, its `/proc/PID/exe`, ends in ` (deleted)`), ran Fob's: a
    /// terminal UI or helper started before an upgrade replaced Fob and the
    /// agent restarted, so this agent never saw that file. Each of these,
    /// read by the agent, must hold:
    /// - the path before ` (deleted)` is the agent's own or a helper's;
    /// - the process is in the agent's mount namespace, so the path it
    ///   started from named the same file for the agent (a file
    ///   bind-mounted over Fob's path in a namespace of its own, then
    ///   removed, shows the same text and is refused);
    /// - the file it runs has no name left (link count 0);
    /// - that file has the owner and device of the file installed now at
    ///   the path, as a package upgrade leaves them.
    /// The file was then at Fob's path, as the agent sees it, when the
    /// program started: put there by whoever may write Fob's directory,
    /// whom ``contains(_:identity:)`` trusts already for the file there now.
    /// The caller checks afterwards that `pid` still names the same process.
    public func containsReplaced(_ path: String, pid: Int32) -> Bool {
        guard !own.path.isEmpty, path.hasSuffix(Requester.deletedSuffix) else { return false }
        let original = String(path.dropLast(Requester.deletedSuffix.count))
        guard original == own.path || isHelper(original), let installed = ProcessInspector.identity(ofFile: original)
        else { return false }
        var running = stat()
        guard stat("/proc/\(pid)/exe", &running) == 0, running.st_nlink == 0, running.st_uid == installed.owner,
            UInt64(running.st_dev) == installed.device
        else { return false }
        return ProcessInspector.sharesMountNamespace(pid)
    }

    /// Whether `path` names one of Fob's helpers (`fob-…` beside the agent's
    /// executable); ``contains(_:identity:)`` also checks the file that runs.
    public func isHelper(_ path: String) -> Bool {
        guard !directory.isEmpty, path.hasPrefix(directory + "/") else { return false }
        let name = path.dropFirst(directory.count + 1)
        return name.hasPrefix("fob-") && !name.contains("/") && !name.hasSuffix(Requester.deletedSuffix)
    }

    /// Whether `path` is the Secret Service provider beside the agent, the
    /// one peer whose forwarded D-Bus sender pid is believed; it may be the
    /// provider's file an upgrade replaced (` (deleted)`), which only a peer
    /// ``contains(_:identity:)`` accepted can show.
    public func isSecretServiceProvider(_ path: String) -> Bool {
        let provider = directory + "/fob-secret-service"
        return path == provider || path == provider + Requester.deletedSuffix
    }
}

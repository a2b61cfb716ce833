import FoundationEssentials

/// What identifies an executable file on this machine: the file's device
/// and inode, its size and modification time, and its owner. A program
/// replaced on disk (a new file, or the same file rewritten) has another
/// identity, so a rule that trusts one identity asks again.
public struct ExecutableIdentity: Sendable, Equatable, Hashable {
    /// `st_dev` of the file.
    public var device: UInt64
    /// `st_ino` of the file.
    public var inode: UInt64
    /// `st_size`, in bytes.
    public var size: UInt64
    /// `st_mtim`, in nanoseconds since the epoch.
    public var modifiedNanoseconds: Int64
    /// `st_uid`: 0 for a program installed by root, which no process of the
    /// user can replace.
    public var owner: UInt32

    /// - Parameters: as the properties.
    public init(device: UInt64, inode: UInt64, size: UInt64, modifiedNanoseconds: Int64, owner: UInt32) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.owner = owner
    }
}

/// One process of a requester's parent chain, as `/proc` showed it.
public struct ProcessSummary: Sendable, Equatable {
    /// The process id.
    public var pid: Int32
    /// The executable's path (`/proc/PID/exe`), `""` when it could not be read
    /// (a kernel thread, or a process of another user) and for a requester's
    /// parents, whose executables are not read (they are named by ``name``).
    public var executable: String
    /// The program's own name for itself (`argv[0]`, else the kernel's `comm`).
    public var name: String
    /// Its `argv`, kept for Fob's own process in ``Requester/via`` (whose
    /// subcommand names the channel); empty for parents.
    public var arguments: [String]

    /// - Parameters: as the properties.
    public init(pid: Int32, executable: String, name: String, arguments: [String] = []) {
        self.pid = pid
        self.executable = executable
        self.name = name
        self.arguments = arguments
    }
}

/// Who asks the agent for an item: the program at the other end of its
/// socket, or, when that program is Fob's own command line or one of its
/// helpers, the program that ran it (``via`` then names Fob's process).
///
/// Everything here is read by the agent from the kernel (`SO_PEERCRED`,
/// a pidfd, `/proc`), never taken from the client's words, and checked
/// against the pidfd after reading, so a pid reused while it was read is
/// refused rather than misnamed.
///
/// - Important: this is consent, not isolation. A process of the same user
///   can in principle act as another (ptrace, `LD_PRELOAD`, writing to its
///   memory). The identity is strong only for a Flatpak app id, a systemd
///   system service, and an executable owned by root and unchanged since
///   approval (``isStrong``).
public struct Requester: Sendable, Equatable {
    /// The requesting process's id.
    public var pid: Int32
    /// Its real uid.
    public var uid: UInt32
    /// Its executable's path (`/proc/PID/exe`; ` (deleted)` when the file
    /// was removed after the program started).
    public var executable: String
    /// The executable's identity (device, inode, size, time, owner), read
    /// through `/proc/PID/exe`, so it is the file that runs, not the one now
    /// at its path; `nil` when it could not be read.
    public var identity: ExecutableIdentity?
    /// `argv` (at most ``Requester/maxArguments`` arguments of at most
    /// ``Requester/maxArgumentBytes`` bytes each); for display and rules, never secrets.
    public var arguments: [String]
    /// The working directory, `""` when unknown.
    public var workingDirectory: String
    /// The parents, nearest first, up to the session leader (included) or
    /// ``Requester/maxParents``.
    public var parents: [ProcessSummary]
    /// The controlling terminal (`/dev/pts/3`), `nil` when it has none: a
    /// request from a service, a desktop program or a forwarded session.
    public var terminal: String?
    /// The cgroup path (`/user.slice/…/app.slice/foo.service`), `""` when unknown.
    public var cgroup: String
    /// The systemd unit that runs it (`foo.service`, `app-…scope`), from the cgroup.
    public var systemdUnit: String?
    /// The Flatpak application id, from `/proc/PID/root/.flatpak-info`.
    public var flatpakAppID: String?
    /// Fob's own process that passed the request on (`fob get`, a git or
    /// docker helper, the Secret Service provider), when the requester is
    /// the program behind it; `nil` when the peer itself asks.
    public var via: ProcessSummary?

    /// At most this many arguments are kept.
    public static let maxArguments = 64
    /// Each argument is cut at this many bytes.
    public static let maxArgumentBytes = 256
    /// At most this many parents are read: as many as the access log keeps
    /// (prompts show 4).
    public static let maxParents = 8

    /// - Parameters: as the properties.
    public init(
        pid: Int32, uid: UInt32, executable: String, identity: ExecutableIdentity?, arguments: [String] = [],
        workingDirectory: String = "", parents: [ProcessSummary] = [], terminal: String? = nil, cgroup: String = "",
        systemdUnit: String? = nil, flatpakAppID: String? = nil, via: ProcessSummary? = nil
    ) {
        self.pid = pid
        self.uid = uid
        self.executable = executable
        self.identity = identity
        self.arguments = arguments
        self.workingDirectory = workingDirectory
        self.parents = parents
        self.terminal = terminal
        self.cgroup = cgroup
        self.systemdUnit = systemdUnit
        self.flatpakAppID = flatpakAppID
        self.via = via
    }

    /// Whether the identity is one another process of this user cannot put
    /// on: a Flatpak app (the sandbox says who it is), a process of a
    /// systemd system service (``isSystemService``), or an executable owned
    /// by root (the user cannot replace it).
    public var isStrong: Bool { flatpakAppID != nil || isSystemService || identity?.owner == 0 }

    /// Whether the process runs in a service of systemd's system manager
    /// (`/system.slice/backup.service`, a unit root defined): only root may
    /// move a process into its cgroup, so no other process of the user can
    /// be in it. A unit of the user's own manager (under
    /// `user@UID.service`, which the user defines and may start at will)
    /// and a login session's scope are not.
    public var isSystemService: Bool {
        guard let unit = systemdUnit, unit.hasSuffix(".service"), !unit.hasPrefix("user@") else { return false }
        let parts = cgroup.split(separator: "/")
        guard let index = parts.lastIndex(where: { $0 == unit }) else { return false }
        return !parts[..<index].contains { $0.hasPrefix("user@") && $0.hasSuffix(".service") }
    }

    /// The program's name for people: the executable's last path component.
    public var programName: String {
        let path = executable.hasSuffix(Requester.deletedSuffix) ? String(executable.dropLast(10)) : executable
        return path.split(separator: "/").last.map(String.init) ?? path
    }

    /// ` (deleted)`, which the kernel adds to `/proc/PID/exe` of a removed file.
    static let deletedSuffix = " (deleted)"

    /// The parent chain for a prompt, shortened: at most `limit` names,
    /// nearest first (`bash ← tmux: server ← systemd`), with `…` when cut.
    public func chain(limit: Int = 4) -> String {
        var names = parents.prefix(limit).map { "\($0.name)[\($0.pid)]" }
        if parents.count > limit { names.append("…") }
        return names.joined(separator: " ← ")
    }

    /// One line for a prompt or a record: `git[1234] /usr/bin/git (via fob[1240]) on /dev/pts/3`.
    public var summary: String {
        var line = "\(programName)[\(pid)] \(displaySafeText(executable))"
        if let via { line += " (via \(via.name)[\(via.pid)])" }
        if let flatpakAppID { line += " flatpak \(displaySafeText(flatpakAppID))" }
        if let systemdUnit { line += " unit \(displaySafeText(systemdUnit))" }
        line += terminal.map { " on \($0)" } ?? " with no terminal"
        return line
    }
}

/// `text` with control characters written as `\u{…}`, so that a program's
/// chosen name cannot move the cursor of the terminal a prompt is shown on.
func displaySafeText(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        let v = scalar.value
        if v < 0x20 || (v >= 0x7F && v < 0xA0) {
            out += "\\u{" + String(v, radix: 16, uppercase: true) + "}"
        } else {
            out.unicodeScalars.append(scalar)
        }
    }
    return out
}

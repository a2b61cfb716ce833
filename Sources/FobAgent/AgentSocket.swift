import CLinux
import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// Where the agent of a vault listens, and the checks on that place.
public struct AgentEndpoint: Sendable, Equatable {
    /// The vault's canonical path (symbolic links resolved).
    public let vault: String
    /// The directory of sockets: `$XDG_RUNTIME_DIR/fob`; without it
    /// `${TMPDIR:-/tmp}/fob-UID`, unless another user made that first (or it
    /// is not a directory): then `${XDG_STATE_HOME:-$HOME/.local/state}/fob/agent`,
    /// which no other user can make.
    public let directory: String
    /// The socket: `DIRECTORY/agent.sock` for the default vault
    /// (``defaultVaultSocketName``), else `DIRECTORY/agent-HASH.sock`, HASH
    /// the first 16 bytes of BLAKE2b of the canonical path in hexadecimal;
    /// or `FOB_AGENT_SOCKET` when set to an absolute path (the agent still
    /// checks, on every connection, that the client means its vault:
    /// ``AgentHello``).
    public let socket: String

    /// The socket's name for the default vault (`Vault.defaultURL`), whose
    /// canonical path matches the vault's: a fixed name, so that a service
    /// manager can listen on it before any agent runs (the systemd user unit
    /// `fob-agent.socket` listens on `%t/fob/agent.sock`).
    public static let defaultVaultSocketName = "agent.sock"

    /// The endpoint of the vault at `vaultURL`.
    /// - Parameters:
    ///   - vaultURL: the vault file (it need not exist: then its path is used as given).
    ///   - environment: reads `XDG_RUNTIME_DIR`, `TMPDIR`, `XDG_STATE_HOME`,
    ///     `HOME` and `FOB_AGENT_SOCKET`.
    public init(vaultURL: URL, environment: [String: String]) {
        vault = AgentEndpoint.canonicalPath(vaultURL)
        if let socket = environment["FOB_AGENT_SOCKET"], socket.hasPrefix("/") {
            directory = PathText.deletingLastComponent(socket)
            self.socket = socket
            return
        }
        directory = AgentEndpoint.directory(environment)
        let isDefault = vault == AgentEndpoint.canonicalPath(Vault.defaultURL(environment: environment))
        let name = isDefault ? AgentEndpoint.defaultVaultSocketName : "agent-" + AgentEndpoint.name(of: vault) + ".sock"
        socket = directory + "/" + name
    }

    /// The canonical path of `url` (symbolic links resolved), or its
    /// standardised path when it does not exist.
    static func canonicalPath(_ url: URL) -> String {
        let path = url.standardizedFileURL.path
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The directory of sockets for `environment` (see ``directory``).
    static func directory(_ environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") { return runtime + "/fob" }
        let base = environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        let shared = base + "/fob-\(getuid())"
        var st = stat()
        // Anyone may make a directory in /tmp: one that another user made
        // first (or anything but a directory) is passed over, not fought.
        if lstat(shared, &st) != 0 || ((st.st_mode & S_IFMT) == S_IFDIR && st.st_uid == getuid()) { return shared }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/fob/agent" }
        return (environment["HOME"] ?? "/nonexistent") + "/.local/state/fob/agent"
    }

    /// The socket name of a canonical path: BLAKE2b-128 in hexadecimal
    /// (32 digits), a name that no two paths share by chance or by design.
    static func name(of path: String) -> String {
        Sodium.hex(Sodium.genericHash(Array(path.utf8), length: 16))
    }

    /// Makes the directory (0700) when missing, and checks it.
    /// - Throws: `.interactionNotAllowed` when it belongs to another user, is
    ///   not a directory, or is not mode 0700; `.io` when it cannot be made.
    public func prepareDirectory() throws(KeychainError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            // The fallback under the state directory may need its parents.
            guard errno == ENOENT, (try? makeParents()) != nil, mkdir(directory, 0o700) == 0 || errno == EEXIST
            else {
                throw .io("cannot create \(directory): \(String(cString: strerror(errno)))")
            }
        }
        try checkDirectory()
    }

    /// Makes the missing parents of ``directory``, each 0700, when the
    /// directory above `fob` (the state directory) or the home directory
    /// above `.local/state` exists: neither is ever made here.
    private func makeParents() throws {
        let parent = URL(fileURLWithPath: directory).deletingLastPathComponent()
        let state = parent.deletingLastPathComponent()
        let home = state.deletingLastPathComponent().deletingLastPathComponent()
        let anchored = [state, home].contains { url in
            var status = stat()
            return stat(url.path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        }
        guard anchored else { throw KeychainError.io("no such directory: \(state.path)") }
        try FileManager.default.createDirectory(
            at: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Checks the directory: a real directory of this user, mode 0700.
    /// - Throws: `.interactionNotAllowed` naming what is wrong; `.io` when it is missing.
    public func checkDirectory() throws(KeychainError) {
        var st = stat()
        guard lstat(directory, &st) == 0 else {
            throw .io("cannot read \(directory): \(String(cString: strerror(errno)))")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw .interactionNotAllowed("the agent directory \(directory) is not a directory; remove it")
        }
        guard st.st_uid == getuid() else {
            throw .interactionNotAllowed(
                "the agent directory \(directory) belongs to uid \(st.st_uid), not to you; remove it")
        }
        guard st.st_mode & 0o777 == 0o700 else {
            throw .interactionNotAllowed(
                "the agent directory \(directory) has mode \(String(st.st_mode & 0o777, radix: 8)), not 700; fix it with chmod 700"
            )
        }
    }

    /// The socket's address.
    func address() throws(KeychainError) -> (sockaddr_un, socklen_t) {
        try UnixListener.address(of: socket, what: "agent")
    }
}

/// Socket calls shared by the agent and its client.
enum SocketIO {
    /// The uid and pid of the process at the other end.
    static func peer(_ fd: Int32) -> (uid: uid_t, pid: pid_t)? {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard fob_peer_credentials(fd, &uid, &pid) == 0 else { return nil }
        return (uid, pid)
    }

    /// Seconds on the monotonic clock (for per-connection deadlines).
    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    enum Failure: Error { case closed, timedOut, tooLarge(Int), system(Int32) }

    /// Waits at most `seconds` for `fd` to be readable (a frame, or the
    /// peer's close); `false` when the time passed or `poll` failed.
    static func awaitReadable(_ fd: Int32, seconds: Double) -> Bool {
        (try? wait(fd, Int16(POLLIN), until: monotonic() + seconds)) != nil
    }

    /// Whether the peer has closed `fd` or sent bytes nobody asked for:
    /// a connection between exchanges has nothing to read, so either way it
    /// cannot carry another request.
    static func isStale(_ fd: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) != 0
    }

    /// Waits until `fd` is ready for `events` or the deadline passes.
    private static func wait(_ fd: Int32, _ events: Int16, until deadline: Double) throws(Failure) {
        while true {
            let left = deadline - monotonic()
            guard left > 0 else { throw .timedOut }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&p, 1, Int32(min(left * 1000, 60_000)) + 1)
            if rc > 0 { return }
            if rc < 0 && errno != EINTR { throw .system(errno) }
        }
    }

    /// Reads exactly `count` bytes into `buffer` from `offset`.
    private static func readExactly(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer, until deadline: Double)
        throws(Failure)
    {
        var done = 0
        while done < buffer.count {
            try wait(fd, Int16(POLLIN), until: deadline)
            let n = recv(fd, buffer.baseAddress! + done, buffer.count - done, Int32(MSG_DONTWAIT))
            if n > 0 {
                done += n
                continue
            }
            if n == 0 { throw .closed }
            if errno == EINTR || errno == EAGAIN { continue }
            throw .system(errno)
        }
    }

    /// Reads one frame: a 4-byte big-endian length, then the payload.
    ///
    /// The length only bounds the frame: memory is taken as the bytes
    /// arrive (``firstChunkBytes`` first, then at most doubling), so a client
    /// that claims a large frame and sends nothing costs a few KiB, not the
    /// frame. Every larger buffer is a fresh array; the old one is wiped
    /// before it is freed.
    /// - Parameters:
    ///   - limit: the largest payload, in bytes.
    ///   - largeImport: whether a payload over `limit` (up to
    ///     ``AgentProtocol/maxImportMessageBytes``) may be read when its first
    ///     six bytes are an import request's header (the agent reading requests);
    ///     such a frame has one more second per MiB past `deadline`.
    ///   - wholeAtOnce: take the whole payload's memory at once (a client
    ///     reading the answer of an agent already checked to be the user's
    ///     own): no buffer is copied, so a large answer never lives twice.
    /// - Throws: `.tooLarge` before reading a payload over the limit; `.closed`, `.timedOut`, `.system`.
    static func readFrame(
        _ fd: Int32, until deadline: Double, limit: Int = AgentProtocol.maxMessageBytes,
        largeImport: Bool = false, wholeAtOnce: Bool = false
    ) throws(Failure) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 4)
        try header.withUnsafeMutableBytes { raw in
            Result { () throws(Failure) in try readExactly(fd, raw, until: deadline) }
        }.get()
        let n = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        guard n <= limit || (largeImport && n <= AgentProtocol.maxImportMessageBytes) else { throw .tooLarge(n) }
        // An import past the usual limit gets one more second per MiB: its
        // bytes come from the user's own process, but a loaded machine may
        // not move megabytes within the usual deadline.
        let deadline = n > limit ? deadline + Double(n) / Double(1 << 20) : deadline
        var payload: [UInt8] = []
        if wholeAtOnce && n <= limit { payload.reserveCapacity(n) }
        do throws(Failure) {
            if n > limit {
                // Past the usual limit only an import request may go on: its header first.
                try readMore(fd, into: &payload, upTo: 6, total: n, until: deadline)
                guard payload == AgentProtocol.magic + [AgentProtocol.version, AgentRequest.importCode] else {
                    throw .tooLarge(n)
                }
            }
            while payload.count < n {
                try readMore(fd, into: &payload, upTo: n, total: n, until: deadline)
            }
        } catch {
            payload.wipe()
            throw error
        }
        return payload
    }

    /// The first buffer of a frame, in bytes (64 KiB): any request but a
    /// large item or an import fits.
    static let firstChunkBytes = 64 << 10

    /// Reads into `payload` up to `end` bytes or as far as its buffer
    /// reaches; when full, moves it to one twice as large (capped at
    /// `total`) and wipes the old one.
    private static func readMore(
        _ fd: Int32, into payload: inout [UInt8], upTo end: Int, total: Int, until deadline: Double
    ) throws(Failure) {
        if payload.count == payload.capacity {
            let size = min(total, max(firstChunkBytes, payload.count * 2))
            var larger: [UInt8] = []
            larger.reserveCapacity(size)
            larger.append(contentsOf: payload)
            payload.wipe()
            payload = larger
        }
        let start = payload.count
        let count = min(end, payload.capacity, total) - start
        guard count > 0 else { return }
        payload.append(contentsOf: repeatElement(0, count: count))
        try payload.withUnsafeMutableBytes { raw in
            Result { () throws(Failure) in
                try readExactly(
                    fd, UnsafeMutableRawBufferPointer(rebasing: raw[start..<(start + count)]), until: deadline)
            }
        }.get()
    }

    /// Writes one frame: the length and then `payload`, gathered by
    /// `sendmsg(2)` from where they are, so the payload (a listing can be
    /// megabytes) is neither copied nor wiped again here.
    static func writeFrame(_ fd: Int32, _ payload: [UInt8], until deadline: Double) throws(Failure) {
        let n = UInt32(payload.count)
        var header = [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)]
        let total = header.count + payload.count
        var done = 0
        while done < total {
            try wait(fd, Int16(POLLOUT), until: deadline)
            let rc = header.withUnsafeMutableBytes { head in
                payload.withUnsafeBytes { body in sendRest(fd, head: head, body: body, from: done) }
            }
            if rc > 0 {
                done += rc
                continue
            }
            if rc < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            throw .system(rc < 0 ? errno : EPIPE)
        }
    }

    /// One `sendmsg(2)` of what is left of `head` followed by `body` after
    /// the first `done` bytes of the two.
    /// - Returns: what `sendmsg` returned (bytes sent, or -1 with `errno`).
    private static func sendRest(
        _ fd: Int32, head: UnsafeMutableRawBufferPointer, body: UnsafeRawBufferPointer, from done: Int
    ) -> Int {
        var parts: [iovec] = []
        if done < head.count, let base = head.baseAddress {
            parts.append(iovec(iov_base: base + done, iov_len: head.count - done))
        }
        let bodyDone = max(0, done - head.count)
        if bodyDone < body.count, let base = body.baseAddress {
            parts.append(
                iovec(iov_base: UnsafeMutableRawPointer(mutating: base + bodyDone), iov_len: body.count - bodyDone))
        }
        return parts.withUnsafeMutableBufferPointer { vectors in
            var message = msghdr()
            message.msg_iov = vectors.baseAddress
            message.msg_iovlen = vectors.count
            return sendmsg(fd, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
    }
}

extension KeychainError {
    /// The cause alone, without the status name and the kind's prefix that
    /// ``description`` adds (for a message that wraps it again).
    var reason: String {
        switch self {
        case .duplicateItem(let why), .itemNotFound(let why), .interactionNotAllowed(let why), .decode(let why),
            .param(let why), .noSuchKeychain(let why), .io(let why), .revisionMismatch(let why, _, _),
            .accessDenied(let why), .consentMissing(let why, _):
            return why
        case .authFailed: return description
        }
    }
}

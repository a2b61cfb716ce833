import FobStore
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// How an ``AccessLog`` is doing, for `fob status` and the agent's answers.
public enum AccessLogStatus: Sendable, Equatable {
    /// Every entry appended so far was written, or is waiting for the next batch.
    case ok
    /// The last write failed (`reason`); `unwritten` entries wait to be
    /// tried again, `dropped` were given up (more than ``AccessLog/maxPending`` waited).
    case failing(reason: String, unwritten: Int, dropped: Int)
}

/// The agent's access log: appends entries to the log beside the vault
/// (``AccessLogWriter``, format in ``AccessLogFileFormat``) in batches.
///
/// ``append(_:)`` only queues the entry (a lock and an array append, a few
/// hundred nanoseconds); a flushing thread seals, chains and writes what
/// queued within ``batchDelay`` in one `write(2)` and one `fdatasync`, so a
/// burst of reads costs one write per batch, not per read. It never throws
/// to the caller: a failed write keeps its entries queued for the next
/// batch (up to ``maxPending``) and shows in ``status``.
///
/// Thread-safe. ``close()`` writes what is queued and wipes the keys.
public final class AccessLog: @unchecked Sendable {
    /// The most entries kept waiting while writes fail; older ones are dropped (and counted).
    public static let maxPending = 100_000
    /// How long the flushing thread collects entries before writing, in seconds.
    public let batchDelay: Double
    private let writer: AccessLogWriter
    private let queue = Condition()
    private var pending: [AccessLogEntry] = []
    private var flusherRunning = false
    private var closed = false
    private var failure: (reason: String, dropped: Int)?
    /// Serialises writes: the flushing thread's and ``flush()``'s.
    private let writing = Lock()

    /// - Parameters:
    ///   - writer: appends to the files (used by one thread at a time).
    ///   - batchDelay: seconds to collect entries before a write (default 0.05).
    public init(writer: AccessLogWriter, batchDelay: Double = 0.05) {
        self.writer = writer
        self.batchDelay = batchDelay
    }

    /// The access log of a fully unlocked vault, its key made when it has
    /// none yet; the head state is kept with the vault watermarks.
    /// - Parameters:
    ///   - vault: fully unlocked.
    ///   - watermarks: where the head state is kept, or `nil` for nowhere.
    /// - Throws: `.interactionNotAllowed` unless fully unlocked; `.decode`
    ///   when the vault's log key does not open; `.io`.
    public static func open(for vault: Vault, watermarks: VaultWatermarks?) throws(KeychainError) -> AccessLog {
        guard let key = try vault.accessLogKey(create: true) else { throw .io("no access log key") }
        let writer = AccessLogWriter(
            location: AccessLogLocation(vaultURL: vault.url), keys: AccessLogKeys(logKey: key),
            headDirectory: watermarks?.directory)
        return AccessLog(writer: writer)
    }

    /// Queues `entry` for the next batch. Never blocks on the disk, never throws.
    public func append(_ entry: AccessLogEntry) {
        queue.lock()
        defer { queue.unlock() }
        guard !closed else { return }
        pending.append(entry)
        if pending.count > AccessLog.maxPending {
            pending.removeFirst(pending.count - AccessLog.maxPending)
            failure = (failure?.reason ?? "too many entries waiting", (failure?.dropped ?? 0) + 1)
        }
        if !flusherRunning {
            flusherRunning = DetachedThread.start { [self] in runFlusher() }
        }
        queue.signal()
    }

    /// Whether the last write worked, and how many entries wait.
    public var status: AccessLogStatus {
        queue.lock()
        defer { queue.unlock() }
        guard let failure else { return .ok }
        return .failing(reason: failure.reason, unwritten: pending.count, dropped: failure.dropped)
    }

    /// Writes every queued entry now (for a reader that must see them, and at lock).
    /// - Returns: `true` when nothing is left unwritten.
    @discardableResult
    public func flush() -> Bool {
        writing.lock()
        defer { writing.unlock() }
        queue.lock()
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        queue.unlock()
        return write(batch)
    }

    /// Writes what is queued, stops the flushing thread and takes no more entries.
    public func close() {
        queue.lock()
        closed = true
        queue.broadcast()
        queue.unlock()
        flush()
    }

    /// One batch to the files; on failure the batch goes back to the front of the queue.
    private func write(_ batch: [AccessLogEntry]) -> Bool {
        guard !batch.isEmpty else { return true }
        do {
            try writer.append(batch)
            queue.lock()
            if failure != nil && pending.isEmpty { failure = nil }
            queue.unlock()
            return true
        } catch {
            queue.lock()
            pending.insert(contentsOf: batch, at: 0)
            let over = max(0, pending.count - AccessLog.maxPending)
            if over > 0 { pending.removeFirst(over) }
            failure = ("\(error)", (failure?.dropped ?? 0) + over)
            queue.unlock()
            return false
        }
    }

    /// The flushing thread: waits for entries, lets a batch gather for
    /// ``batchDelay``, writes it; ends after a second with nothing to do.
    private func runFlusher() {
        while true {
            queue.lock()
            if pending.isEmpty && !closed { _ = queue.wait(until: Date(timeIntervalSinceNow: 1)) }
            if pending.isEmpty || closed {
                flusherRunning = false
                queue.unlock()
                return
            }
            let retrying = failure != nil
            queue.unlock()
            DetachedThread.sleep(seconds: retrying ? max(batchDelay, 1) : batchDelay)
            flush()
        }
    }
}

extension AccessLog {
    /// The agent's answer to ``AgentRequest/accessLog(_:)``: the entries of
    /// `vault`'s log that pass `filter`, after writing what `open` has
    /// queued; `.interactionNotAllowed` unless fully unlocked, `.decode`
    /// when log files exist but the vault holds no log key.
    /// - Parameters:
    ///   - filter: what the reader asked for.
    ///   - vault: the agent's vault, or `nil` while none is open.
    ///   - open: the log the agent writes to, flushed first.
    ///   - watermarks: where the log's head state is kept, or `nil`.
    static func answer(_ filter: AccessLogFilter, vault: Vault?, open: AccessLog?, watermarks: VaultWatermarks?)
        -> AgentResponse
    {
        guard let vault, vault.lockLevel == .unlocked else {
            return .failure(.interactionNotAllowed("the agent holds the vault locked; run 'fob unlock'"))
        }
        do {
            let location = AccessLogLocation(vaultURL: vault.url)
            guard let key = try vault.accessLogKey(create: false) else {
                if location.exists { return .failure(.decode(AccessLogProblem.keyMissing.description)) }
                return .accessLog(records: [], problems: [])
            }
            open?.flush()
            let keys = AccessLogKeys(logKey: key)
            let head = watermarks.flatMap {
                AccessLogHead.read(AccessLogHead.path(directory: $0.directory, keys: keys))
            }
            let report = AccessLogReader.read(location, keys: keys, head: head)
            return .accessLog(
                records: report.records.filter { filter.matches($0.entry) },
                problems: report.problems.map(\.description))
        } catch {
            return .failure(error)
        }
    }
}

extension AccessLogRequester {
    /// What `/proc` says of process `pid` (checked by `SO_PEERCRED`): its
    /// executable, `argv[0]`, and up to 8 parents as `name(pid)`, nearest first.
    /// - Parameters:
    ///   - pid: the peer's process id.
    ///   - uid: the peer's user id.
    ///   - proc: the proc file system's mount point.
    public static func peer(pid: Int32, uid: UInt32, proc: String = "/proc") -> AccessLogRequester {
        var requester = AccessLogRequester(pid: pid, uid: uid)
        requester.executable = readLink("\(proc)/\(pid)/exe") ?? ""
        let cmdline = FileDescriptorIO.readFile(atPath: "\(proc)/\(pid)/cmdline", limit: 4096) ?? []
        requester.argv0 = String(decoding: cmdline.prefix(while: { $0 != 0 }), as: UTF8.self)
        var next = parent(of: pid, proc: proc)
        while let (ppid, _) = next, ppid > 1, requester.parents.count < 8 {
            guard let (grand, name) = parent(of: ppid, proc: proc) else { break }
            requester.parents.append("\(name)(\(ppid))")
            next = (grand, name)
        }
        return requester
    }

    /// The parent's pid and the process's own name, from `/proc/PID/stat`.
    private static func parent(of pid: Int32, proc: String) -> (Int32, String)? {
        guard let stat = FileDescriptorIO.readFile(atPath: "\(proc)/\(pid)/stat", limit: 4096),
            let open = stat.firstIndex(of: UInt8(ascii: "(")), let close = stat.lastIndex(of: UInt8(ascii: ")")),
            open < close
        else { return nil }
        let name = String(decoding: stat[(open + 1)..<close], as: UTF8.self)
        let fields = stat[(close + 1)...].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let ppid = Int32(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return (ppid, name)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4097)
        let n = readlink(path, &buffer, 4096)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The agent's recorder: appends each entry to the access log of the vault
/// unlocked now (``use(_:)``), and drops it while there is none (locked).
/// Thread-safe.
public final class AccessLogRecorder: AccessRecorder, @unchecked Sendable {
    private let lock = Lock()
    private var log: AccessLog?

    public init() {}

    /// The log entries go to from now on (`nil`: none, at lock).
    public func use(_ log: AccessLog?) {
        lock.lock()
        self.log = log
        lock.unlock()
    }

    public func record(_ entry: AccessLogEntry) {
        lock.lock()
        let log = self.log
        lock.unlock()
        log?.append(entry)
    }
}

extension AccessLogRequester {
    /// The most parents a record keeps, nearest first.
    public static let parentsRecorded = 8

    /// The record of a requester the agent named: pid, uid, executable,
    /// `argv[0]`, up to ``parentsRecorded`` parents as `name(pid)`, the
    /// terminal, the systemd unit (else the cgroup) and the Flatpak app id.
    /// - Parameter requester: from ``ProcessInspector``.
    public init(_ requester: Requester) {
        self.init(
            pid: requester.pid, uid: requester.uid, executable: requester.executable,
            argv0: requester.arguments.first ?? "",
            parents: requester.parents.prefix(AccessLogRequester.parentsRecorded).map { "\($0.name)(\($0.pid))" },
            tty: requester.terminal ?? "", unit: requester.systemdUnit ?? requester.cgroup,
            flatpakID: requester.flatpakAppID ?? "")
    }
}

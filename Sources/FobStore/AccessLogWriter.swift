import FoundationEssentials
@preconcurrency import Glibc

/// Appends entries to a vault's access log (``AccessLogFileFormat``):
/// each call is one `write(2)` of every entry given, then `fdatasync`, then
/// the head state; all under an exclusive `flock` of the log's lock file,
/// so that several processes (the agent, a command given the master
/// password) append to one chain.
///
/// The current file is rotated when it would pass ``maxFileBytes``: it is
/// renamed `VAULT.log.N` (its segment number) and a new current file
/// continues the chain. At most ``maxFiles`` files are kept; removing the
/// oldest is itself recorded (``AccessEvent/logFilesDropped``). A write cut
/// short at the end of the current file (a crash) is cut off before the
/// next append and recorded (``AccessEvent/logRepaired``).
///
/// Not thread-safe: one owner calls it (the agent's ``AccessLog`` from its flushing thread).
public final class AccessLogWriter {
    /// The log's files.
    public let location: AccessLogLocation
    private let keys: AccessLogKeys
    private let headPath: String?
    /// The size at which the current file is rotated, in bytes (default 1 MiB).
    public let maxFileBytes: Int
    /// The most files kept, the current one included (default 8).
    public let maxFiles: Int
    /// What this writer knows of the current file: its identity and size
    /// when last seen, its segment, and the last entry's index and chain.
    private var tail: Tail?

    private struct Tail {
        var device: UInt64
        var inode: UInt64
        var size: Int
        var segment: UInt64
        var last: AccessLogHead
    }

    /// - Parameters:
    ///   - location: where the log lives.
    ///   - keys: its keys.
    ///   - headDirectory: where its head state is kept (``AccessLogHead``), or `nil` for nowhere.
    ///   - maxFileBytes: rotation size in bytes (at least 4 KiB).
    ///   - maxFiles: files kept (at least 2).
    public init(
        location: AccessLogLocation, keys: AccessLogKeys, headDirectory: String?, maxFileBytes: Int = 1 << 20,
        maxFiles: Int = 8
    ) {
        self.location = location
        self.keys = keys
        headPath = headDirectory.map { AccessLogHead.path(directory: $0, keys: keys) }
        self.maxFileBytes = max(maxFileBytes, 4096)
        self.maxFiles = max(maxFiles, 2)
    }

    /// Appends `entries`, in order, as the next entries of the chain.
    /// - Throws: `.io` naming the file and the reason (nothing, or only
    ///   whole entries, were written); `.decode` when the current file is not
    ///   a log file of this vault (it is left alone).
    public func append(_ entries: [AccessLogEntry]) throws(KeychainError) {
        guard !entries.isEmpty else { return }
        let lock: Int32
        do { lock = try PrivateFile.open(location.lockPath) } catch { throw .io("\(error)") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        var pending = entries
        var fd = try openCurrent(repairing: &pending)
        defer { close(fd) }
        guard var tail else { throw .io("the access log's end is unknown") }
        let estimate = pending.reduce(0) { $0 + 160 + $1.detail.utf8.count + $1.requester.executable.utf8.count }
        if tail.size > AccessLogFileFormat.headerBytes && tail.size + estimate > maxFileBytes {
            close(fd)
            fd = try rotate(&pending)
            tail = self.tail!
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(estimate)
        var last = tail.last
        for entry in pending {
            let (record, chain) = AccessLogFileFormat.record(
                entry, index: last.count + 1, previous: last.chain, keys: keys)
            bytes += record
            last = AccessLogHead(count: last.count + 1, chain: chain)
        }
        guard FileDescriptorIO.writeAll(bytes, to: fd) else {
            let reason = String(cString: strerror(errno))
            // Whatever part was written is cut off again: the file keeps whole entries only.
            _ = ftruncate(fd, off_t(tail.size))
            throw .io("cannot write \(location.current): \(reason)")
        }
        guard fdatasync(fd) == 0 else {
            throw .io("cannot sync \(location.current): \(String(cString: strerror(errno)))")
        }
        tail.size += bytes.count
        tail.last = last
        self.tail = tail
        if let headPath { last.write(to: headPath) }
    }

    /// Opens the current file (making it, with a header, when missing) and
    /// brings ``tail`` up to date with what other writers appended; a
    /// partial last record is cut off and a ``AccessEvent/logRepaired``
    /// entry put before `pending`.
    private func openCurrent(repairing pending: inout [AccessLogEntry]) throws(KeychainError) -> Int32 {
        if access(location.current, F_OK) != 0 { try createCurrent(after: lastOfRotated()) }
        let fd: Int32
        do { fd = try PrivateFile.open(location.current, create: false) } catch { throw .io("\(error)") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            close(fd)
            throw .io("cannot read \(location.current): \(String(cString: strerror(errno)))")
        }
        if let tail, tail.device == UInt64(st.st_dev), tail.inode == UInt64(st.st_ino), tail.size == Int(st.st_size) {
            _ = lseek(fd, 0, SEEK_END)
            return fd
        }
        // Another writer appended or rotated: read the file again.
        let contents: AccessLogFileContents
        do throws(KeychainError) {
            let bytes = try AccessLogFileFormat.readFile(location.current, limit: AccessLogReader.maxFileBytes).get()
            do { contents = try AccessLogFileFormat.parse(bytes) } catch {
                throw .decode("\(location.current): \(error)")
            }
            guard contents.header.mac == contents.header.expectedMAC(keys: keys) else {
                throw .decode("\(location.current) is not this vault's access log, or its header was changed")
            }
        } catch {
            close(fd)
            throw error
        }
        if contents.trailingBytes > 0 {
            _ = ftruncate(fd, off_t(contents.wholeBytes))
            pending.insert(
                AccessLogEntry(
                    time: Date(), event: .logRepaired,
                    detail: "a write cut short (\(contents.trailingBytes) bytes) was removed from the end of the log"),
                at: 0)
        }
        let last =
            contents.records.last.map { AccessLogHead(count: $0.index, chain: $0.chain) }
            ?? AccessLogHead(count: contents.header.firstIndex - 1, chain: contents.header.previousChain)
        tail = Tail(
            device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: contents.wholeBytes,
            segment: contents.header.segment, last: last)
        _ = lseek(fd, 0, SEEK_END)
        return fd
    }

    /// The segment and last entry of the newest rotated file (segment 0 and
    /// no entry when there is none).
    private func lastOfRotated() throws(KeychainError) -> (segment: UInt64, last: AccessLogHead) {
        guard let newest = location.rotatedSegments().last else {
            return (0, AccessLogHead(count: 0, chain: [UInt8](repeating: 0, count: 32)))
        }
        let path = location.rotated(newest)
        let bytes = try AccessLogFileFormat.readFile(path, limit: AccessLogReader.maxFileBytes).get()
        let contents: AccessLogFileContents
        do { contents = try AccessLogFileFormat.parse(bytes) } catch { throw .decode("\(path): \(error)") }
        let last =
            contents.records.last.map { AccessLogHead(count: $0.index, chain: $0.chain) }
            ?? AccessLogHead(count: contents.header.firstIndex - 1, chain: contents.header.previousChain)
        return (contents.header.segment, last)
    }

    /// Writes a new current file holding only its header (to a temporary
    /// file renamed into place, so no reader sees half a header).
    private func createCurrent(after previous: (segment: UInt64, last: AccessLogHead)) throws(KeychainError) {
        let header = AccessLogHeader.make(
            segment: previous.segment + 1, firstIndex: previous.last.count + 1, previousChain: previous.last.chain,
            keys: keys)
        let temporary = location.current + ".new"
        let fd: Int32
        do { fd = try PrivateFile.open(temporary, truncate: true) } catch { throw .io("\(error)") }
        let ok = FileDescriptorIO.writeAll(header.bytes, to: fd) && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, location.current) == 0 else {
            unlink(temporary)
            throw .io("cannot create \(location.current): \(String(cString: strerror(errno)))")
        }
        tail = nil
    }

    /// Renames the current file to its segment's name, starts the next one,
    /// removes the oldest files past ``maxFiles`` and records that in `pending`.
    private func rotate(_ pending: inout [AccessLogEntry]) throws(KeychainError) -> Int32 {
        guard let tail else { throw .io("the access log's end is unknown") }
        guard rename(location.current, location.rotated(tail.segment)) == 0 else {
            throw .io("cannot rotate \(location.current): \(String(cString: strerror(errno)))")
        }
        try createCurrent(after: (tail.segment, tail.last))
        let rotated = location.rotatedSegments()
        if rotated.count + 1 > maxFiles {
            let dropping = rotated.prefix(rotated.count + 1 - maxFiles)
            let keptFirst = rotated.dropFirst(dropping.count).first.flatMap { firstIndex(of: location.rotated($0)) }
            for segment in dropping { unlink(location.rotated(segment)) }
            if let keptFirst {
                let entry = AccessLogEntry(
                    time: Date(), event: .logFilesDropped,
                    detail:
                        "files \(dropping.first!)–\(dropping.last!) (entries up to \(keptFirst - 1)) were removed by rotation",
                    droppedThrough: keptFirst - 1)
                pending.insert(entry, at: 0)
            }
        }
        var ignored: [AccessLogEntry] = []
        return try openCurrent(repairing: &ignored)
    }

    /// The first index a file's header names, or `nil` when it cannot be read.
    private func firstIndex(of path: String) -> UInt64? {
        guard case .success(let bytes) = AccessLogFileFormat.readFile(path, limit: AccessLogReader.maxFileBytes),
            let contents = try? AccessLogFileFormat.parse(bytes)
        else { return nil }
        return contents.header.firstIndex
    }
}

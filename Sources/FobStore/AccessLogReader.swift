import FoundationEssentials
@preconcurrency import Glibc

/// Something wrong with an access log: each case names the file and the
/// entry (its index, counted from 1 across files) where it shows.
public enum AccessLogProblem: Sendable, Equatable, CustomStringConvertible {
    /// A file could not be read at all.
    case unreadable(file: String, reason: String)
    /// A file's header is not an access log header, or does not authenticate (edited, or another vault's).
    case badHeader(file: String)
    /// A rotated file holds another segment than its name says (files swapped or renamed).
    case misplaced(file: String, segment: UInt64)
    /// Whole files are missing: entries `first`…`last` are gone.
    case missingFiles(first: UInt64, last: UInt64)
    /// Entries `first`…`last` were removed from `file`.
    case removed(file: String, first: UInt64, last: UInt64)
    /// Entry `index` comes after a later one (entries reordered).
    case outOfOrder(file: String, index: UInt64)
    /// Entry `index` was changed: its chain value or its sealed bytes do not match.
    case changed(file: String, index: UInt64)
    /// A file does not continue the chain where the one before it ended.
    case chainBroken(file: String)
    /// A file was cut in the middle of an entry.
    case truncated(file: String, bytes: Int)
    /// The head state records `recorded` entries, the log holds `found`: entries were cut off its end.
    case tailRemoved(recorded: UInt64, found: UInt64)
    /// The entry the head state records is not the one in the log (the log was replaced).
    case replaced(index: UInt64)
    /// Log files exist but the vault holds no log key (it was removed from the vault's meta).
    case keyMissing

    public var description: String {
        switch self {
        case .unreadable(let file, let reason): return "access log \(file): \(reason)"
        case .badHeader(let file):
            return "access log \(file): its header does not authenticate (edited, or not this vault's)"
        case .misplaced(let file, let segment):
            return "access log \(file) holds file \(segment) (files were swapped or renamed)"
        case .missingFiles(let first, let last):
            return "access log entries \(first)–\(last) are missing: a log file was removed"
        case .removed(let file, let first, let last):
            return first == last
                ? "access log \(file): entry \(first) was removed"
                : "access log \(file): entries \(first)–\(last) were removed"
        case .outOfOrder(let file, let index):
            return "access log \(file): entry \(index) is out of order (entries reordered)"
        case .changed(let file, let index): return "access log \(file): entry \(index) was changed"
        case .chainBroken(let file): return "access log \(file) does not continue the chain of the file before it"
        case .truncated(let file, let bytes):
            return "access log \(file) was cut in the middle of an entry (\(bytes) bytes left over)"
        case .tailRemoved(let recorded, let found):
            return "access log entries \(found + 1)–\(recorded) were cut off its end (\(recorded) were written)"
        case .replaced(let index): return "access log entry \(index) is not the one written (the log was replaced)"
        case .keyMissing: return "access log files exist but the vault holds no access log key"
        }
    }
}

/// One decoded entry and its place in the log.
public struct AccessLogRecord: Sendable, Equatable {
    /// Its index, from 1, across every file.
    public var index: UInt64
    /// The entry.
    public var entry: AccessLogEntry
}

/// What reading a whole access log found.
public struct AccessLogReport: Sendable {
    /// Every entry that authenticated, oldest first.
    public var records: [AccessLogRecord] = []
    /// What is wrong (empty: the log verifies).
    public var problems: [AccessLogProblem] = []
    /// What is worth saying but not wrong: files dropped by rotation, a write cut short by a crash.
    public var notes: [String] = []
    /// The files read.
    public var files = 0
    /// The index and chain value of the last entry (0 and zeros for none).
    public var last = AccessLogHead(count: 0, chain: [UInt8](repeating: 0, count: 32))

    public init() {}
}

/// Reads and verifies a vault's whole access log.
public enum AccessLogReader {
    /// The largest log file read, in bytes (64 MiB).
    static let maxFileBytes = 64 << 20

    /// Reads every file (under a shared `flock`), checks every header, the
    /// chain through every entry and across files, the files dropped by
    /// rotation, and `head` (what the last writer recorded), and decodes
    /// every entry that authenticates.
    /// - Parameters:
    ///   - location: the log's files.
    ///   - keys: the log's keys.
    ///   - head: the head state (``AccessLogHead/read(_:)``), or `nil` when none is kept.
    /// - Returns: the entries and problems found; a vault with no log is an empty report.
    public static func read(_ location: AccessLogLocation, keys: AccessLogKeys, head: AccessLogHead?)
        -> AccessLogReport
    {
        let lock = open(location.lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if lock >= 0 { flock(lock, LOCK_SH) }
        defer { if lock >= 0 { close(lock) } }
        var files: [(path: String, named: UInt64?)] = location.rotatedSegments().map { (location.rotated($0), $0) }
        if access(location.current, F_OK) == 0 { files.append((location.current, nil)) }
        var loaded: [(path: String, contents: AccessLogFileContents)] = []
        var report = AccessLogReport()
        report.files = files.count
        for file in files {
            let name = AccessLogLocation.name(file.path)
            switch AccessLogFileFormat.readFile(file.path, limit: maxFileBytes) {
            case .failure(let error): report.problems.append(.unreadable(file: name, reason: "\(error)"))
            case .success(let bytes):
                do {
                    let contents = try AccessLogFileFormat.parse(bytes)
                    guard contents.header.mac == contents.header.expectedMAC(keys: keys) else {
                        report.problems.append(.badHeader(file: name))
                        continue
                    }
                    if let named = file.named, named != contents.header.segment {
                        report.problems.append(.misplaced(file: name, segment: contents.header.segment))
                    }
                    loaded.append((file.path, contents))
                } catch {
                    report.problems.append(.badHeader(file: name))
                }
            }
        }
        // The authenticated segment numbers give the order, whatever the names say.
        loaded.sort { $0.contents.header.segment < $1.contents.header.segment }
        let headChain = verifyChain(loaded, current: location.current, keys: keys, watching: head?.count, into: &report)
        checkEnds(first: loaded.first?.contents.header.firstIndex, head: head, chainAtHead: headChain, into: &report)
        return report
    }

    /// Checks the headers and every record in order; returns the chain value stored after entry `watching`.
    private static func verifyChain(
        _ loaded: [(path: String, contents: AccessLogFileContents)], current: String, keys: AccessLogKeys,
        watching: UInt64?, into report: inout AccessLogReport
    ) -> [UInt8]? {
        var watched: [UInt8]?
        var expected: UInt64 = 1
        var previous = [UInt8](repeating: 0, count: 32)
        var segment: UInt64?
        for (position, file) in loaded.enumerated() {
            let name = AccessLogLocation.name(file.path)
            let header = file.contents.header
            if position == 0 {
                (expected, previous) = (header.firstIndex, header.previousChain)
            } else {
                if header.firstIndex > expected {
                    report.problems.append(.missingFiles(first: expected, last: header.firstIndex - 1))
                } else if header.firstIndex < expected || header.previousChain != previous
                    || header.segment != (segment ?? 0) + 1
                {
                    report.problems.append(.chainBroken(file: name))
                }
                (expected, previous) = (header.firstIndex, header.previousChain)
            }
            segment = header.segment
            for record in file.contents.records {
                if record.index == watching { watched = record.chain }
                check(record, file: name, expected: &expected, previous: &previous, keys: keys, into: &report)
            }
            if file.contents.trailingBytes > 0 {
                if file.path == current && position == loaded.count - 1 {
                    report.notes.append(
                        "\(name) ends in a write cut short (\(file.contents.trailingBytes) bytes); the next entry written removes it"
                    )
                } else {
                    report.problems.append(.truncated(file: name, bytes: file.contents.trailingBytes))
                }
            }
        }
        report.last = AccessLogHead(count: expected - 1, chain: previous)
        return watched
    }

    /// Checks one record against the chain so far, and decodes it.
    private static func check(
        _ record: AccessLogRawRecord, file: String, expected: inout UInt64, previous: inout [UInt8],
        keys: AccessLogKeys, into report: inout AccessLogReport
    ) {
        var fine = true
        if record.index > expected {
            report.problems.append(.removed(file: file, first: expected, last: record.index - 1))
            fine = false
        } else if record.index < expected {
            report.problems.append(.outOfOrder(file: file, index: record.index))
            fine = false
        }
        let entry = (try? AccessLogFileFormat.open(record, keys: keys)) ?? nil
        if fine
            && (AccessLogFileFormat.chain(previous: previous, index: record.index, sealed: record.sealed, keys: keys)
                != record.chain || entry == nil)
        {
            report.problems.append(.changed(file: file, index: record.index))
        }
        if let entry {
            report.records.append(AccessLogRecord(index: record.index, entry: entry))
        }
        previous = record.chain
        expected = max(expected, record.index + 1)
    }

    /// The start (files dropped by rotation must be recorded) and the end
    /// (the head state must not be past the last entry, and must match it).
    private static func checkEnds(
        first: UInt64?, head: AccessLogHead?, chainAtHead: [UInt8]?, into report: inout AccessLogReport
    ) {
        if let first, first > 1 {
            let dropped = report.records.compactMap {
                $0.entry.event == .logFilesDropped ? $0.entry.droppedThrough : nil
            }
            if dropped.contains(where: { $0 >= first - 1 }) {
                report.notes.append("entries 1–\(first - 1) were dropped by rotation")
            } else {
                report.problems.append(.missingFiles(first: 1, last: first - 1))
            }
        }
        guard let head, head.count > 0 else { return }
        if head.count > report.last.count {
            report.problems.append(.tailRemoved(recorded: head.count, found: report.last.count))
        } else if let chainAtHead, chainAtHead != head.chain {
            report.problems.append(.replaced(index: head.count))
        }
    }
}

/// Which entries `fob log` and the terminal UI's log view show: every
/// condition given must hold.
public struct AccessLogFilter: Sendable, Equatable {
    /// Only entries of this item (service and account, any class or access group).
    public var item: (service: String, account: String)?
    /// Only entries whose requester's executable (or `argv[0]`) is this path.
    public var program: String?
    /// Only entries at or after this time.
    public var since: Date?
    /// Only entries whose item, program, channel, event or decision contains this text (case-insensitive).
    public var text: String

    /// - Parameters: see the properties; each left out matches everything.
    public init(
        item: (service: String, account: String)? = nil, program: String? = nil, since: Date? = nil, text: String = ""
    ) {
        self.item = item
        self.program = program
        self.since = since
        self.text = text
    }

    public static func == (a: AccessLogFilter, b: AccessLogFilter) -> Bool {
        a.item?.service == b.item?.service && a.item?.account == b.item?.account && a.program == b.program
            && a.since == b.since && a.text == b.text
    }

    /// Whether `entry` passes.
    public func matches(_ entry: AccessLogEntry) -> Bool {
        if let item, entry.item?.service != item.service || entry.item?.account != item.account { return false }
        if let program, entry.requester.executable != program && entry.requester.argv0 != program { return false }
        if let since, entry.time < since { return false }
        guard !text.isEmpty else { return true }
        let needle = text.lowercased()
        let haystack = [
            entry.item?.service ?? "", entry.item?.account ?? "", entry.requester.executable, entry.requester.argv0,
            entry.channel?.name ?? "", entry.event.rawValue, entry.decision?.rawValue ?? "",
        ]
        return haystack.contains { $0.lowercased().contains(needle) }
    }

    /// A time as `--since` takes it: a time ago (`30m`, `2h`, `7d`, `90s`),
    /// a day (`2026-12-05`, midnight UTC), or an ISO 8601 instant
    /// (`2026-12-05T10:00:00Z`).
    /// - Parameters:
    ///   - text: what was given.
    ///   - now: the time a duration counts back from.
    /// - Returns: the instant, or `nil` when `text` is none of these.
    public static func time(_ text: String, now: Date) -> Date? {
        if let unit = text.last, let seconds = ["s": 1.0, "m": 60, "h": 3600, "d": 86_400][String(unit)],
            let count = UInt32(text.dropLast())
        {
            return now.addingTimeInterval(-Double(count) * seconds)
        }
        if let instant = try? Date(text, strategy: .iso8601) { return instant }
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            text.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || (48...57).contains($0) })
        else { return nil }
        return try? Date(text + "T00:00:00Z", strategy: .iso8601)
    }
}

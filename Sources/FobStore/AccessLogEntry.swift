import FoundationEssentials

/// What an access log entry records.
///
/// The raw values are the names `fob log --json` prints; the codes in
/// ``code`` are what the sealed entry holds, and never change.
public enum AccessEvent: String, Sendable, CaseIterable, Equatable {
    /// A secret was read (or a read was answered for the requester).
    case read
    /// A read was refused: by a rule, by the person asked, or for want of a channel.
    case denial
    /// The person was asked whether the requester may read.
    case prompt
    /// An item's access rule, or the vault's default, was changed.
    case ruleChange = "rule-change"
    /// A lease was granted (a program may read without asking for a while).
    case lease
    /// A command opened the vault with the master password itself.
    case unlockWithPassword = "unlock-with-password"
    /// Rotation removed the oldest log files (``AccessLogEntry/droppedThrough``).
    case logFilesDropped = "log-files-dropped"
    /// A write cut short (a crash in the middle of an append) was cut off the
    /// end of the current log file before the next append.
    case logRepaired = "log-repaired"

    var code: UInt8 {
        switch self {
        case .read: return 1
        case .denial: return 2
        case .prompt: return 3
        case .ruleChange: return 4
        case .lease: return 5
        case .unlockWithPassword: return 6
        case .logFilesDropped: return 7
        case .logRepaired: return 8
        }
    }

    init?(code: UInt8) {
        guard let match = AccessEvent.allCases.first(where: { $0.code == code }) else { return nil }
        self = match
    }
}

/// What was decided about a request. Raw values are the names `fob log` prints.
public enum AccessDecision: String, Sendable, CaseIterable, Equatable {
    /// Allowed this once by the person asked.
    case allowedOnce = "allowed-once"
    /// Allowed under a lease (this program, for some minutes).
    case allowedLease = "allowed-lease"
    /// Allowed for this program until the vault locks.
    case allowedUntilLock = "allowed-until-lock"
    /// Allowed by the item's rule or the vault's default (`any`, a trusted program, the access group).
    case allowedRule = "allowed-rule"
    /// Allowed because the master password was given.
    case allowedPassword = "allowed-password"
    /// Refused (by a rule or by the person asked): errSecAuthFailed.
    case denied
    /// Nobody could be asked: errSecInteractionNotAllowed.
    case noChannel = "no-channel"
    /// Nobody answered in time: errSecInteractionNotAllowed.
    case timedOut = "timed-out"

    var code: UInt8 {
        switch self {
        case .allowedOnce: return 1
        case .allowedLease: return 2
        case .allowedUntilLock: return 3
        case .allowedRule: return 4
        case .allowedPassword: return 5
        case .denied: return 6
        case .noChannel: return 7
        case .timedOut: return 8
        }
    }

    init?(code: UInt8) {
        guard let match = AccessDecision.allCases.first(where: { $0.code == code }) else { return nil }
        self = match
    }
}

/// Who asked, as the access log keeps it: plain values, each empty (or
/// `nil`) when not known. The agent fills what `SO_PEERCRED` and `/proc`
/// say; a richer requester (its identity, its rule match) is mapped into this.
public struct AccessLogRequester: Sendable, Equatable {
    /// The process id, or `nil` when not known.
    public var pid: Int32?
    /// The user id, or `nil` when not known.
    public var uid: UInt32?
    /// The executable's path (`/proc/PID/exe`).
    public var executable: String
    /// Its `argv[0]`.
    public var argv0: String
    /// The parent processes, nearest first, each shortened to `name(pid)`.
    public var parents: [String]
    /// The controlling terminal (`/dev/pts/3`), empty for none.
    public var tty: String
    /// The systemd unit or cgroup.
    public var unit: String
    /// The Flatpak app id.
    public var flatpakID: String

    /// - Parameters: see the properties; every one may be left out.
    public init(
        pid: Int32? = nil, uid: UInt32? = nil, executable: String = "", argv0: String = "", parents: [String] = [],
        tty: String = "", unit: String = "", flatpakID: String = ""
    ) {
        self.pid = pid
        self.uid = uid
        self.executable = executable
        self.argv0 = argv0
        self.parents = parents
        self.tty = tty
        self.unit = unit
        self.flatpakID = flatpakID
    }
}

/// One entry of the access log: when, what happened, who asked, for which
/// item, through which channel, and what was decided.
///
/// - Important: an entry names items and programs, never a secret's bytes;
///   ``detail`` is for the rule or reason ("rule any", "lease 10 min").
public struct AccessLogEntry: Sendable, Equatable {
    /// When it happened (kept to the millisecond).
    public var time: Date
    /// What happened.
    public var event: AccessEvent
    /// Who asked.
    public var requester: AccessLogRequester
    /// The item's primary key (class, access group, service, account), or
    /// `nil` for an event about no one item (an unlock, the vault's default rule).
    public var item: ItemKey?
    /// How the request came, or `nil` when none applies.
    public var channel: AccessChannel?
    /// What was decided, or `nil` when nothing was (a rule change, log upkeep).
    public var decision: AccessDecision?
    /// A short text: the rule that settled it, a lease's length, a reason.
    public var detail: String
    /// For ``AccessEvent/logFilesDropped``: the index of the last entry of
    /// the files removed (the oldest file left starts after it).
    public var droppedThrough: UInt64?

    /// - Parameters: see the properties.
    public init(
        time: Date, event: AccessEvent, requester: AccessLogRequester = AccessLogRequester(), item: ItemKey? = nil,
        channel: AccessChannel? = nil, decision: AccessDecision? = nil, detail: String = "",
        droppedThrough: UInt64? = nil
    ) {
        self.time = Date(timeIntervalSince1970: (time.timeIntervalSince1970 * 1000).rounded() / 1000)
        self.event = event
        self.requester = requester
        self.item = item
        self.channel = channel
        self.decision = decision
        self.detail = detail
        self.droppedThrough = droppedThrough
    }
}

/// The plaintext of a sealed entry: version 1, then fixed fields and
/// length-prefixed UTF-8 strings, all integers big-endian.
///
/// ```
/// 0x01 ‖ time (Int64, ms since 1970) ‖ event ‖ channel (0 = none) ‖ decision (0 = none)
///      ‖ flags (bit 0 pid, 1 uid, 2 item, 3 droppedThrough) ‖ pid (Int32) ‖ uid (UInt32)
///      ‖ droppedThrough (UInt64)
///      ‖ executable ‖ argv0 ‖ tty ‖ unit ‖ flatpakID ‖ detail     (each UInt16 length ‖ bytes)
///      ‖ parent count (UInt8, at most 32) ‖ each parent
///      ‖ item class ‖ access group ‖ service ‖ account            (only with flag bit 2)
///      ‖ command                                                   (only with channel 11)
/// ```
/// A string is cut (on a character boundary) at ``maxStringBytes``.
public enum AccessLogEntryCodec {
    /// The longest string kept, in bytes.
    public static let maxStringBytes = 16_384
    /// The most parents kept.
    public static let maxParents = 32
    static let version: UInt8 = 1

    /// The plaintext of `entry`.
    public static func encode(_ entry: AccessLogEntry) -> [UInt8] {
        var out: [UInt8] = [version]
        out.reserveCapacity(128)
        let millis = Int64((entry.time.timeIntervalSince1970 * 1000).rounded())
        append(UInt64(bitPattern: millis), to: &out)
        out.append(entry.event.code)
        out.append(entry.channel?.code ?? 0)
        out.append(entry.decision?.code ?? 0)
        let r = entry.requester
        var flags: UInt8 = 0
        if r.pid != nil { flags |= 1 }
        if r.uid != nil { flags |= 2 }
        if entry.item != nil { flags |= 4 }
        if entry.droppedThrough != nil { flags |= 8 }
        out.append(flags)
        append32(UInt32(bitPattern: r.pid ?? 0), to: &out)
        append32(r.uid ?? 0, to: &out)
        append(entry.droppedThrough ?? 0, to: &out)
        for text in [r.executable, r.argv0, r.tty, r.unit, r.flatpakID, entry.detail] { append(text, to: &out) }
        let parents = r.parents.prefix(maxParents)
        out.append(UInt8(parents.count))
        for parent in parents { append(parent, to: &out) }
        if let item = entry.item {
            for text in [item.itemClass.rawValue, item.accessGroup, item.service, item.account] {
                append(text, to: &out)
            }
        }
        if case .command(let name)? = entry.channel, entry.channel?.code == 11 { append(name, to: &out) }
        return out
    }

    /// Reads what ``encode(_:)`` wrote.
    /// - Throws: ``AccessLogFormatError/malformedEntry(_:)`` naming what is
    ///   wrong: a short or overlong field, an unknown code, text that is not
    ///   UTF-8, bytes left over.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(AccessLogFormatError) -> AccessLogEntry {
        var r = ByteReader(bytes) { AccessLogFormatError.malformedEntry($0) }
        guard try r.byte() == version else { throw .malformedEntry("unknown entry version") }
        let millis = Int64(bitPattern: try r.u64())
        guard let event = AccessEvent(code: try r.byte()) else { throw .malformedEntry("unknown event") }
        let channelCode = try r.byte()
        let decisionCode = try r.byte()
        var channel = AccessChannel(code: channelCode)
        let decision = AccessDecision(code: decisionCode)
        guard channelCode == 0 || channel != nil else { throw .malformedEntry("unknown channel") }
        guard decisionCode == 0 || decision != nil else { throw .malformedEntry("unknown decision") }
        let flags = try r.byte()
        guard flags & ~0x0F == 0 else { throw .malformedEntry("unknown flags") }
        let pid = Int32(bitPattern: try r.u32())
        let uid = try r.u32()
        let dropped = try r.u64()
        let texts = try (0..<6).map { _ throws(AccessLogFormatError) in try r.string(maxBytes: maxStringBytes) }
        let parentCount = Int(try r.byte())
        guard parentCount <= maxParents else { throw .malformedEntry("too many parents") }
        let parents = try (0..<parentCount).map { _ throws(AccessLogFormatError) in
            try r.string(maxBytes: maxStringBytes)
        }
        var item: ItemKey?
        if flags & 4 != 0 {
            guard let itemClass = ItemClass(rawValue: try r.string(maxBytes: maxStringBytes)) else {
                throw .malformedEntry("unknown item class")
            }
            let parts = try (0..<3).map { _ throws(AccessLogFormatError) in try r.string(maxBytes: maxStringBytes) }
            item = ItemKey(itemClass: itemClass, accessGroup: parts[0], service: parts[1], account: parts[2])
        }
        if channelCode == 11 { channel = .command(try r.string(maxBytes: maxStringBytes)) }
        guard r.isAtEnd else { throw .malformedEntry("bytes after the entry") }
        let requester = AccessLogRequester(
            pid: flags & 1 != 0 ? pid : nil, uid: flags & 2 != 0 ? uid : nil, executable: texts[0], argv0: texts[1],
            parents: parents, tty: texts[2], unit: texts[3], flatpakID: texts[4])
        return AccessLogEntry(
            time: Date(timeIntervalSince1970: Double(millis) / 1000), event: event, requester: requester, item: item,
            channel: channel, decision: decision, detail: texts[5], droppedThrough: flags & 8 != 0 ? dropped : nil)
    }

    /// `record` as the agent's access-log answer carries it: its index
    /// (UInt64, big-endian) ‖ its entry (``encode(_:)``).
    public static func encode(_ record: AccessLogRecord) -> [UInt8] {
        var out: [UInt8] = []
        append(record.index, to: &out)
        return out + encode(record.entry)
    }

    /// Reads what ``encode(_:)-(AccessLogRecord)`` wrote.
    /// - Throws: ``AccessLogFormatError/malformedEntry(_:)``: no room for the
    ///   index and an entry, or what ``decode(_:)`` throws for the entry.
    public static func decodeRecord(_ bytes: UnsafeRawBufferPointer) throws(AccessLogFormatError) -> AccessLogRecord {
        guard bytes.count > 8 else { throw .malformedEntry("a record shorter than its index and an entry") }
        let index = bytes.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
        return AccessLogRecord(index: index, entry: try decode(UnsafeRawBufferPointer(rebasing: bytes[8...])))
    }

    static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    static func append32(_ value: UInt32, to out: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }

    private static func append(_ text: String, to out: inout [UInt8]) {
        var utf8 = Array(text.utf8)
        if utf8.count > maxStringBytes {
            var cut = maxStringBytes
            // Back up to the first byte of a character (not a continuation byte).
            while cut > 0 && utf8[cut] & 0xC0 == 0x80 { cut -= 1 }
            utf8.removeSubrange(cut...)
        }
        out.append(UInt8(utf8.count >> 8))
        out.append(UInt8(utf8.count & 0xFF))
        out.append(contentsOf: utf8)
    }
}

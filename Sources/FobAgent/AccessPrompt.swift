import FobStore
import FobSystem
import FoundationEssentials

/// A consent question as the terminal UI receives it (an
/// ``AgentEvent/Kind/question`` event): who asks, for which item, through
/// what, and the number that its answer (``AgentRequest/answer(question:_:)``)
/// names. Every text is already made safe to show (no control characters).
public struct AccessPrompt: Sendable, Equatable {
    /// The question's number, unique for the agent's lifetime.
    public var id: UInt64
    /// The requester's process id.
    public var pid: Int32
    /// The requester's executable path.
    public var program: String
    /// The requester's parent chain, shortened (`bash[12] ← tmux[3] ← …`); empty when unknown.
    public var parents: String
    /// The requester's working directory.
    public var workingDirectory: String
    /// The requester's controlling terminal; empty when it has none.
    public var terminal: String
    /// The item's name (`service / account`).
    public var item: String
    /// The channel (`fob get`, `Secret Service`, `git`, …).
    public var channel: String
    /// Why the rules did not settle it.
    public var reason: String
    /// The length of the "minutes" answer's lease, in seconds.
    public var leaseSeconds: UInt32

    /// - Parameters: as the properties.
    public init(
        id: UInt64, pid: Int32, program: String, parents: String, workingDirectory: String, terminal: String,
        item: String, channel: String, reason: String, leaseSeconds: UInt32
    ) {
        self.id = id
        self.pid = pid
        self.program = program
        self.parents = parents
        self.workingDirectory = workingDirectory
        self.terminal = terminal
        self.item = item
        self.channel = channel
        self.reason = reason
        self.leaseSeconds = leaseSeconds
    }

    /// The prompt of `question`, numbered `id`.
    public init(_ question: AccessQuestion, id: UInt64, leaseSeconds: Double) {
        let r = question.context.requester
        self.init(
            id: id, pid: r.pid, program: displaySafe(r.executable), parents: displaySafe(r.chain()),
            workingDirectory: displaySafe(r.workingDirectory), terminal: displaySafe(r.terminal ?? ""),
            item: displaySafe(question.item), channel: question.context.channel.description,
            reason: displaySafe(question.reason), leaseSeconds: UInt32(max(0, min(leaseSeconds, 86_400))))
    }

    /// The lease answer's length in words (`15 minutes`, `1 minute 30 seconds`).
    public var leaseText: String { Self.leaseText(seconds: Double(leaseSeconds)) }

    /// A lease's length as the answers name it, in whole minutes and
    /// seconds, never rounded up: `15 minutes`, `1 minute 30 seconds`,
    /// `45 seconds`; `short`: `15 min`, `1 min 30 s`, `45 s`.
    /// - Parameters:
    ///   - seconds: the lease, in seconds (a fraction is dropped; below 0 is 0).
    ///   - short: the abbreviated form, for a key legend.
    public static func leaseText(seconds: Double, short: Bool = false) -> String {
        let whole = seconds.isFinite ? Int(max(0, min(seconds, 1e9)).rounded(.down)) : 0
        let (minutes, rest) = whole.quotientAndRemainder(dividingBy: 60)
        func unit(_ count: Int, _ name: String, _ abbreviation: String) -> String {
            short ? "\(count) \(abbreviation)" : "\(count) \(name)\(count == 1 ? "" : "s")"
        }
        var parts: [String] = []
        if minutes > 0 { parts.append(unit(minutes, "minute", "min")) }
        if rest > 0 || minutes == 0 { parts.append(unit(rest, "second", "s")) }
        return parts.joined(separator: " ")
    }

    /// The program's last path component.
    public var programName: String { String(program.split(separator: "/").last ?? Substring(program)) }

    /// The prompt as a nested message of ten fields, in the order of the properties.
    func encoded() -> [UInt8] {
        var w = MessageWriter(code: 0)
        w.field(id)
        w.field(UInt32(bitPattern: pid))
        for text in [program, parents, workingDirectory, terminal, item, channel, reason] { w.field(text) }
        w.field(leaseSeconds)
        return w.bytes
    }

    /// Decodes ``encoded()``.
    /// - Throws: ``AgentProtocolError/badField(_:)`` for a wrong count or part.
    init(_ raw: UnsafeRawBufferPointer) throws(AgentProtocolError) {
        let r = try MessageReader(raw)
        guard r.version == AgentProtocol.version, r.code == 0 else { throw .badField("a question") }
        try r.expect(10)
        self.init(
            id: try r.uint64(0, "a question's number"), pid: Int32(bitPattern: try r.uint32(1, "a question's pid")),
            program: try r.text(2, "program"), parents: try r.text(3, "parents"),
            workingDirectory: try r.text(4, "directory"), terminal: try r.text(5, "terminal"),
            item: try r.text(6, "item"), channel: try r.text(7, "channel"), reason: try r.text(8, "reason"),
            leaseSeconds: try r.uint32(9, "lease"))
    }
}

extension AccessAnswer {
    /// The answer on the wire: one byte (1 once, 2 lease, 3 until lock,
    /// 4 always, 5 deny) and, for a lease, its seconds (4 bytes, big-endian).
    func encoded() -> [UInt8] {
        switch self {
        case .once: return [1]
        case .lease(let seconds):
            let s = UInt32(max(0, min(seconds, 86_400)))
            return [2] + (0..<4).map { UInt8(truncatingIfNeeded: s >> (24 - 8 * $0)) }
        case .untilLock: return [3]
        case .always: return [4]
        case .deny: return [5]
        }
    }

    /// Decodes ``encoded()``.
    /// - Throws: ``AgentProtocolError/badField(_:)`` for any other bytes.
    init(wire raw: UnsafeRawBufferPointer) throws(AgentProtocolError) {
        switch (raw.first, raw.count) {
        case (1?, 1): self = .once
        case (2?, 5):
            let s = raw.dropFirst().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard s > 0, s <= 86_400 else { throw .badField("a lease of \(s) seconds") }
            self = .lease(seconds: Double(s))
        case (3?, 1): self = .untilLock
        case (4?, 1): self = .always
        case (5?, 1): self = .deny
        default: throw .badField("an answer")
        }
    }
}

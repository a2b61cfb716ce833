import FobSystem
import FoundationEssentials

/// Who may read an item's secret without being asked: the item's access
/// rule, sealed in its record (record tag 31), as the Keychain's access
/// object with its trusted applications.
///
/// ``mode`` says what happens to a program the lists do not name: `nil`
/// follows the vault's default (``Vault/accessDefault()``). A program in
/// ``trusted`` reads without asking (unless the request is forwarded and
/// ``forwarded`` says otherwise); a program in ``denied`` is refused without
/// asking. A program is matched by its executable's identity (device,
/// inode, size, modification time), so a program replaced on disk is no
/// longer trusted; a ``TrustedProgram/hash`` makes the match also check the
/// file's BLAKE2b-256.
public struct AccessRule: Sendable, Equatable {
    /// What happens to a requester the lists do not name.
    public enum Mode: UInt8, Sendable, CaseIterable {
        /// Any program of the user reads it (the behaviour before rules).
        case any = 0
        /// Every program not trusted is asked about.
        case ask = 1
        /// Every program not trusted is refused without asking.
        case deny = 2

        /// `any`, `ask`, `deny`.
        public var name: String {
            switch self {
            case .any: return "any"
            case .ask: return "ask"
            case .deny: return "deny"
            }
        }

        /// The mode named `name` (``name``), or `nil`.
        public init?(name: String) {
            guard let mode = Mode.allCases.first(where: { $0.name == name }) else { return nil }
            self = mode
        }
    }

    /// What happens to a request with no controlling terminal of this
    /// machine (a service, a desktop program, a forwarded or remote session).
    public enum Forwarded: UInt8, Sendable, CaseIterable {
        /// As any other request.
        case same = 0
        /// Asked, even when trusted.
        case ask = 1
        /// Refused.
        case deny = 2
    }

    /// The mode for programs the lists do not name; `nil`: the vault's default.
    public var mode: Mode?
    /// What happens to a forwarded request (no controlling terminal).
    public var forwarded: Forwarded
    /// Programs that read without asking (the Keychain's trusted applications).
    public var trusted: [TrustedProgram]
    /// Programs refused without asking.
    public var denied: [TrustedProgram]

    /// - Parameters: as the properties; the default is the rule of an item
    ///   that has none (the vault's default for every program).
    public init(
        mode: Mode? = nil, forwarded: Forwarded = .same, trusted: [TrustedProgram] = [], denied: [TrustedProgram] = []
    ) {
        self.mode = mode
        self.forwarded = forwarded
        self.trusted = trusted
        self.denied = denied
    }

    /// Whether the rule says nothing of its own (an item with it stores no tag 31).
    public var isDefault: Bool { mode == nil && forwarded == .same && trusted.isEmpty && denied.isEmpty }

    /// The most programs one rule lists (trusted and denied together).
    public static let maxPrograms = 64
    /// The longest encoded rule: ``maxPrograms`` programs with 4,096-byte paths and hashes.
    public static let maxEncodedBytes = 5 + maxPrograms * (1 + 2 + 4096 + 36 + 1 + TrustedProgram.hashBytes)

    /// The encoded rule: version 1 ‖ mode (0xFF: the default) ‖ forwarded ‖
    /// program count (UInt16 LE) ‖ programs, each list (1 trusted, 2 denied) ‖
    /// path length (UInt16 LE) ‖ path ‖ device, inode, size (UInt64 LE) ‖
    /// time (Int64 LE, ns) ‖ owner (UInt32 LE) ‖ hash length (0 or 32) ‖ hash.
    public var encoded: [UInt8] {
        var out: [UInt8] = [1, mode?.rawValue ?? 0xFF, forwarded.rawValue]
        let all = trusted.map { (UInt8(1), $0) } + denied.map { (UInt8(2), $0) }
        out += le(UInt64(all.count), 2)
        for (list, program) in all {
            let path = Array(program.path.utf8)
            out.append(list)
            out += le(UInt64(path.count), 2) + path
            let id = program.identity
            out += le(id.device, 8) + le(id.inode, 8) + le(id.size, 8)
            out += le(UInt64(bitPattern: id.modifiedNanoseconds), 8) + le(UInt64(id.owner), 4)
            out.append(UInt8(program.hash?.count ?? 0))
            out += program.hash ?? []
        }
        return out
    }

    /// The rule of ``encoded``.
    /// - Throws: `.decode` for a broken layout, an unknown version, mode or
    ///   list, a path that is not UTF-8 or over 4,096 bytes, more than
    ///   ``maxPrograms`` programs, or a hash not 32 bytes long.
    public init(encoded bytes: [UInt8]) throws(KeychainError) {
        self = try bytes.withUnsafeBytes { raw in
            Result { () throws(KeychainError) in try AccessRule.decode(raw) }
        }.get()
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer) throws(KeychainError) -> AccessRule {
        var reader = ByteReader(bytes) { _ in KeychainError.decode("truncated access rule") }
        guard try reader.byte() == 1 else { throw .decode("unknown access rule version") }
        let rawMode = try reader.byte()
        guard rawMode == 0xFF || Mode(rawValue: rawMode) != nil, let forwarded = Forwarded(rawValue: try reader.byte())
        else { throw .decode("bad access rule mode") }
        var rule = AccessRule(mode: Mode(rawValue: rawMode), forwarded: forwarded)
        let count = try reader.littleEndian(2)
        guard count <= UInt64(AccessRule.maxPrograms) else { throw .decode("too many programs in an access rule") }
        for _ in 0..<count {
            let list = try reader.byte()
            guard list == 1 || list == 2 else { throw .decode("bad access rule list") }
            let pathBytes = try reader.bytes(Int(try reader.littleEndian(2)))
            guard pathBytes.count <= 4096, let path = String(validating: pathBytes, as: UTF8.self) else {
                throw .decode("bad program path in an access rule")
            }
            let identity = ExecutableIdentity(
                device: try reader.littleEndian(8), inode: try reader.littleEndian(8), size: try reader.littleEndian(8),
                modifiedNanoseconds: Int64(bitPattern: try reader.littleEndian(8)),
                owner: UInt32(try reader.littleEndian(4)))
            let hashLength = Int(try reader.byte())
            guard hashLength == 0 || hashLength == TrustedProgram.hashBytes else { throw .decode("bad program hash") }
            let program = TrustedProgram(
                path: path, identity: identity, hash: hashLength == 0 ? nil : try reader.bytes(hashLength))
            if list == 1 { rule.trusted.append(program) } else { rule.denied.append(program) }
        }
        guard reader.isAtEnd else { throw .decode("trailing bytes in an access rule") }
        return rule
    }
}

/// A program an access rule names: its path (for people and for `revoke`)
/// and the identity of the file it had when it was named.
public struct TrustedProgram: Sendable, Equatable {
    /// The executable's path.
    public var path: String
    /// The file's identity when it was named.
    public var identity: ExecutableIdentity
    /// The file's BLAKE2b-256 (32 bytes), checked as well when set.
    public var hash: [UInt8]?

    /// The size of ``hash``: 32 bytes.
    public static let hashBytes = 32

    /// - Parameters: as the properties.
    public init(path: String, identity: ExecutableIdentity, hash: [UInt8]? = nil) {
        self.path = path
        self.identity = identity
        self.hash = hash
    }

    /// Whether a running executable with `identity` is this program
    /// (``hash`` is checked by the caller, which reads the file).
    public func matches(_ identity: ExecutableIdentity?) -> Bool { identity == self.identity }

    /// The BLAKE2b-256 of the file at `path` (read through `/proc/PID/exe`
    /// for a running program), or `nil` when it cannot be read. Files up to
    /// 1 GiB.
    public static func hash(ofFile path: String) -> [UInt8]? {
        guard let bytes = FileDescriptorIO.readFile(atPath: path, limit: 1 << 30) else { return nil }
        return Sodium.genericHash(bytes, length: hashBytes)
    }
}

private func le(_ value: UInt64, _ count: Int) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
}

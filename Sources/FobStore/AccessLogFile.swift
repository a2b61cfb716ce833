import CSodium
import FoundationEssentials
@preconcurrency import Glibc

/// Why bytes of the access log could not be read.
public enum AccessLogFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A sealed entry's plaintext is not an entry (``AccessLogEntryCodec``).
    case malformedEntry(String)
    /// A file is not an access log file, or its header is damaged.
    case malformedFile(String)

    public var description: String {
        switch self {
        case .malformedEntry(let why): return "malformed access log entry: \(why)"
        case .malformedFile(let why): return "malformed access log file: \(why)"
        }
    }
}

/// The keys of a vault's access log, derived from its log key
/// (``Vault/accessLogKey(create:)``: 32 random bytes sealed in the vault's
/// meta under a subkey of the vault key) with `crypto_kdf_derive_from_key`,
/// context "fobalog1": subkey 1 seals entries (XChaCha20-Poly1305), subkey 2
/// keys the chain and the file headers (BLAKE2b-256), subkey 3 names the
/// log's head state (``id``). Each 32 bytes in guarded memory.
public struct AccessLogKeys: Sendable {
    let seal: SecretBytes
    let chain: SecretBytes
    /// 32 hexadecimal digits naming this log (a keyed BLAKE2b): the name of
    /// its head state file, revealing nothing of the key.
    public let id: String

    /// - Parameter logKey: 32 bytes.
    public init(logKey: SecretBytes) {
        precondition(logKey.count == Crypto.keyBytes, "a log key is 32 bytes")
        Sodium.ensureInitialised()
        seal = Crypto.subkey(of: logKey, id: 1, context: "fobalog1")
        chain = Crypto.subkey(of: logKey, id: 2, context: "fobalog1")
        let named = Crypto.subkey(of: logKey, id: 3, context: "fobalog1")
        id = Sodium.hex(Sodium.genericHash(Array("fob access log id".utf8), key: named, length: 16))
    }
}

/// Where a vault's access log lives: `VAULT.log` (the current file) beside
/// the vault, `VAULT.log.N` for rotated file N (its segment number, which
/// its header also holds), and `VAULT.log.lock`, the `flock` writers and
/// readers share. Every file is 0600.
public struct AccessLogLocation: Sendable, Equatable {
    /// The current file.
    public let current: String
    /// The lock file.
    public let lockPath: String
    /// The directory holding them (the vault's).
    public let directory: String
    private let rotatedPrefix: String

    /// - Parameter vaultURL: the vault file.
    public init(vaultURL: URL) {
        current = vaultURL.path + ".log"
        lockPath = current + ".lock"
        directory = vaultURL.deletingLastPathComponent().path
        rotatedPrefix = vaultURL.lastPathComponent + ".log."
    }

    /// The path of rotated segment `segment`.
    public func rotated(_ segment: UInt64) -> String { current + ".\(segment)" }

    /// The rotated segments present, ascending (names `VAULT.log.N`, N decimal).
    public func rotatedSegments() -> [UInt64] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var out: [UInt64] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            guard name.hasPrefix(rotatedPrefix) else { continue }
            let rest = name.dropFirst(rotatedPrefix.count)
            guard !rest.isEmpty, rest.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), rest.first != "0",
                let number = UInt64(rest)
            else { continue }
            out.append(number)
        }
        return out.sorted()
    }

    /// Whether any log file exists.
    public var exists: Bool { access(current, F_OK) == 0 || !rotatedSegments().isEmpty }

    /// The file name alone, for messages.
    static func name(_ path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }
}

/// The bytes of one log file, as ``AccessLogFileFormat/parse(_:)`` splits them.
public struct AccessLogFileContents: Sendable, Equatable {
    /// The header's fields (not yet authenticated).
    public var header: AccessLogHeader
    /// The records, in file order.
    public var records: [AccessLogRawRecord]
    /// Bytes after the last whole record (a write cut short, or a cut file).
    public var trailingBytes: Int
    /// The size of the header and whole records.
    public var wholeBytes: Int
}

/// A log file's header: which segment it is, the index of its first entry,
/// and the chain value of the entry before it (32 zero bytes for the first file).
public struct AccessLogHeader: Sendable, Equatable {
    public var segment: UInt64
    public var firstIndex: UInt64
    public var previousChain: [UInt8]
    public var mac: [UInt8]

    /// The bytes the MAC covers: magic, version, three zero bytes, segment, first index, previous chain.
    var authenticated: [UInt8] {
        var out = AccessLogFileFormat.magic + [AccessLogFileFormat.version, 0, 0, 0]
        AccessLogEntryCodec.append(segment, to: &out)
        AccessLogEntryCodec.append(firstIndex, to: &out)
        return out + previousChain
    }

    func expectedMAC(keys: AccessLogKeys) -> [UInt8] {
        Crypto.keyedHash(Array("fob access log header".utf8) + authenticated, key: keys.chain)
    }

    /// A header of `segment` sealed (its MAC computed) under `keys`.
    static func make(segment: UInt64, firstIndex: UInt64, previousChain: [UInt8], keys: AccessLogKeys)
        -> AccessLogHeader
    {
        var header = AccessLogHeader(segment: segment, firstIndex: firstIndex, previousChain: previousChain, mac: [])
        header.mac = header.expectedMAC(keys: keys)
        return header
    }

    var bytes: [UInt8] { authenticated + mac }
}

/// One record of a log file as stored: its index, the sealed entry, and the chain value after it.
public struct AccessLogRawRecord: Sendable, Equatable {
    public var index: UInt64
    public var sealed: [UInt8]
    public var chain: [UInt8]
    /// Where the record starts in its file.
    public var offset: Int
}

/// The layout of an access log file (all integers big-endian):
///
/// ```
/// header:  "FOBL" ‖ 0x01 ‖ 00 00 00 ‖ segment (8) ‖ first index (8) ‖ previous chain (32)
///          ‖ MAC (32) = BLAKE2b-256 keyed (chain key) of "fob access log header" ‖ the 56 bytes before
/// record:  length (4, of what follows) ‖ index (8) ‖ sealed ‖ chain (32)
///   sealed = nonce (24) ‖ XChaCha20-Poly1305 of the entry (``AccessLogEntryCodec``) ‖ tag (16),
///            associated data "fob access log v1" ‖ index (8)
///   chain  = BLAKE2b-256 keyed (chain key) of previous chain ‖ index (8) ‖ sealed
/// ```
/// Indices count from 1 across every file; the previous chain of entry 1 is 32 zero bytes.
public enum AccessLogFileFormat {
    static let magic: [UInt8] = Array("FOBL".utf8)
    static let version: UInt8 = 1
    /// The header's size in bytes.
    public static let headerBytes = 88
    /// The largest record accepted (length field), in bytes.
    public static let maxRecordBytes = 1 << 18
    /// The smallest: index, nonce, tag and chain around an empty plaintext.
    static let minRecordBytes = 8 + Crypto.nonceBytes + Crypto.tagBytes + 32

    /// Splits a file's bytes into its header and records, without keys.
    /// - Throws: ``AccessLogFormatError/malformedFile(_:)`` for a short or
    ///   foreign header, or a record length out of range.
    public static func parse(_ bytes: [UInt8]) throws(AccessLogFormatError) -> AccessLogFileContents {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(AccessLogFormatError) in try parse(raw) }
        }.get()
    }

    static func parse(_ raw: UnsafeRawBufferPointer) throws(AccessLogFormatError) -> AccessLogFileContents {
        guard raw.count >= headerBytes else { throw .malformedFile("shorter than its header") }
        guard Array(raw[0..<4]) == magic else { throw .malformedFile("not an access log file") }
        guard raw[4] == version else { throw .malformedFile("unknown log format \(raw[4])") }
        guard raw[5] == 0, raw[6] == 0, raw[7] == 0 else { throw .malformedFile("damaged header") }
        var r = ByteReader(UnsafeRawBufferPointer(rebasing: raw[8..<headerBytes])) {
            AccessLogFormatError.malformedFile($0)
        }
        let header: AccessLogHeader
        do {
            let segment = try r.u64()
            let first = try r.u64()
            let previous = Array(try r.take(32))
            header = AccessLogHeader(
                segment: segment, firstIndex: first, previousChain: previous, mac: Array(try r.take(32)))
        } catch {
            throw .malformedFile("damaged header")
        }
        var records: [AccessLogRawRecord] = []
        var offset = headerBytes
        while raw.count - offset >= 4 {
            let length = raw[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length >= minRecordBytes, length <= maxRecordBytes else {
                throw .malformedFile("a record of \(length) bytes at offset \(offset)")
            }
            guard raw.count - offset - 4 >= length else { break }
            let start = offset + 4
            let index = raw[start..<start + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let sealed = Array(raw[start + 8..<start + length - 32])
            let chain = Array(raw[start + length - 32..<start + length])
            records.append(AccessLogRawRecord(index: index, sealed: sealed, chain: chain, offset: offset))
            offset = start + length
        }
        return AccessLogFileContents(
            header: header, records: records, trailingBytes: raw.count - offset, wholeBytes: offset)
    }

    /// The associated data of entry `index`'s seal.
    static func sealAD(index: UInt64) -> [UInt8] {
        var ad = Array("fob access log v1".utf8)
        AccessLogEntryCodec.append(index, to: &ad)
        return ad
    }

    /// The chain value after entry `index`.
    static func chain(previous: [UInt8], index: UInt64, sealed: [UInt8], keys: AccessLogKeys) -> [UInt8] {
        var input = previous
        input.reserveCapacity(40 + sealed.count)
        AccessLogEntryCodec.append(index, to: &input)
        input.append(contentsOf: sealed)
        return Crypto.keyedHash(input, key: keys.chain)
    }

    /// Seals `entry` as entry `index` after `previous`: the record's bytes and its chain value.
    static func record(_ entry: AccessLogEntry, index: UInt64, previous: [UInt8], keys: AccessLogKeys)
        -> (bytes: [UInt8], chain: [UInt8])
    {
        let plain = AccessLogEntryCodec.encode(entry)
        let sealed = plain.withUnsafeBytes { Crypto.seal($0, ad: sealAD(index: index), key: keys.seal) }
        let chain = chain(previous: previous, index: index, sealed: sealed, keys: keys)
        var out: [UInt8] = []
        out.reserveCapacity(12 + sealed.count + 32)
        AccessLogEntryCodec.append32(UInt32(8 + sealed.count + 32), to: &out)
        AccessLogEntryCodec.append(index, to: &out)
        out += sealed
        out += chain
        return (out, chain)
    }

    /// Opens a record's sealed entry and decodes it.
    /// - Returns: the entry, or `nil` when it does not authenticate.
    /// - Throws: ``AccessLogFormatError/malformedEntry(_:)`` for an entry that opens but does not decode.
    static func open(_ record: AccessLogRawRecord, keys: AccessLogKeys) throws(AccessLogFormatError)
        -> AccessLogEntry?
    {
        guard record.sealed.count >= Crypto.nonceBytes + Crypto.tagBytes else { return nil }
        var plain = [UInt8](repeating: 0, count: record.sealed.count - Crypto.nonceBytes - Crypto.tagBytes)
        let opened = record.sealed.withUnsafeBytes { s in
            plain.withUnsafeMutableBytes { p in
                Crypto.open(s, ad: sealAD(index: record.index), key: keys.seal, into: p)
            }
        }
        guard opened else { return nil }
        return try plain.withUnsafeBytes { p in
            Result { () throws(AccessLogFormatError) in try AccessLogEntryCodec.decode(p) }
        }.get()
    }

    /// Reads a whole file (at most `limit` bytes), or `nil` with the reason.
    static func readFile(_ path: String, limit: Int) -> Result<[UInt8], KeychainError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .failure(.io("cannot read \(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            return .failure(.io("\(path) is not a regular file"))
        }
        guard Int(st.st_size) <= limit else { return .failure(.io("\(path) is over \(limit >> 20) MiB")) }
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        return .success(Array(out[0..<done]))
    }
}

/// The count and chain value of the last entry a writer appended, kept
/// outside the log (beside the vault watermarks, `DIRECTORY/log-ID`, 0600),
/// so that entries cut off the end of the log are noticed.
///
/// It does not protect against someone who can write as the user and puts
/// back an older head state together with the log cut to match, or removes
/// both; nor does anything when the directory cannot be written.
public struct AccessLogHead: Sendable, Equatable {
    /// The index of the last entry.
    public var count: UInt64
    /// Its chain value (32 bytes).
    public var chain: [UInt8]

    public init(count: UInt64, chain: [UInt8]) {
        self.count = count
        self.chain = chain
    }

    /// The head state file of `keys`' log in `directory`.
    public static func path(directory: String, keys: AccessLogKeys) -> String { directory + "/log-" + keys.id }

    /// Reads a head state (`COUNT HEX\n`), or `nil` when there is none or it does not parse.
    public static func read(_ path: String) -> AccessLogHead? {
        guard case .success(let bytes) = AccessLogFileFormat.readFile(path, limit: 256) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard parts.count == 2, let count = UInt64(parts[0]), parts[1].utf8.count == 64 else { return nil }
        var chain: [UInt8] = []
        var digits = Array(parts[1].utf8).makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let h = hexValue(high), let l = hexValue(low) else { return nil }
            chain.append(h << 4 | l)
        }
        return AccessLogHead(count: count, chain: chain)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        default: return nil
        }
    }

    /// Writes the state to a new 0600 file renamed over `path` (making its
    /// directory, 0700, when its parent exists). Best effort.
    func write(to path: String) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
        if access(directory, F_OK) != 0 {
            let parent = String(directory[..<(directory.lastIndex(of: "/") ?? directory.endIndex)])
            _ = mkdir(parent, 0o700)
            _ = mkdir(directory, 0o700)
        }
        let temporary = path + ".\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        let text = Array("\(count) \(Sodium.hex(chain))\n".utf8)
        let written = text.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written == text.count && rename(temporary, path) == 0 { return }
        unlink(temporary)
    }
}

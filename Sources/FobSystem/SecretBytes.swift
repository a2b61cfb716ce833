import CSodium

/// Initialises libsodium once per process. Safe to call from any thread, any
/// number of times.
public enum Sodium {
    private static let initialised: Bool = { sodium_init() >= 0 }()

    /// Makes sure libsodium is initialised.
    /// - Important: Fob cannot run without libsodium; a failed initialisation stops the process.
    public static func ensureInitialised() {
        precondition(initialised, "libsodium could not be initialised")
    }

    /// `count` bytes from libsodium's CSPRNG (`randombytes_buf`).
    public static func randomBytes(_ count: Int) -> [UInt8] {
        ensureInitialised()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { randombytes_buf($0.baseAddress!, count) }
        return out
    }
}

/// Bytes of a secret, wiped with `sodium_memzero` and freed when the last
/// reference goes.
///
/// Keys (``SecretBytes/random(count:)`` and everything the vault derives) live
/// in `sodium_malloc` memory: guard pages, a canary, locked against swap.
/// Item secrets, which come and go by the thousand, use `malloc` memory
/// whose pages are locked with a reference count per page (``PageLocks``)
/// where the limit allows, because a guarded allocation costs several
/// system calls; freeing one secret never unlocks a page another still uses.
///
/// Equality is constant-time (`sodium_memcmp`) for equal lengths. The contents
/// are immutable after creation, so an instance may cross threads.
///
/// - Important: Converting to `String` (``unsafeString``) makes a copy that
///   cannot be wiped; do it only to show or send the secret.
public final class SecretBytes: @unchecked Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    private let pointer: UnsafeMutableRawPointer?
    private let guarded: Bool
    /// The number of bytes.
    public let count: Int

    /// Copies `bytes` into wiped-on-free memory.
    public convenience init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        let n = bytes.count
        self.init(count: n) { buffer in
            _ = buffer.initialize(from: bytes)
        }
    }

    /// UTF-8 bytes of `string`.
    /// - Important: `string` itself stays in ordinary memory; prefer byte sources.
    public convenience init(utf8 string: String) {
        self.init(Array(string.utf8))
    }

    /// Allocates `count` bytes and lets `fill` write them.
    /// - Parameter guarded: `true` for key material: `sodium_malloc` memory.
    /// - Important: memory that cannot be had stops the process; see
    ///   ``init(allocating:guarded:fill:)`` for sizes a peer chooses.
    public convenience init(count: Int, guarded: Bool = false, fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Void)
        rethrows
    {
        try self.init(count: count, guarded: guarded, outOfMemory: .stop, fill: fill)!
    }

    /// As ``init(count:guarded:fill:)``, but `nil` when the memory cannot be
    /// had (`sodium_malloc` needs several mappings and locked pages; a
    /// process may run out of either), where that one stops the process:
    /// for allocations a peer can ask for by the thousand.
    public convenience init?(allocating count: Int, guarded: Bool, fill: (UnsafeMutableBufferPointer<UInt8>) -> Void) {
        self.init(count: count, guarded: guarded, outOfMemory: .fail, fill: fill)
    }

    /// What an allocation that cannot be had does.
    private enum OutOfMemory {
        /// Stops the process.
        case stop
        /// Fails the initialiser (`nil`).
        case fail
    }

    /// Allocates `count` bytes (`sodium_malloc` when `guarded`, else
    /// `malloc` with its pages locked by reference, ``PageLocks``) and lets
    /// `fill` write them; bytes `fill` leaves by throwing are wiped and freed.
    private init?(
        count: Int, guarded: Bool, outOfMemory: OutOfMemory, fill: (UnsafeMutableBufferPointer<UInt8>) throws -> Void
    ) rethrows {
        Sodium.ensureInitialised()
        self.count = count
        self.guarded = guarded
        guard count > 0 else {
            pointer = nil
            return
        }
        guard let p = guarded ? sodium_malloc(count) : malloc(count) else {
            if outOfMemory == .stop { fatalError("cannot allocate \(count) bytes") }
            return nil
        }
        if !guarded { PageLocks.retain(p, count: count) }
        pointer = p
        do {
            try fill(UnsafeMutableBufferPointer(start: p.bindMemory(to: UInt8.self, capacity: count), count: count))
        } catch {
            SecretBytes.release(p, count: count, guarded: guarded)
            throw error
        }
    }

    /// `count` random bytes (`randombytes_buf`) in guarded memory, for keys.
    public static func random(count: Int) -> SecretBytes {
        SecretBytes(count: count, guarded: true) { randombytes_buf($0.baseAddress!, count) }
    }

    private static func release(_ p: UnsafeMutableRawPointer, count: Int, guarded: Bool) {
        if guarded {
            sodium_free(p) // zeroes the whole allocation first
        } else {
            sodium_memzero(p, count)
            PageLocks.release(p, count: count)
            free(p)
        }
    }

    deinit {
        if let pointer { SecretBytes.release(pointer, count: count, guarded: guarded) }
    }

    /// Whether the bytes are in memory locked against swap (for tests).
    var isLocked: Bool { pointer.map { guarded || PageLocks.isLocked($0) } ?? true }

    /// The address of the first byte (for tests of page sharing).
    var address: UInt { UInt(bitPattern: pointer) }

    /// Calls `body` with a read-only view of the bytes (empty for a zero-length secret).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// A copy as an ordinary array (for codecs that need one; wipe it after use).
    public var unsafeArray: [UInt8] { withUnsafeBytes { Array($0) } }

    /// The bytes as UTF-8 text, or `nil` if they are not valid UTF-8.
    /// - Important: the returned `String` cannot be wiped.
    public var unsafeString: String? {
        withUnsafeBytes { raw in
            var it = raw.makeIterator()
            var out = ""
            var decoder = UTF8()
            while true {
                switch decoder.decode(&it) {
                case .scalarValue(let s): out.unicodeScalars.append(s)
                case .emptyInput: return out
                case .error: return nil
                }
            }
        }
    }

    /// Whether the bytes are valid UTF-8.
    public var isValidUTF8: Bool { unsafeString != nil }

    /// Constant-time comparison (`sodium_memcmp`) when lengths are equal.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.count == 0 { return true }
        return sodium_memcmp(lhs.pointer!, rhs.pointer!, lhs.count) == 0
    }

    /// Never shows the bytes.
    public var description: String { "SecretBytes(\(count) bytes)" }
    /// Never shows the bytes.
    public var debugDescription: String { description }
}

extension Array where Element == UInt8 {
    /// Overwrites the array's bytes with zeros (`sodium_memzero`).
    public mutating func wipe() {
        withUnsafeMutableBytes { if let b = $0.baseAddress { sodium_memzero(b, $0.count) } }
    }
}

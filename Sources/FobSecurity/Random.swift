import FobStore

// Apple: https://developer.apple.com/documentation/security/1399291-secrandomcopybytes

/// A random-number generator (Apple's `SecRandomRef`); the only one is ``kSecRandomDefault``.
public final class SecRandom: Sendable {
    private init() {}
}

/// Apple's name for a generator reference.
public typealias SecRandomRef = SecRandom

/// The default generator, `nil` as Apple's is: libsodium's `randombytes_buf`
/// (the kernel's `getrandom`).
public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes (Apple's `SecRandomCopyBytes`).
/// - Parameters:
///   - rnd: the generator; pass ``kSecRandomDefault``.
///   - count: how many bytes to write; 0 writes nothing.
///   - bytes: at least `count` writable bytes.
/// - Returns: `errSecSuccess`, or `errSecParam` for a negative count.
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    guard count > 0 else { return errSecSuccess }
    var random = Sodium.randomBytes(count)
    defer { random.wipe() }
    random.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: count) }
    return errSecSuccess
}

import CNettle
import CSodium
import FobSystem

/// The hash function of a one-time code's HMAC (the `algorithm` parameter
/// of an `otpauth://` URI; RFC 6238 §1.2 allows all three).
///
/// HMAC-SHA-256 and HMAC-SHA-512 come from libsodium
/// (`crypto_auth_hmacsha256_*`, `crypto_auth_hmacsha512_*`), HMAC-SHA-1
/// from Nettle (`hmac_sha1_*`), since libsodium has no SHA-1. Keys of any
/// length are accepted, as RFC 2104 §2 requires.
public enum OTPAlgorithm: String, Sendable, Equatable, CaseIterable {
    /// HMAC-SHA-1 (RFC 2104, RFC 4226): 20-byte MACs; the default.
    case sha1 = "SHA1"
    /// HMAC-SHA-256: 32-byte MACs.
    case sha256 = "SHA256"
    /// HMAC-SHA-512: 64-byte MACs.
    case sha512 = "SHA512"

    /// The length of this algorithm's MAC, in bytes: 20, 32 or 64.
    public var macLength: Int {
        switch self {
        case .sha1: return Int(SHA1_DIGEST_SIZE)
        case .sha256: return Int(crypto_auth_hmacsha256_BYTES)
        case .sha512: return Int(crypto_auth_hmacsha512_BYTES)
        }
    }

    /// HMAC of `message` under `key`.
    /// - Parameters:
    ///   - key: the key, any length (a one-time code's decoded secret).
    ///   - message: the message (for HOTP, the 8-byte big-endian counter).
    /// - Returns: the MAC, ``macLength`` bytes.
    /// - Important: the hash states are wiped before returning; the key
    ///   itself stays the caller's to wipe.
    public func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: macLength)
        switch self {
        case .sha1:
            var context = hmac_sha1_ctx()
            nettle_hmac_sha1_set_key(&context, key.count, key)
            nettle_hmac_sha1_update(&context, message.count, message)
            nettle_hmac_sha1_digest(&context, out.count, &out)
            wipe(&context)
        case .sha256:
            sodiumHMAC(
                crypto_auth_hmacsha256_state(), crypto_auth_hmacsha256_init, crypto_auth_hmacsha256_update,
                crypto_auth_hmacsha256_final, key: key, message: message, into: &out)
        case .sha512:
            sodiumHMAC(
                crypto_auth_hmacsha512_state(), crypto_auth_hmacsha512_init, crypto_auth_hmacsha512_update,
                crypto_auth_hmacsha512_final, key: key, message: message, into: &out)
        }
        return out
    }

    /// One libsodium HMAC (`crypto_auth_hmacsha*_init`, `_update`, `_final`)
    /// of `message` under `key` into `out`; the state is wiped after.
    private func sodiumHMAC<State>(
        _ initial: State,
        _ start: (UnsafeMutablePointer<State>, UnsafePointer<UInt8>, Int) -> Int32,
        _ update: (UnsafeMutablePointer<State>, UnsafePointer<UInt8>?, UInt64) -> Int32,
        _ finish: (UnsafeMutablePointer<State>, UnsafeMutablePointer<UInt8>) -> Int32,
        key: [UInt8], message: [UInt8], into out: inout [UInt8]
    ) {
        Sodium.ensureInitialised()
        var state = initial
        _ = start(&state, key, key.count)
        _ = update(&state, message, UInt64(message.count))
        _ = finish(&state, &out)
        wipe(&state)
    }

    /// Zeroes a hash state (key-derived pads) with `sodium_memzero`, which
    /// the compiler cannot drop.
    private func wipe<T>(_ value: inout T) {
        Sodium.ensureInitialised()
        withUnsafeMutableBytes(of: &value) { sodium_memzero($0.baseAddress, $0.count) }
    }
}

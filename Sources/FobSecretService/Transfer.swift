import CSecretService
import FobSystem

/// Why a secret could not cross a session.
public enum TransferError: Error, Equatable, Sendable {
    /// The client's DH public key is empty, longer than 128 bytes, ≤ 1 or ≥ p − 1.
    case badPublicKey
    /// The parameters (IV) or the ciphertext's length or padding are wrong.
    case badCiphertext
    /// The session key's guarded memory could not be allocated
    /// (`org.freedesktop.DBus.Error.NoMemory`): the process is out of
    /// mappings or locked pages.
    case noMemory
}

/// How secrets cross one Secret Service session: in clear (`plain`) or
/// under `dh-ietf1024-sha256-aes128-cbc-pkcs7` (Secret Service API 0.2,
/// "Transfer of Secrets"): Diffie-Hellman in RFC 2409's second Oakley group
/// (g = 2), the shared secret left-padded to 128 bytes, HKDF-SHA256
/// (RFC 5869, no salt, no info) to a 16-byte AES-128 key, AES-128-CBC with
/// PKCS#7 padding and a fresh IV per secret.
public final class SessionCipher: @unchecked Sendable {
    /// The `plain` algorithm's name.
    public static let plainName = "plain"
    /// The DH algorithm's name.
    public static let dhName = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// The AES key, or `nil` for `plain`; wiped when the session ends.
    private let key: SecretBytes?

    private init(key: SecretBytes?) { self.key = key }

    /// Whether secrets travel in clear.
    public var isPlain: Bool { key == nil }

    /// A `plain` session.
    public static let plain = SessionCipher(key: nil)

    /// Answers a client's DH public key with a fresh private exponent.
    /// - Parameter clientPublic: the client's public key, big-endian (short ones are left-padded).
    /// - Returns: the cipher and the provider's 128-byte public key.
    /// - Throws: `.badPublicKey`, `.noMemory`.
    public static func negotiate(clientPublic: [UInt8]) throws(TransferError) -> (SessionCipher, [UInt8]) {
        var exponent = Sodium.randomBytes(128)
        defer { exponent.wipe() }
        return try negotiate(clientPublic: clientPublic, privateExponent: exponent)
    }

    /// As ``negotiate(clientPublic:)`` with a given private exponent (for known-answer tests).
    /// - Parameters:
    ///   - clientPublic: the client's public key, 1 to 128 bytes big-endian.
    ///   - privateExponent: the provider's exponent, big-endian.
    /// - Throws: `.badPublicKey` when the key is empty, longer than 128 bytes, ≤ 1 or ≥ p − 1;
    ///   `.noMemory` when the key's guarded memory cannot be allocated.
    public static func negotiate(clientPublic: [UInt8], privateExponent: [UInt8]) throws(TransferError)
        -> (SessionCipher, [UInt8])
    {
        guard !clientPublic.isEmpty, clientPublic.count <= 128 else { throw .badPublicKey }
        let generator: [UInt8] = [2]
        var serverPublic = [UInt8](repeating: 0, count: 128)
        guard fob_ss_oakley2_powm(generator, 1, privateExponent, privateExponent.count, &serverPublic) == 0 else {
            throw .badPublicKey
        }
        var shared = [UInt8](repeating: 0, count: 128)
        defer { shared.wipe() }
        guard
            fob_ss_oakley2_powm(clientPublic, clientPublic.count, privateExponent, privateExponent.count, &shared) == 0
        else { throw .badPublicKey }
        let derived = SecretBytes(allocating: 16, guarded: true) { out in
            shared.withUnsafeBufferPointer { fob_ss_hkdf_sha256($0.baseAddress, 128, out.baseAddress, 16) }
        }
        guard let key = derived else { throw .noMemory }
        return (SessionCipher(key: key), serverPublic)
    }

    /// Encrypts a secret for the client.
    /// - Returns: the parameters (the 16-byte IV, or empty for `plain`) and the value.
    public func seal(_ secret: SecretBytes) -> (parameters: [UInt8], value: [UInt8]) {
        guard let key else { return ([], secret.unsafeArray) }
        return seal(secret, iv: Sodium.randomBytes(16), key: key)
    }

    /// As ``seal(_:)`` with a given IV (for known-answer tests).
    public func seal(_ secret: SecretBytes, iv: [UInt8]) -> (parameters: [UInt8], value: [UInt8]) {
        guard let key else { return ([], secret.unsafeArray) }
        return seal(secret, iv: iv, key: key)
    }

    private func seal(_ secret: SecretBytes, iv: [UInt8], key: SecretBytes) -> (parameters: [UInt8], value: [UInt8]) {
        let pad = 16 - secret.count % 16
        var block = secret.unsafeArray + [UInt8](repeating: UInt8(pad), count: pad)
        defer { block.wipe() }
        var out = [UInt8](repeating: 0, count: block.count)
        key.withUnsafeBytes { k in
            fob_ss_aes128_cbc(
                1, k.baseAddress!.assumingMemoryBound(to: UInt8.self), iv, block, block.count, &out)
        }
        return (iv, out)
    }

    /// Decrypts a secret the client sent.
    /// - Throws: `.badCiphertext` for an IV that is not 16 bytes, a length
    ///   that is not a whole number of blocks, or bad padding.
    public func open(parameters: [UInt8], value: [UInt8]) throws(TransferError) -> SecretBytes {
        guard let key else { return SecretBytes(value) }
        guard parameters.count == 16, !value.isEmpty, value.count % 16 == 0 else { throw .badCiphertext }
        var clear = [UInt8](repeating: 0, count: value.count)
        defer { clear.wipe() }
        key.withUnsafeBytes { k in
            fob_ss_aes128_cbc(
                0, k.baseAddress!.assumingMemoryBound(to: UInt8.self), parameters, value, value.count, &clear)
        }
        let pad = Int(clear[clear.count - 1])
        guard (1...16).contains(pad), clear.suffix(pad).allSatisfy({ Int($0) == pad }) else { throw .badCiphertext }
        return SecretBytes(clear[0..<(clear.count - pad)])
    }
}

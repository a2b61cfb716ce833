import CSodium
import FobStore
import FobSystem
import FoundationEssentials

/// A device's Ed25519 signing key pair (libsodium `crypto_sign`): the
/// secret half (64 bytes, libsodium's seed-and-public-key form) lives in
/// guarded memory and is kept sealed in the vault; the public half
/// (32 bytes) goes into the device roster.
public struct DeviceSigningKey: Sendable {
    /// The public half, 32 bytes.
    public let publicKey: [UInt8]
    /// The secret half, 64 bytes (`crypto_sign_SECRETKEYBYTES`).
    public let secretKey: SecretBytes

    /// A new random key pair (`crypto_sign_keypair`).
    public static func generate() -> DeviceSigningKey {
        Sodium.ensureInitialised()
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        let sk = SecretBytes(count: Int(crypto_sign_SECRETKEYBYTES), guarded: true) { buffer in
            _ = crypto_sign_keypair(&pk, buffer.baseAddress!)
        }
        return DeviceSigningKey(publicKey: pk, secretKey: sk)
    }

    /// The key pair whose secret half is `secretKey` (as the vault keeps it).
    /// - Throws: ``TreeFormatError/malformed(_:)`` when it is not 64 bytes.
    public init(secretKey: SecretBytes) throws(TreeFormatError) {
        guard secretKey.count == Int(crypto_sign_SECRETKEYBYTES) else { throw .malformed("a signing key") }
        var pk = [UInt8](repeating: 0, count: Int(crypto_sign_PUBLICKEYBYTES))
        secretKey.withUnsafeBytes { raw in
            _ = crypto_sign_ed25519_sk_to_pk(&pk, raw.bindMemory(to: UInt8.self).baseAddress!)
        }
        self.init(publicKey: pk, secretKey: secretKey)
    }

    private init(publicKey: [UInt8], secretKey: SecretBytes) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A detached signature (64 bytes) over `message`.
    func signature(_ message: [UInt8]) -> [UInt8] {
        var sig = [UInt8](repeating: 0, count: Int(crypto_sign_BYTES))
        secretKey.withUnsafeBytes { raw in
            _ = crypto_sign_detached(
                &sig, nil, message, UInt64(message.count), raw.bindMemory(to: UInt8.self).baseAddress!)
        }
        return sig
    }

    /// The fingerprint of `publicKey` as users compare it: `SHA256:` and
    /// the key's SHA-256 in base64 without padding (as `ssh-keygen -l` shows keys).
    public static func fingerprint(_ publicKey: [UInt8]) -> String {
        Sodium.ensureInitialised()
        var hash = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        crypto_hash_sha256(&hash, publicKey, UInt64(publicKey.count))
        let variant = sodium_base64_VARIANT_ORIGINAL_NO_PADDING
        var text = [CChar](repeating: 0, count: sodium_base64_encoded_len(hash.count, variant))
        _ = sodium_bin2base64(&text, text.count, hash, hash.count, variant)
        return "SHA256:" + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `signature` is `publicKey`'s over `message` (`crypto_sign_verify_detached`).
    static func verifies(_ signature: [UInt8], _ message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES)
        else { return false }
        Sodium.ensureInitialised()
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}

/// The envelope of every file a device writes to the sync tree: "FSG1",
/// the 64-byte Ed25519 signature, then the file's own bytes. The signature
/// covers "fob-sync signed 1", a zero byte, the path's length (4 bytes,
/// big-endian), the path, then the content, so a file moved to another
/// path (another device's id, item or counter) no longer verifies.
public enum SignedFile {
    static let magic = Array("FSG1".utf8)

    static func message(path: String, content: some Collection<UInt8>) -> [UInt8] {
        var w = ByteWriter()
        w.bytes.append(contentsOf: Array("fob-sync signed 1".utf8) + [0])
        w.string(path)
        w.bytes.append(contentsOf: content)
        return w.bytes
    }

    /// `content` signed by `key` for `path`.
    public static func signed(_ content: [UInt8], path: String, key: DeviceSigningKey) -> [UInt8] {
        magic + key.signature(message(path: path, content: content)) + content
    }

    /// The signature and content of an envelope, unverified (the fuzz
    /// target `sync-tree` calls it).
    /// - Throws: ``TreeFormatError/malformed(_:)`` without the magic,
    ///   ``TreeFormatError/truncated`` when shorter than magic and signature.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(TreeFormatError) -> (
        signature: [UInt8], content: [UInt8]
    ) {
        guard bytes.count >= 4, Array(bytes.prefix(4)) == magic else { throw .malformed("not a signed file") }
        let sigEnd = 4 + Int(crypto_sign_BYTES)
        guard bytes.count >= sigEnd else { throw .truncated }
        return (Array(bytes[4..<sigEnd]), Array(bytes[sigEnd...]))
    }

    /// The content of `bytes`, unverified: the envelope taken off, or
    /// `bytes` as they are when they have none (a file written before
    /// signing keys). Only where the signature is checked later.
    static func content(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.starts(with: magic), bytes.count >= 4 + Int(crypto_sign_BYTES) else { return bytes }
        return Array(bytes.dropFirst(4 + Int(crypto_sign_BYTES)))
    }

    /// The content of `bytes` when `publicKey` signed it for `path`.
    /// - Throws: ``TreeFormatError/unauthentic`` when the signature does not
    ///   verify (another signer, another path, a changed byte), or what
    ///   ``parse(_:)`` throws.
    public static func open(_ bytes: [UInt8], path: String, publicKey: [UInt8]) throws(TreeFormatError) -> [UInt8] {
        let (signature, content) = try reading(bytes) { (raw) throws(TreeFormatError) in try parse(raw) }
        guard DeviceSigningKey.verifies(signature, message(path: path, content: content), publicKey: publicKey)
        else { throw .unauthentic }
        return content
    }
}

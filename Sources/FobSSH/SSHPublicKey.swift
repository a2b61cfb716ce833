import CSodium
import FobSystem

/// The key types Fob keeps and signs with.
public enum SSHKeyType: String, Sendable, CaseIterable, Codable {
    /// Ed25519 (RFC 8709), signed by libsodium.
    case ed25519 = "ssh-ed25519"
    /// ECDSA over NIST P-256 with SHA-256 (RFC 5656), signed by Nettle.
    case ecdsaP256 = "ecdsa-sha2-nistp256"
    /// RSA (RFC 8332: signatures rsa-sha2-256 and rsa-sha2-512), signed by Nettle.
    case rsa = "ssh-rsa"

    /// The word `fob ssh keygen --type` takes and `fob ssh ls` shows: `ed25519`, `ecdsa` or `rsa`.
    public var shortName: String {
        switch self {
        case .ed25519: "ed25519"
        case .ecdsaP256: "ecdsa"
        case .rsa: "rsa"
        }
    }

    /// The type for a short name (`ed25519`, `ecdsa`, `rsa`), or `nil`.
    public init?(shortName: String) {
        guard let found = SSHKeyType.allCases.first(where: { $0.shortName == shortName }) else { return nil }
        self = found
    }
}

/// Why a key, a key file or a signature could not be used.
public enum SSHKeyError: Error, Equatable, Sendable {
    /// The bytes are not in the encoding their field needs.
    case wire(SSHWireError)
    /// A key type Fob does not keep (certificates, security keys, DSA, other curves); the name as given.
    case unsupportedKeyType(String)
    /// A key whose parts do not belong together (a public half that does not match the private one).
    case inconsistentKey
    /// An RSA modulus under 2048 or over 8192 bits.
    case unsupportedKeySize(Int)
    /// A signature algorithm the key cannot make: `ssh-rsa` (SHA-1) or unknown flags.
    case unsupportedSignature(String)
    /// The library refused the operation (Nettle or libsodium returned failure).
    case signingFailed
    /// A key file Fob cannot read; the reason in words.
    case badKeyFile(String)
    /// A key file protected by a passphrase; `fob ssh import` hands it to `ssh-add`.
    case encryptedKeyFile

    /// Runs `body`, which reads key bytes, with its errors as key errors:
    /// an ``SSHWireError`` becomes ``wire(_:)``, a key error stays as
    /// thrown, and any other error (a library's refusal) is ``inconsistentKey``.
    static func reading<Value>(_ body: () throws -> Value) throws(SSHKeyError) -> Value {
        do {
            return try body()
        } catch let error as SSHWireError {
            throw .wire(error)
        } catch let error as SSHKeyError {
            throw error
        } catch {
            throw .inconsistentKey
        }
    }
}

/// An SSH public key as RFC 4253 §6.6 encodes it (the "key blob").
///
/// Keys Fob cannot sign with still parse (as ``other(type:blob:)``) so that
/// host keys of any type can be compared with known_hosts.
public enum SSHPublicKey: Hashable, Sendable {
    /// The 32-byte Ed25519 public key.
    case ed25519([UInt8])
    /// The P-256 point, uncompressed: 0x04 ‖ x (32 bytes) ‖ y (32 bytes).
    case ecdsaP256([UInt8])
    /// The RSA public exponent and modulus, big-endian magnitudes.
    case rsa(e: [UInt8], n: [UInt8])
    /// Any other key type: its name and whole blob.
    case other(type: String, blob: [UInt8])

    /// Reads a key blob.
    /// - Throws: ``SSHKeyError/wire(_:)`` for a damaged blob,
    ///   ``SSHKeyError/inconsistentKey`` for a wrong length or point.
    public init(blob: [UInt8]) throws(SSHKeyError) {
        self = try SSHKeyError.reading {
            var reader = SSHReader(blob)
            let name = try reader.text("key type", limit: 256)
            let key: SSHPublicKey
            switch name {
            case SSHKeyType.ed25519.rawValue:
                let bytes = try reader.string("ed25519 key", limit: 64)
                guard bytes.count == 32 else { throw SSHKeyError.inconsistentKey }
                key = .ed25519(bytes)
            case SSHKeyType.ecdsaP256.rawValue:
                guard try reader.text("curve", limit: 64) == "nistp256" else { throw SSHKeyError.inconsistentKey }
                let point = try reader.string("point", limit: 256)
                guard point.count == 65, point[0] == 4 else { throw SSHKeyError.inconsistentKey }
                key = .ecdsaP256(point)
            case SSHKeyType.rsa.rawValue:
                let e = try reader.mpint("e")
                let n = try reader.mpint("n")
                key = .rsa(e: e, n: n)
            default:
                return .other(type: name, blob: blob)
            }
            try reader.expectEnd()
            return key
        }
    }

    /// Reads an authorized_keys / `.pub` line: `TYPE BASE64 [COMMENT]` (no options).
    /// - Returns: the key and the comment (empty when none).
    /// - Throws: ``SSHKeyError/badKeyFile(_:)`` for text that is not such a line.
    public static func parse(line: String) throws(SSHKeyError) -> (key: SSHPublicKey, comment: String) {
        let fields = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard fields.count >= 2, let blob = Base64.decode(String(fields[1])) else {
            throw .badKeyFile("not a public key line")
        }
        let key = try SSHPublicKey(blob: blob)
        guard key.typeName == fields[0] else { throw .badKeyFile("the key type and the key's bytes disagree") }
        let comment = fields.count > 2 ? String(fields[2]).trimmingSpaces() : ""
        return (key, comment)
    }

    /// The key's type name as SSH spells it (`ssh-ed25519` …).
    public var typeName: String {
        switch self {
        case .ed25519: SSHKeyType.ed25519.rawValue
        case .ecdsaP256: SSHKeyType.ecdsaP256.rawValue
        case .rsa: SSHKeyType.rsa.rawValue
        case .other(let type, _): type
        }
    }

    /// The key's type when Fob can sign with it.
    public var keyType: SSHKeyType? { SSHKeyType(rawValue: typeName) }

    /// The key blob (RFC 4253 §6.6).
    public var blob: [UInt8] {
        var writer = SSHWriter()
        switch self {
        case .ed25519(let key):
            writer.string(typeName)
            writer.string(key)
        case .ecdsaP256(let point):
            writer.string(typeName)
            writer.string("nistp256")
            writer.string(point)
        case .rsa(let e, let n):
            writer.string(typeName)
            writer.mpint(e)
            writer.mpint(n)
        case .other(_, let blob):
            return blob
        }
        return writer.bytes
    }

    /// The key's size in bits as `ssh-keygen -l` shows it (256 for Ed25519 and P-256).
    public var bits: Int {
        switch self {
        case .ed25519, .ecdsaP256: 256
        case .rsa(_, let n): n.first.map { n.count * 8 - $0.leadingZeroBitCount } ?? 0
        case .other: 0
        }
    }

    /// The SHA-256 fingerprint as `ssh-keygen -l` prints it: `SHA256:` and
    /// unpadded base64 of the blob's SHA-256 digest.
    public var fingerprint: String { "SHA256:" + Base64.encode(SHA2.sha256(blob), padding: false) }

    /// The one-line public key (`TYPE BASE64 COMMENT`), as in a `.pub` file or `ssh-add -L`.
    public func line(comment: String) -> String {
        let text = typeName + " " + Base64.encode(blob, padding: true)
        return comment.isEmpty ? text : text + " " + comment
    }

    /// Whether `signature` (an SSH signature blob: algorithm name, then the
    /// signature) is this key's valid signature over `data`. Host keys sign
    /// with `ssh-ed25519`, `ecdsa-sha2-nistp256`, `rsa-sha2-256` or
    /// `rsa-sha2-512`; anything else (SHA-1 `ssh-rsa` too) does not verify.
    public func verify(signature: [UInt8], over data: [UInt8]) -> Bool {
        var reader = SSHReader(signature)
        guard let algorithm = try? reader.text("algorithm", limit: 64),
            let body = try? reader.string("signature", limit: 2048), reader.isAtEnd
        else { return false }
        switch (self, algorithm) {
        case (.ed25519(let key), SSHKeyType.ed25519.rawValue):
            guard body.count == 64 else { return false }
            Sodium.ensureInitialised()
            return crypto_sign_verify_detached(body, data, UInt64(data.count), key) == 0
        case (.ecdsaP256(let point), SSHKeyType.ecdsaP256.rawValue):
            var inner = SSHReader(body)
            guard let r = try? inner.mpint("r"), let s = try? inner.mpint("s"), inner.isAtEnd else { return false }
            return NettleKeys.p256Verify(point: point, digest: SHA2.sha256(data), r: r, s: s)
        case (.rsa(let e, let n), "rsa-sha2-256"):
            return NettleKeys.rsaVerify(e: e, n: n, hash: 256, digest: SHA2.sha256(data), signature: body)
        case (.rsa(let e, let n), "rsa-sha2-512"):
            return NettleKeys.rsaVerify(e: e, n: n, hash: 512, digest: SHA2.sha512(data), signature: body)
        default:
            return false
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" || first == "\r" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" || last == "\r" { scalars.removeLast() }
        return String(scalars)
    }
}

/// SHA-256 and SHA-512 from libsodium.
enum SHA2 {
    static func sha256(_ data: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialised()
        var out = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256(&out, data, UInt64(data.count))
        return out
    }

    static func sha512(_ data: [UInt8]) -> [UInt8] {
        Sodium.ensureInitialised()
        var out = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512(&out, data, UInt64(data.count))
        return out
    }
}

/// Base64 (RFC 4648 §4) through libsodium.
public enum Base64 {
    /// `bytes` in base64, with or without `=` padding.
    public static func encode(_ bytes: [UInt8], padding: Bool) -> String {
        Sodium.ensureInitialised()
        let variant = padding ? sodium_base64_VARIANT_ORIGINAL : sodium_base64_VARIANT_ORIGINAL_NO_PADDING
        let length = sodium_base64_encoded_len(bytes.count, variant)
        var out = [CChar](repeating: 0, count: length)
        _ = sodium_bin2base64(&out, length, bytes, bytes.count, variant)
        return String(decoding: out.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The bytes of padded base64 text, line breaks and spaces ignored; `nil` for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        Sodium.ensureInitialised()
        let input = Array(text.utf8)
        var out = [UInt8](repeating: 0, count: input.count * 3 / 4 + 3)
        var length = 0
        var end: UnsafePointer<CChar>? = nil
        let status = input.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { chars in
                sodium_base642bin(
                    &out, out.count, chars.baseAddress, chars.count, " \t\r\n", &length, &end,
                    sodium_base64_VARIANT_ORIGINAL)
            }
        }
        defer { out.wipe() }
        guard status == 0, let end else { return nil }
        let consumed = input.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: CChar.self) { end - $0.baseAddress! }
        }
        guard consumed == input.count else { return nil }
        return Array(out.prefix(length))
    }
}

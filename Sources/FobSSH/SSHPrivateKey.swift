import CSodium
import FobSystem

/// A private key Fob signs with: Ed25519 (libsodium), ECDSA P-256 or RSA (Nettle).
///
/// The private parts live in ``SecretBytes`` (wiped when the last reference
/// goes); nothing here writes them anywhere but ``privateWire()``, the
/// encoding the vault seals as an `ssh-key` item's secret.
public final class SSHPrivateKey: @unchecked Sendable {
    /// The public half.
    public let publicKey: SSHPublicKey
    private let material: Material

    private enum Material {
        /// libsodium's 64-byte secret key: seed ‖ public key.
        case ed25519(SecretBytes)
        /// The 32-byte big-endian scalar.
        case ecdsaP256(SecretBytes)
        /// d, iqmp, p, q, big-endian magnitudes.
        case rsa([SecretBytes])
    }

    private init(publicKey: SSHPublicKey, material: Material) {
        self.publicKey = publicKey
        self.material = material
    }

    /// The key's type.
    public var type: SSHKeyType {
        switch material {
        case .ed25519: .ed25519
        case .ecdsaP256: .ecdsaP256
        case .rsa: .rsa
        }
    }

    /// Makes a new key: Ed25519 by `crypto_sign_keypair`, P-256 by Nettle's
    /// `ecdsa_generate_keypair`, RSA (e = 65537) by Nettle's `rsa_generate_keypair`.
    /// - Parameter bits: the RSA modulus size (2048 to 8192, a multiple of 8); ignored for the others.
    /// - Throws: ``SSHKeyError/unsupportedKeySize(_:)``, ``SSHKeyError/signingFailed``.
    public static func generate(_ type: SSHKeyType, bits: Int = 3072) throws(SSHKeyError) -> SSHPrivateKey {
        Sodium.ensureInitialised()
        switch type {
        case .ed25519:
            var publicKey = [UInt8](repeating: 0, count: 32)
            let secret = SecretBytes(count: 64, guarded: true) { crypto_sign_keypair(&publicKey, $0.baseAddress!) }
            return SSHPrivateKey(publicKey: .ed25519(publicKey), material: .ed25519(secret))
        case .ecdsaP256:
            let (scalar, point) = NettleKeys.p256Generate()
            return SSHPrivateKey(publicKey: .ecdsaP256(point), material: .ecdsaP256(scalar))
        case .rsa:
            guard (2048...8192).contains(bits), bits % 8 == 0 else { throw .unsupportedKeySize(bits) }
            let parts = try NettleKeys.rsaGenerate(bits: bits)
            return SSHPrivateKey(publicKey: .rsa(e: parts.e, n: parts.n), material: .rsa(parts.secrets))
        }
    }

    /// Reads a private key in the encoding of the agent protocol's
    /// ADD_IDENTITY and of openssh-key-v1's private section (without the
    /// comment): `string type`, then by type `string pk, string sk`
    /// (Ed25519), `string curve, string Q, mpint d` (P-256), or
    /// `mpint n, e, d, iqmp, p, q` (RSA). Checks that the halves belong together.
    /// - Throws: ``SSHKeyError/wire(_:)``, ``SSHKeyError/unsupportedKeyType(_:)``,
    ///   ``SSHKeyError/inconsistentKey``, ``SSHKeyError/unsupportedKeySize(_:)``.
    public static func read(privateWire reader: inout SSHReader) throws(SSHKeyError) -> SSHPrivateKey {
        try SSHKeyError.reading {
            let name = try reader.text("key type", limit: 256)
            switch name {
            case SSHKeyType.ed25519.rawValue:
                let publicKey = try reader.string("ed25519 public key", limit: 64)
                let secret = try reader.secretString("ed25519 secret key")
                return try ed25519(publicKey: publicKey, secret: secret)
            case SSHKeyType.ecdsaP256.rawValue:
                guard try reader.text("curve", limit: 64) == "nistp256" else {
                    throw SSHKeyError.unsupportedKeyType(name)
                }
                let point = try reader.string("point", limit: 256)
                let scalar = try reader.secretMpint("scalar")
                return try p256(point: point, scalar: scalar)
            case SSHKeyType.rsa.rawValue:
                let n = try reader.mpint("n")
                let e = try reader.mpint("e")
                var secrets: [SecretBytes] = []
                for field in ["d", "iqmp", "p", "q"] { secrets.append(try reader.secretMpint(field)) }
                return try rsa(n: n, e: e, secrets: secrets)
            default:
                throw SSHKeyError.unsupportedKeyType(name)
            }
        }
    }

    static func ed25519(publicKey: [UInt8], secret: SecretBytes) throws(SSHKeyError) -> SSHPrivateKey {
        guard publicKey.count == 32, secret.count == 64 else { throw .inconsistentKey }
        var derived = [UInt8](repeating: 0, count: 32)
        var scratch = [UInt8](repeating: 0, count: 64)
        defer { scratch.wipe() }
        secret.withUnsafeBytes { raw in
            _ = crypto_sign_seed_keypair(&derived, &scratch, raw.bindMemory(to: UInt8.self).baseAddress!)
        }
        let stored = secret.withUnsafeBytes { Array($0[32..<64]) }
        guard derived == publicKey, stored == publicKey else { throw .inconsistentKey }
        return SSHPrivateKey(publicKey: .ed25519(publicKey), material: .ed25519(secret))
    }

    static func p256(point: [UInt8], scalar: SecretBytes) throws(SSHKeyError) -> SSHPrivateKey {
        let padded: SecretBytes
        if scalar.count < 32 {
            padded = SecretBytes(count: 32, guarded: true) { out in
                out.initialize(repeating: 0)
                scalar.withUnsafeBytes { raw in
                    for (index, byte) in raw.enumerated() { out[32 - raw.count + index] = byte }
                }
            }
        } else {
            padded = scalar
        }
        guard padded.count == 32, let derived = NettleKeys.p256Public(scalar: padded), derived == point else {
            throw .inconsistentKey
        }
        return SSHPrivateKey(publicKey: .ecdsaP256(point), material: .ecdsaP256(padded))
    }

    static func rsa(n: [UInt8], e: [UInt8], secrets: [SecretBytes]) throws(SSHKeyError) -> SSHPrivateKey {
        let key = SSHPrivateKey(publicKey: .rsa(e: e, n: n), material: .rsa(secrets))
        let size = key.publicKey.bits
        guard (2048...8192).contains(size) else { throw .unsupportedKeySize(size) }
        // A key whose parts do not belong together signs nothing that verifies.
        let probe = Array("fob ssh key check".utf8)
        guard let signature = try? key.sign(probe, flags: SSHSignFlags.rsaSHA256),
            key.publicKey.verify(signature: signature, over: probe)
        else { throw .inconsistentKey }
        return key
    }

    /// The private key in the encoding ``read(privateWire:)`` reads.
    /// - Important: the result is the whole private key; seal or wipe it.
    public func privateWire() -> SecretBytes {
        var writer = SSHWriter()
        defer { writer.wipe() }
        writer.string(publicKey.typeName)
        switch (material, publicKey) {
        case (.ed25519(let secret), .ed25519(let key)):
            writer.string(key)
            secret.withUnsafeBytes { writer.string($0) }
        case (.ecdsaP256(let scalar), .ecdsaP256(let point)):
            writer.string("nistp256")
            writer.string(point)
            var magnitude = scalar.unsafeArray
            writer.mpint(magnitude)
            magnitude.wipe()
        case (.rsa(let secrets), .rsa(let e, let n)):
            writer.mpint(n)
            writer.mpint(e)
            for secret in secrets {
                var magnitude = secret.unsafeArray
                writer.mpint(magnitude)
                magnitude.wipe()
            }
        default:
            break
        }
        return SecretBytes(writer.bytes)
    }

    /// Signs `data` as SSH does (RFC 4253 §6.6): the result is the signature
    /// blob, `string algorithm ‖ string signature`. Ed25519 signs the data
    /// itself; P-256 signs its SHA-256 digest, r and s as mpints; RSA signs
    /// its SHA-256 (`flags` has ``SSHSignFlags/rsaSHA256``) or SHA-512
    /// (``SSHSignFlags/rsaSHA512``) digest with PKCS #1 v1.5.
    /// - Throws: ``SSHKeyError/unsupportedSignature(_:)`` for an RSA request
    ///   without either flag (SHA-1 `ssh-rsa`, which Fob does not make),
    ///   ``SSHKeyError/signingFailed`` when the library refuses.
    public func sign(_ data: [UInt8], flags: UInt32) throws(SSHKeyError) -> [UInt8] {
        var writer = SSHWriter()
        switch (material, publicKey) {
        case (.ed25519(let secret), _):
            var signature = [UInt8](repeating: 0, count: 64)
            let status = secret.withUnsafeBytes { raw in
                crypto_sign_detached(
                    &signature, nil, data, UInt64(data.count), raw.bindMemory(to: UInt8.self).baseAddress!)
            }
            guard status == 0 else { throw .signingFailed }
            writer.string(SSHKeyType.ed25519.rawValue)
            writer.string(signature)
        case (.ecdsaP256(let scalar), _):
            let (r, s) = try NettleKeys.p256Sign(scalar: scalar, digest: SHA2.sha256(data))
            var inner = SSHWriter()
            inner.mpint(r)
            inner.mpint(s)
            writer.string(SSHKeyType.ecdsaP256.rawValue)
            writer.string(inner.bytes)
        case (.rsa(let secrets), .rsa(let e, let n)):
            let (name, hash, digest): (String, Int32, [UInt8])
            if flags & SSHSignFlags.rsaSHA512 != 0 {
                (name, hash, digest) = ("rsa-sha2-512", 512, SHA2.sha512(data))
            } else if flags & SSHSignFlags.rsaSHA256 != 0 {
                (name, hash, digest) = ("rsa-sha2-256", 256, SHA2.sha256(data))
            } else {
                throw .unsupportedSignature("ssh-rsa")
            }
            let signature = try NettleKeys.rsaSign(n: n, e: e, secrets: secrets, hash: hash, digest: digest)
            writer.string(name)
            writer.string(signature)
        default:
            throw .signingFailed
        }
        return writer.bytes
    }
}

/// The flags of an agent SIGN_REQUEST (RFC 9987 §4.5.1).
public enum SSHSignFlags {
    /// SSH_AGENT_RSA_SHA2_256: an RSA key signs with rsa-sha2-256.
    public static let rsaSHA256: UInt32 = 2
    /// SSH_AGENT_RSA_SHA2_512: an RSA key signs with rsa-sha2-512.
    public static let rsaSHA512: UInt32 = 4
}

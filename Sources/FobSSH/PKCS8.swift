import CSodium
import FobSystem

/// A minimal DER reader (ITU-T X.690) for the private key structures of
/// PKCS #8, PKCS #1 and SEC 1: definite lengths only, as DER requires.
struct DERReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    /// The next element's tag without reading it, or `nil` at the end.
    var nextTag: UInt8? { offset < bytes.count ? bytes[offset] : nil }

    /// The contents of the next element, which must have tag `tag`.
    mutating func element(_ tag: UInt8, _ what: String) throws(SSHKeyError) -> [UInt8] {
        guard offset + 2 <= bytes.count, bytes[offset] == tag else { throw .badKeyFile("expected \(what)") }
        var length = Int(bytes[offset + 1])
        offset += 2
        if length & 0x80 != 0 {
            let octets = length & 0x7f
            guard (1...4).contains(octets), offset + octets <= bytes.count else {
                throw .badKeyFile("bad length in \(what)")
            }
            length = bytes[offset..<offset + octets].reduce(0) { $0 << 8 | Int($1) }
            offset += octets
        }
        guard length <= bytes.count - offset else { throw .badKeyFile("\(what) runs past the end") }
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }

    /// A non-negative INTEGER's magnitude, leading zeros dropped.
    mutating func unsignedInteger(_ what: String) throws(SSHKeyError) -> [UInt8] {
        let raw = try element(0x02, what)
        guard let first = raw.first, first & 0x80 == 0 else { throw .badKeyFile("\(what) is not a positive integer") }
        return Array(raw.drop { $0 == 0 })
    }
}

/// The private key structures inside PEM files.
enum PKCS8 {
    static let ed25519OID: [UInt8] = [0x2B, 0x65, 0x70]
    static let ecPublicKeyOID: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    static let p256OID: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    static let rsaOID: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]

    /// PrivateKeyInfo / OneAsymmetricKey (RFC 5208, RFC 5958).
    static func privateKeyInfo(_ bytes: [UInt8]) throws(SSHKeyError) -> SSHPrivateKey {
        var outer = DERReader(bytes)
        var info = DERReader(try outer.element(0x30, "PrivateKeyInfo"))
        let version = try info.unsignedInteger("version")
        guard version.count <= 1, (version.first ?? 0) <= 1 else { throw .badKeyFile("PKCS #8 version") }
        var algorithm = DERReader(try info.element(0x30, "AlgorithmIdentifier"))
        let oid = try algorithm.element(0x06, "algorithm")
        var privateKey = try info.element(0x04, "privateKey")
        defer { privateKey.wipe() }
        switch oid {
        case ed25519OID:
            var inner = DERReader(privateKey)
            var seed = try inner.element(0x04, "Ed25519 private key")
            defer { seed.wipe() }
            guard seed.count == 32 else { throw .inconsistentKey }
            var publicKey = [UInt8](repeating: 0, count: 32)
            let secret = SecretBytes(count: 64, guarded: true) {
                crypto_sign_seed_keypair(&publicKey, $0.baseAddress!, seed)
            }
            return try SSHPrivateKey.ed25519(publicKey: publicKey, secret: secret)
        case ecPublicKeyOID:
            guard try algorithm.element(0x06, "curve") == p256OID else {
                throw .unsupportedKeyType("EC key on another curve")
            }
            return try ecPrivateKey(privateKey, point: nil)
        case rsaOID:
            return try rsaPrivateKey(privateKey)
        default:
            throw .unsupportedKeyType("PKCS #8 key of another algorithm")
        }
    }

    /// RSAPrivateKey (RFC 8017 A.1.2): version, n, e, d, p, q, dp, dq, qinv.
    static func rsaPrivateKey(_ bytes: [UInt8]) throws(SSHKeyError) -> SSHPrivateKey {
        var outer = DERReader(bytes)
        var key = DERReader(try outer.element(0x30, "RSAPrivateKey"))
        guard try key.unsignedInteger("version") == [] else { throw .unsupportedKeyType("multi-prime RSA") }
        let n = try key.unsignedInteger("n")
        let e = try key.unsignedInteger("e")
        var parts: [[UInt8]] = []
        for field in ["d", "p", "q", "dp", "dq", "qinv"] { parts.append(try key.unsignedInteger(field)) }
        defer { for index in parts.indices { parts[index].wipe() } }
        // OpenSSH's order: d, iqmp, p, q.
        let secrets = [parts[0], parts[5], parts[1], parts[2]].map { SecretBytes($0) }
        return try SSHPrivateKey.rsa(n: n, e: e, secrets: secrets)
    }

    /// ECPrivateKey (RFC 5915): version 1, the scalar, optional curve and public key.
    static func ecPrivateKey(_ bytes: [UInt8], point: [UInt8]?) throws(SSHKeyError) -> SSHPrivateKey {
        var outer = DERReader(bytes)
        var key = DERReader(try outer.element(0x30, "ECPrivateKey"))
        guard try key.unsignedInteger("version") == [1] else { throw .badKeyFile("ECPrivateKey version") }
        var scalar = try key.element(0x04, "privateKey")
        defer { scalar.wipe() }
        if key.nextTag == 0xA0 {
            var parameters = DERReader(try key.element(0xA0, "parameters"))
            guard try parameters.element(0x06, "curve") == p256OID else {
                throw .unsupportedKeyType("EC key on another curve")
            }
        }
        guard scalar.count <= 32 else { throw .inconsistentKey }
        let secret = SecretBytes(count: 32, guarded: true) { out in
            out.initialize(repeating: 0)
            for (index, byte) in scalar.enumerated() { out[32 - scalar.count + index] = byte }
        }
        guard let derived = NettleKeys.p256Public(scalar: secret) else { throw .inconsistentKey }
        return try SSHPrivateKey.p256(point: point ?? derived, scalar: secret)
    }
}

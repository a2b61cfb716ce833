import FobSystem

/// A private key read from a file, with its comment (empty when the format has none).
public struct SSHKeyFileEntry: Sendable {
    /// The key.
    public let key: SSHPrivateKey
    /// The comment stored with it (openssh-key-v1), or empty (PKCS #8, PKCS #1, SEC 1).
    public let comment: String
}

/// Readers of unencrypted private key files: OpenSSH's own format
/// (`-----BEGIN OPENSSH PRIVATE KEY-----`, "openssh-key-v1", as OpenSSH's
/// PROTOCOL.key describes it), PKCS #8 (`BEGIN PRIVATE KEY`, RFC 5208 /
/// RFC 5958, RFC 8410 for Ed25519), and the older PKCS #1 (`BEGIN RSA
/// PRIVATE KEY`, RFC 8017) and SEC 1 (`BEGIN EC PRIVATE KEY`, RFC 5915).
/// A file protected by a passphrase is ``SSHKeyError/encryptedKeyFile``:
/// Fob leaves its decryption to `ssh-add`.
public enum SSHKeyFile {
    /// The keys in a private key file's text.
    /// - Throws: ``SSHKeyError/encryptedKeyFile``, ``SSHKeyError/badKeyFile(_:)``,
    ///   ``SSHKeyError/unsupportedKeyType(_:)``, ``SSHKeyError/inconsistentKey`` and the other key errors.
    public static func read(_ text: [UInt8]) throws(SSHKeyError) -> [SSHKeyFileEntry] {
        guard let string = String(validating: text, as: UTF8.self) else { throw .badKeyFile("not text") }
        let lines = string.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map { String($0).trimmingSpaces() }
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }) else {
            throw .badKeyFile("no -----BEGIN line")
        }
        let label = String(lines[begin].dropFirst(11).dropLast(5))
        guard let end = lines[begin...].firstIndex(of: "-----END \(label)-----") else {
            throw .badKeyFile("no -----END \(label)----- line")
        }
        let body = lines[(begin + 1)..<end]
        if body.contains(where: { $0.hasPrefix("Proc-Type:") && $0.contains("ENCRYPTED") }) {
            throw .encryptedKeyFile
        }
        guard let decoded = Base64.decode(body.filter { !$0.contains(":") }.joined()) else {
            throw .badKeyFile("the base64 between the BEGIN and END lines is damaged")
        }
        var bytes = decoded
        defer { bytes.wipe() }
        switch label {
        case "OPENSSH PRIVATE KEY": return try readOpenSSH(bytes)
        case "PRIVATE KEY": return [SSHKeyFileEntry(key: try PKCS8.privateKeyInfo(bytes), comment: "")]
        case "RSA PRIVATE KEY": return [SSHKeyFileEntry(key: try PKCS8.rsaPrivateKey(bytes), comment: "")]
        case "EC PRIVATE KEY": return [SSHKeyFileEntry(key: try PKCS8.ecPrivateKey(bytes, point: nil), comment: "")]
        case "ENCRYPTED PRIVATE KEY": throw .encryptedKeyFile
        default: throw .badKeyFile("a \(label) block is not a private key Fob reads")
        }
    }

    /// Reads the binary openssh-key-v1 structure.
    static func readOpenSSH(_ bytes: [UInt8]) throws(SSHKeyError) -> [SSHKeyFileEntry] {
        let magic = Array("openssh-key-v1".utf8) + [0]
        guard bytes.starts(with: magic) else { throw .badKeyFile("not openssh-key-v1") }
        var reader = SSHReader(Array(bytes.dropFirst(magic.count)))
        do {
            let cipher = try reader.text("cipher name", limit: 64)
            let kdf = try reader.text("kdf name", limit: 64)
            _ = try reader.string("kdf options", limit: 1024)
            if cipher != "none" || kdf != "none" { throw SSHKeyError.encryptedKeyFile }
            let count = try reader.uint32("key count")
            guard (1...16).contains(count) else { throw SSHKeyError.badKeyFile("\(count) keys in one file") }
            var publicKeys: [[UInt8]] = []
            for _ in 0..<count { publicKeys.append(try reader.string("public key", limit: 4096)) }
            var section = try reader.string("private section", limit: 1 << 20)
            defer { section.wipe() }
            try reader.expectEnd()
            var inner = SSHReader(section)
            guard try inner.uint32("check") == inner.uint32("check") else {
                throw SSHKeyError.badKeyFile("check values differ (a wrong passphrase or a damaged file)")
            }
            var entries: [SSHKeyFileEntry] = []
            for index in 0..<Int(count) {
                let key = try SSHPrivateKey.read(privateWire: &inner)
                let comment = try inner.text("comment", limit: 4096)
                guard key.publicKey.blob == publicKeys[index] else { throw SSHKeyError.inconsistentKey }
                entries.append(SSHKeyFileEntry(key: key, comment: comment))
            }
            var padding = inner.rest()
            defer { padding.wipe() }
            guard padding.count < 256,
                padding.enumerated().allSatisfy({ $0.element == UInt8(truncatingIfNeeded: $0.offset + 1) })
            else { throw SSHKeyError.badKeyFile("bad padding after the keys") }
            return entries
        } catch let error as SSHWireError {
            throw .wire(error)
        } catch let error as SSHKeyError {
            throw error
        } catch {
            throw .badKeyFile("unreadable")
        }
    }
}

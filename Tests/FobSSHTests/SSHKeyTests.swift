import FobSSH
import FobSystem
import FobTestSupport
import Foundation
import Testing

/// Runs ssh-keygen (Debian's openssh-client) and returns its standard output.
func sshKeygen(_ arguments: [String], stdin: [UInt8] = []) throws -> String {
    let result = try ChildProcess.run(
        executable: "/usr/bin/ssh-keygen", arguments: arguments, environment: ["PATH": "/usr/bin:/bin"],
        stdin: stdin)
    #expect(result.status == 0, "ssh-keygen \(arguments): \(result.stderrText)")
    return result.stdoutText
}

/// A key file made by ssh-keygen: the private file's bytes and the `.pub` line.
func keygenFile(_ directory: TemporaryDirectory, type: String, name: String, format: String? = nil) throws -> (
    [UInt8], String
) {
    let path = directory.file(name).path
    var arguments = ["-q", "-t", type, "-N", "", "-C", "\(name)@test", "-f", path]
    if type == "ecdsa" { arguments += ["-b", "256"] }
    if type == "rsa" { arguments += ["-b", "2048"] }
    if let format { arguments += ["-m", format] }
    _ = try sshKeygen(arguments)
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    let pub = try String(contentsOfFile: path + ".pub", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
    return (bytes, pub)
}

@Suite struct SSHKeyTests {
    @Test(arguments: ["ed25519", "ecdsa", "rsa"])
    func readsOpenSSHKeyFilesAndMatchesSSHKeygensPublicKeyAndFingerprint(type: String) throws {
        let dir = TemporaryDirectory()
        let (bytes, pub) = try keygenFile(dir, type: type, name: "id_\(type)")
        let entries = try SSHKeyFile.read(bytes)
        #expect(entries.count == 1)
        #expect(entries[0].comment == "id_\(type)@test")
        #expect(entries[0].key.publicKey.line(comment: entries[0].comment) == pub)
        let printed = try sshKeygen(["-l", "-E", "sha256", "-f", dir.file("id_\(type).pub").path])
        #expect(printed.split(separator: " ")[1] == Substring(entries[0].key.publicKey.fingerprint))
    }

    @Test func readsRFC8410sEd25519PKCS8Example() throws {
        let text = """
            -----BEGIN PRIVATE KEY-----
            MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
            -----END PRIVATE KEY-----
            """
        let spki = try #require(Base64.decode("MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="))
        let entries = try SSHKeyFile.read(Array(text.utf8))
        #expect(entries[0].key.publicKey == .ed25519(Array(spki.suffix(32))))
    }

    @Test(arguments: ["ecdsa", "rsa"])
    func readsPKCS8FilesAsTheSameKey(type: String) throws {
        let dir = TemporaryDirectory()
        let (_, pub) = try keygenFile(dir, type: type, name: "k", format: "PKCS8")
        let bytes = try [UInt8](Data(contentsOf: dir.file("k")))
        #expect(String(decoding: bytes, as: UTF8.self).contains("BEGIN PRIVATE KEY"))
        let entries = try SSHKeyFile.read(bytes)
        #expect(entries[0].key.publicKey.line(comment: "k@test") == pub)
    }

    @Test func anEncryptedKeyFileIsReportedAsEncrypted() throws {
        let dir = TemporaryDirectory()
        let path = dir.file("enc").path
        _ = try sshKeygen(["-q", "-t", "ed25519", "-N", "passphrase", "-f", path])
        #expect(throws: SSHKeyError.encryptedKeyFile) {
            try SSHKeyFile.read(try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        }
    }

    @Test func aDamagedFileIsABadKeyFileNotACrash() {
        #expect(throws: SSHKeyError.badKeyFile("no -----BEGIN line")) { try SSHKeyFile.read(Array("hello".utf8)) }
        let text = "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
        #expect(throws: SSHKeyError.badKeyFile("not openssh-key-v1")) { try SSHKeyFile.read(Array(text.utf8)) }
    }

    @Test(arguments: SSHKeyType.allCases)
    func signaturesOfGeneratedKeysVerifyWithSSHKeygen(type: SSHKeyType) throws {
        let key = try SSHPrivateKey.generate(type, bits: 2048)
        let data = Array("signed data".utf8)
        let flags = type == .rsa ? SSHSignFlags.rsaSHA512 : 0
        let signature = try key.sign(data, flags: flags)
        #expect(key.publicKey.verify(signature: signature, over: data))
        #expect(!key.publicKey.verify(signature: signature, over: Array("other data".utf8)))
        // The private encoding reads back as the same key.
        var reader = SSHReader(key.privateWire().unsafeArray)
        let again = try SSHPrivateKey.read(privateWire: &reader)
        #expect(again.publicKey == key.publicKey)
    }

    @Test func rsaWithoutSHA2FlagsIsRefused() throws {
        let key = try SSHPrivateKey.generate(.rsa, bits: 2048)
        #expect(throws: SSHKeyError.unsupportedSignature("ssh-rsa")) { try key.sign([1, 2, 3], flags: 0) }
        var reader = SSHReader(try key.sign([1], flags: SSHSignFlags.rsaSHA256))
        #expect(try reader.text() == "rsa-sha2-256")
    }

    @Test func aPrivateKeyWhoseHalvesDisagreeIsRefused() throws {
        let one = try SSHPrivateKey.generate(.ed25519)
        let two = try SSHPrivateKey.generate(.ed25519)
        var writer = SSHWriter()
        writer.string("ssh-ed25519")
        guard case .ed25519(let publicKey) = one.publicKey else { return }
        writer.string(publicKey)
        var wire = SSHReader(two.privateWire().unsafeArray)
        _ = try wire.string()
        _ = try wire.string()
        writer.string(try wire.string())
        var reader = SSHReader(writer.bytes)
        #expect(throws: SSHKeyError.inconsistentKey) { try SSHPrivateKey.read(privateWire: &reader) }
    }

    @Test func wireReaderRejectsNonMinimalMpintsAndTruncation() {
        var reader = SSHReader([0, 0, 0, 2, 0, 1])
        #expect(throws: SSHWireError.badMpint) { try reader.mpint() }
        var short = SSHReader([0, 0, 0, 9, 1])
        #expect(throws: SSHWireError.tooLong(field: "string")) { try short.string() }
        var writer = SSHWriter()
        writer.mpint([0x80])
        #expect(writer.bytes == [0, 0, 0, 2, 0, 0x80])
    }
}

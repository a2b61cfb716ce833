@_spi(Fuzz) import FobSecretService
import FobSystem
import FobTestSupport
import Testing

/// The `dh-ietf1024-sha256-aes128-cbc-pkcs7` transfer against answers
/// computed independently (Python's integers, and the `cryptography`
/// package's HKDF-SHA256 and AES-128-CBC with PKCS#7) for fixed exponents.
@Suite struct TransferTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    /// The provider's exponent: the bytes 0x01 … 0x20.
    static let serverExponent = [UInt8](1...32)
    /// 2^y mod p for y = the bytes 0x21 … 0x40.
    static let clientPublic = bytes(
        "0cfaaafb160cda22c4b61bc983d934b3953eaf41645c7936908b573e512116d5ad177dbb3e5bdd566fa953af8fecd9edca184a033f917e75"
            + "17bff399a6a8aa01240321ff82be7d764f9f7cbb4151aec400f2925aa1cbccc3e6108751f2a9e31a5c1c0a7d6396cd79f178ae6760"
            + "8c5318b180106c6f7d4c5cf0c2ab54a3286d2b")
    /// 2^x mod p.
    static let serverPublic = bytes(
        "457120764f3a1e6fd58103e41a4093a6c8bc1d97cb8759de41c21afdd2d3048a5ef3d88ce24aa6ba4fe30bcfb0b0f75abf1a8aeaff3723f1"
            + "bf53740c902005e1199fabad7c538e94a7034fd585339a02f3634893f748929d2a7257643e398130541ae64124c17d4507a97f1cbe"
            + "beb7b933642b8df479eb59e36cfeffbf1671dd")
    /// AES-128-CBC(HKDF-SHA256(shared, 16), IV 00…0f, PKCS#7("fob secret")).
    static let ciphertext = bytes("b01afe4eb89eb9a28c5fcaad3030b317")

    @Test func knownAnswerOfTheWholeStep() throws {
        let (cipher, serverPublic) = try SessionCipher.negotiate(
            clientPublic: Self.clientPublic, privateExponent: Self.serverExponent)
        #expect(serverPublic == Self.serverPublic)
        let sealed = cipher.seal(SecretBytes(utf8: "fob secret"), iv: [UInt8](0..<16))
        #expect(sealed.parameters == [UInt8](0..<16))
        #expect(sealed.value == Self.ciphertext)
        let opened = try cipher.open(parameters: [UInt8](0..<16), value: Self.ciphertext)
        #expect(opened.unsafeString == "fob secret")
    }

    @Test func aShortPublicKeyIsLeftPadded() throws {
        let padded = [UInt8](repeating: 0, count: 127) + [3]
        let (short, _) = try SessionCipher.negotiate(clientPublic: [3], privateExponent: Self.serverExponent)
        let (long, _) = try SessionCipher.negotiate(clientPublic: padded, privateExponent: Self.serverExponent)
        let iv = [UInt8](repeating: 7, count: 16)
        #expect(short.seal(SecretBytes(utf8: "x"), iv: iv).value == long.seal(SecretBytes(utf8: "x"), iv: iv).value)
    }

    @Test func publicKeysOutsideTwoToPMinusTwoAreRefused() {
        var pMinusOne = Self.bytes(
            "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B"
                + "302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F2411"
                + "7C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF")
        pMinusOne[127] -= 1
        for key in [
            [], [0], [1], pMinusOne, [UInt8](repeating: 0xFF, count: 128), [1] + [UInt8](repeating: 0, count: 128),
        ] {
            #expect(throws: TransferError.badPublicKey) {
                _ = try SessionCipher.negotiate(clientPublic: key, privateExponent: Self.serverExponent)
            }
        }
    }

    @Test func badCiphertextsAreRefusedNotOpened() throws {
        let (cipher, _) = try SessionCipher.negotiate(
            clientPublic: Self.clientPublic, privateExponent: Self.serverExponent)
        #expect(throws: TransferError.badCiphertext) {
            _ = try cipher.open(parameters: [UInt8](0..<15), value: Self.ciphertext)
        }
        #expect(throws: TransferError.badCiphertext) {
            _ = try cipher.open(parameters: [UInt8](0..<16), value: Array(Self.ciphertext.prefix(15)))
        }
        #expect(throws: TransferError.badCiphertext) {
            _ = try cipher.open(parameters: [UInt8](repeating: 9, count: 16), value: Self.ciphertext)
        }
    }

    @Test func eachSecretGetsAFreshIV() throws {
        let (cipher, _) = try SessionCipher.negotiate(clientPublic: Self.clientPublic)
        let secret = SecretBytes(utf8: "same")
        let a = cipher.seal(secret)
        let b = cipher.seal(secret)
        #expect(a.parameters.count == 16)
        #expect(a.parameters != b.parameters)
        #expect(try cipher.open(parameters: b.parameters, value: b.value).unsafeString == "same")
    }

    @Test func plainSendsTheBytesAsTheyAre() throws {
        let sealed = SessionCipher.plain.seal(SecretBytes(utf8: "abc"))
        #expect(sealed.parameters.isEmpty)
        #expect(sealed.value == Array("abc".utf8))
    }
}

/// The fuzz target's corpus (`Fuzz/Corpus/secret-service-transfer`) as tests.
@Suite struct TransferFuzzCorpusTests {
    @Test func everyCorpusInputOpensOrFailsCleanly() {
        let inputs = FuzzCorpus.inputs("secret-service-transfer")
        #expect(inputs.count >= 4)
        for (name, bytes) in inputs {
            let result = SecretServiceFuzzEntryPoints.openTransfer(bytes)
            switch name {
            case "known-answer": #expect(result == .success(10))
            case "key-one": #expect(result == .failure(.badPublicKey))
            case "empty-ciphertext", "short-key": #expect(result == .failure(.badCiphertext))
            default: break
            }
        }
    }
}

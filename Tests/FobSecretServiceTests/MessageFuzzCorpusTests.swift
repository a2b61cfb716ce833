@_spi(Fuzz) import FobSecretService
import FobTestSupport
import Testing

/// The fuzz target's corpus (`Fuzz/Corpus/secret-service-messages`) as
/// tests: each seed builds the message a client would send and the
/// provider's decoder reads what was written, or refuses it.
@Suite struct MessageFuzzCorpusTests {
    @Test func everySeedDecodesToWhatItWroteOrIsRefused() {
        let inputs = FuzzCorpus.inputs("secret-service-messages")
        #expect(inputs.count >= 9)
        let expected: [String: String?] = [
            "attributes": "service=mail username=ana",
            "item-properties": "Mail|service=mail",
            "secret": "/org/freedesktop/secrets/session/s1 16 16 text/plain",
            "object-paths": "/org/freedesktop/secrets/collection/login /org/freedesktop/secrets/aliases/default",
            "object-paths-wrong-type": nil,
            "session-dh": "dh-ietf1024-sha256-aes128-cbc-pkcs7 128",
            "property-label": "New label",
            "attributes-wrong-value-type": nil,
            "unclosed": nil,
        ]
        for (name, bytes) in inputs {
            let decoded = SecretServiceFuzzEntryPoints.decodeMessage(bytes)
            if let answer = expected[name] { #expect(decoded == answer, "\(name)") }
        }
        #expect(Set(inputs.map(\.0)).isSuperset(of: expected.keys))
    }

    @Test func truncatedAndFlippedSeedsNeverCrash() {
        for (_, bytes) in FuzzCorpus.inputs("secret-service-messages") {
            for cut in 0..<bytes.count { _ = SecretServiceFuzzEntryPoints.decodeMessage(Array(bytes[..<cut])) }
            for i in bytes.indices {
                var flipped = bytes
                flipped[i] ^= 0x5A
                _ = SecretServiceFuzzEntryPoints.decodeMessage(flipped)
            }
        }
    }
}

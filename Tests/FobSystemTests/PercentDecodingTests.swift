import FobSystem
import Testing

/// The one percent-decoder, in its three readings: strict (URIs), forms
/// (`+` is a space, a stray `%` stands for itself) and Assuan lines.
@Suite struct PercentDecodingTests {
    @Test func bytesAreDecodedInEitherCase() {
        #expect(PercentDecoding.decode(Array("a%20b%2fc%2F%e2%82%AC".utf8)) == Array("a b/c/€".utf8))
        #expect(PercentDecoding.decode(Array("".utf8)) == [])
        #expect("caf%C3%A9".percentDecoded() == "café")
    }

    @Test(arguments: ["%", "%4", "%zz", "abc%2", "%%41"])
    func aStrayPercentIsRefusedWhenStrict(text: String) {
        #expect(PercentDecoding.decode(Array(text.utf8)) == nil)
        #expect(text.percentDecoded() == nil)
    }

    @Test func aStrayPercentStandsForItselfWhenLiteral() {
        #expect(PercentDecoding.decode(Array("100%%41 %z".utf8), malformed: .literal) == Array("100%A %z".utf8))
    }

    @Test func plusIsASpaceOnlyInForms() {
        #expect(
            PercentDecoding.decode(Array("a+b%2B".utf8), plusIsSpace: true, malformed: .literal) == Array("a b+".utf8))
        #expect(PercentDecoding.decode(Array("a+b".utf8)) == Array("a+b".utf8))
    }

    @Test func bytesThatAreNotUTF8AreNotText() {
        #expect("%FF".percentDecoded() == nil)
        #expect(PercentDecoding.decode(Array("%FF".utf8)) == [0xFF])
    }
}

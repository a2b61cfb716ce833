import Testing

@testable import FobTokens

@Suite struct PKCETests {
    @Test func rfc7636AppendixBVector() throws {
        let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
        #expect(!pkce.challenge.contains("="))
    }

    @Test func generatedVerifiersUseTheUnreservedSetAndDiffer() throws {
        let a = try PKCE.generate()
        let b = try PKCE.generate()
        #expect(a.verifier.count == PKCE.defaultLength)
        #expect(a.verifier != b.verifier)
        #expect(a.verifier.utf8.allSatisfy { PKCE.unreserved.contains($0) })
        #expect(a.challenge.count == 43)
        #expect(try PKCE(verifier: a.verifier).challenge == a.challenge)
        // Over many verifiers every one of the 66 characters shows up: the whole set is used.
        var seen = Set<UInt8>()
        for _ in 0..<40 { seen.formUnion(try PKCE.generate(length: 128).verifier.utf8) }
        #expect(seen.count == 66)
    }

    @Test func lengthLimitsAreInclusive() throws {
        #expect(try PKCE.generate(length: 43).verifier.count == 43)
        #expect(try PKCE.generate(length: 128).verifier.count == 128)
        #expect(throws: PKCEError.length(42)) { try PKCE.generate(length: 42) }
        #expect(throws: PKCEError.length(129)) { try PKCE.generate(length: 129) }
    }

    @Test func givenVerifiersOf42Or129CharactersAreRefused() {
        #expect(throws: PKCEError.length(42)) { try PKCE(verifier: String(repeating: "a", count: 42)) }
        #expect(throws: PKCEError.length(129)) { try PKCE(verifier: String(repeating: "a", count: 129)) }
        #expect(throws: Never.self) { try PKCE(verifier: String(repeating: "a", count: 43)) }
        #expect(throws: Never.self) { try PKCE(verifier: String(repeating: "~", count: 128)) }
    }

    @Test(arguments: ["+", "/", "=", " ", "é", "%"])
    func charactersOutsideTheUnreservedSetAreRefused(bad: String) {
        let verifier = String(repeating: "a", count: 50) + bad
        #expect(throws: PKCEError.character(Character(bad))) { try PKCE(verifier: verifier) }
    }

    @Test func errorMessagesNameTheRule() {
        #expect(PKCEError.length(42).description.contains("43 to 128"))
        #expect(PKCEError.character("+").description.contains("'+'"))
        #expect(PKCEError.character("é").description.contains("U+E9"))
    }
}

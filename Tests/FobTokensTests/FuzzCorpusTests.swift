import FobTestSupport
import Foundation
import Testing

@testable import FobTokens

/// Every input kept in the fuzz corpora of FobTokens' parsers (seeds and
/// former crashers) goes through its parser here too: a typed result, never a trap.
@Suite struct FuzzCorpusTests {
    @Test func corporaAreThere() {
        for target in ["jwt", "token-response", "redirect-request", "otpauth-uri", "base32"] {
            #expect(!FuzzCorpus.inputs(target).isEmpty, "no corpus for \(target)")
        }
    }

    @Test func jwtInputs() {
        for (_, bytes) in FuzzCorpus.inputs("jwt") {
            if let jwt = try? JWT(decoding: String(decoding: bytes, as: UTF8.self)) {
                _ = try? jwt.checkTimeClaims()
                _ = jwt.expiresAt.date?.iso8601
            }
        }
    }

    /// Includes the stored token sets whose expires_at of ±1e300 trapped the terminal UI.
    @Test func tokenResponseInputs() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        for (name, bytes) in FuzzCorpus.inputs("token-response") {
            _ = try? TokenResponse.parse(
                HTTPResponse(status: 200, body: bytes), endpoint: URL(string: "https://idp.example/t")!)
            if let set = try? OAuthTokenSet.decode(bytes) {
                _ = TimeText.expiry(set.expiresAt, now: now)
            } else if name.hasPrefix("stored-expiry") {
                let error = #expect(throws: OAuthError.self) { try OAuthTokenSet.decode(bytes) }
                guard case .storedItem? = error else {
                    Issue.record("\(name): not a stored item's error: \(String(describing: error))")
                    continue
                }
            }
        }
    }

    @Test func redirectRequestInputs() {
        let answers = FuzzCorpus.inputs("redirect-request").map {
            LoopbackRedirectListener.parse(head: String(decoding: $0.bytes, as: UTF8.self), expectedState: "st-1")
        }
        #expect(answers.contains(.code("c")))
    }

    @Test func otpAndBase32Inputs() throws {
        for (_, bytes) in FuzzCorpus.inputs("otpauth-uri") { _ = try? OneTimePassword(parsing: bytes) }
        for (_, bytes) in FuzzCorpus.inputs("base32") {
            if let decoded = try? Base32.decode(bytes: bytes) {
                #expect(try Base32.decode(Base32.encode(decoded)) == decoded)
            }
        }
    }
}

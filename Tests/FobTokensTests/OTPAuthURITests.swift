import Foundation
import Testing

@testable import FobTokens

/// Reading `otpauth://` URIs (Google's Key URI format) and bare base32 secrets.
@Suite struct OTPAuthURITests {
    /// "Hello!\u{DE}\u{AD}\u{BE}\u{EF}" in base32, the secret of Google's examples.
    static let secret = "JBSWY3DPEHPK3PXP"
    static let secretBytes: [UInt8] = [0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x21, 0xDE, 0xAD, 0xBE, 0xEF]

    @Test func googlesExample() throws {
        let otp = try OneTimePassword(
            parsing: "otpauth://totp/Example:alice@google.com?secret=JBSWY3DPEHPK3PXP&issuer=Example")
        #expect(otp.secret == Self.secretBytes)
        #expect(otp.kind == .totp(period: 30))
        #expect(otp.algorithm == .sha1)
        #expect(otp.digits == 6)
        #expect(otp.issuer == "Example")
        #expect(otp.account == "alice@google.com")
    }

    @Test func everyParameter() throws {
        let otp = try OneTimePassword(
            parsing:
                "otpauth://totp/ACME%20Co:john.doe@email.com?secret=HXDMVJECJJWSRB3HWIZR4IFUGFTMXBOZ&issuer=ACME%20Co&algorithm=SHA256&digits=8&period=60"
        )
        #expect(otp.issuer == "ACME Co")
        #expect(otp.account == "john.doe@email.com")
        #expect(otp.algorithm == .sha256)
        #expect(otp.digits == 8)
        #expect(otp.kind == .totp(period: 60))
        #expect(otp.secret.count == 20)
    }

    @Test func issuerFromTheLabelAloneAndFromTheParameterAlone() throws {
        let prefix = try OneTimePassword(parsing: "otpauth://totp/Big%20Corp:%20%20ana?secret=\(Self.secret)")
        #expect(prefix.issuer == "Big Corp")
        #expect(prefix.account == "ana") // spaces after the colon are dropped
        let parameter = try OneTimePassword(parsing: "otpauth://totp/ana?secret=\(Self.secret)&issuer=Big%20Corp")
        #expect(parameter.issuer == "Big Corp")
        #expect(parameter.account == "ana")
        let neither = try OneTimePassword(parsing: "otpauth://totp/ana?secret=\(Self.secret)")
        #expect(neither.issuer == nil)
        // The parameter wins when both are given.
        let both = try OneTimePassword(parsing: "otpauth://totp/Old:ana?secret=\(Self.secret)&issuer=New")
        #expect(both.issuer == "New")
        #expect(both.account == "ana")
        // An empty issuer= leaves the label's prefix.
        #expect(try OneTimePassword(parsing: "otpauth://totp/Old:ana?secret=\(Self.secret)&issuer=").issuer == "Old")
        #expect(try OneTimePassword(parsing: "otpauth://totp/:ana?secret=\(Self.secret)").issuer == nil)
    }

    @Test func anEncodedColonSeparatesTheIssuer() throws {
        let otp = try OneTimePassword(parsing: "otpauth://totp/Example%3Aalice%40google.com?secret=\(Self.secret)")
        #expect(otp.issuer == "Example")
        #expect(otp.account == "alice@google.com")
        let lower = try OneTimePassword(parsing: "otpauth://totp/Example%3aalice?secret=\(Self.secret)")
        #expect(lower.issuer == "Example")
        let unicode = try OneTimePassword(parsing: "otpauth://totp/Caf%C3%A9:z%C3%BC?secret=\(Self.secret)")
        #expect(unicode.issuer == "Café")
        #expect(unicode.account == "zü")
    }

    @Test(arguments: [
        "jbswy3dpehpk3pxp", "JBSW Y3DP EHPK 3PXP", "jbsw%20y3dp%20ehpk%203pxp", "JbSwY3dPeHpK3pXp",
        "JBSWY3DPEHPK3PXP\t",
    ])
    func secretsInEveryWriting(_ written: String) throws {
        let otp = try OneTimePassword(parsing: "otpauth://totp/a?secret=\(written)")
        #expect(otp.secret == Self.secretBytes)
    }

    @Test func paddedSecrets() throws {
        // 4 bytes take 7 symbols and 1 '=': "foob" (RFC 4648 §10).
        #expect(try OneTimePassword(parsing: "otpauth://totp/a?secret=MZXW6YQ%3D").secret == Array("foob".utf8))
        #expect(try OneTimePassword(parsing: "otpauth://totp/a?secret=mzxw6yq=").secret == Array("foob".utf8))
        #expect(try OneTimePassword(parsing: "MZXW 6YTB OI== ====").secret == Array("foobar".utf8))
        #expect(throws: OTPError.badSecret(.padding)) { try OneTimePassword(parsing: "JBSWY3DPEHPK3PXP======") }
    }

    @Test func algorithmNamesInAnyCaseAndParameterNamesInAnyCase() throws {
        #expect(
            try OneTimePassword(parsing: "otpauth://totp/a?secret=\(Self.secret)&algorithm=sha512").algorithm == .sha512
        )
        #expect(
            try OneTimePassword(parsing: "otpauth://totp/a?secret=\(Self.secret)&algorithm=Sha1").algorithm == .sha1)
        #expect(try OneTimePassword(parsing: "OTPAUTH://TOTP/a?SECRET=\(Self.secret)&Digits=7").digits == 7)
    }

    @Test func hotpWithItsCounter() throws {
        let otp = try OneTimePassword(
            parsing: "otpauth://hotp/Example:ana?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=9")
        #expect(otp.kind == .hotp(counter: 9))
        #expect(otp.code(at: Date()) == "520489") // RFC 4226 Appendix D, count 9
        #expect(
            try OneTimePassword(parsing: "otpauth://hotp/a?secret=\(Self.secret)&counter=18446744073709551615").kind
                == .hotp(counter: .max))
    }

    @Test func aBareSecretIsATOTPSeedWithDefaults() throws {
        for text in ["JBSWY3DPEHPK3PXP", "  jbsw y3dp ehpk 3pxp\n", "\tJBSWY3DPEHPK3PXP\r\n"] {
            let otp = try OneTimePassword(parsing: text)
            #expect(otp.secret == Self.secretBytes)
            #expect(otp.kind == .totp(period: 30))
            #expect(otp.algorithm == .sha1)
            #expect(otp.digits == 6)
            #expect(otp.issuer == nil && otp.account == "")
        }
    }

    /// A stored secret can be parsed from its bytes without becoming a `String`.
    @Test func parsingBytesMatchesParsingText() throws {
        let uri = "otpauth://hotp/Example:ana?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&counter=9&digits=8"
        let fromBytes = try OneTimePassword(parsing: Array(uri.utf8))
        let fromText = try OneTimePassword(parsing: uri)
        #expect(fromBytes.secret == fromText.secret && fromBytes.kind == fromText.kind && fromBytes.digits == 8)
        #expect(fromBytes.issuer == "Example" && fromBytes.account == "ana")
        #expect(try OneTimePassword(parsing: Array("JBSWY3DPEHPK3PXP\n".utf8)).secret == Self.secretBytes)
        #expect(throws: OTPError.badPercentEncoding) {
            try OneTimePassword(
                parsing: [UInt8]("otpauth://totp/".utf8) + [0xFF] + Array("?secret=JBSWY3DPEHPK3PXP".utf8))
        }
        #expect(throws: OTPError.badSecret(.character(offset: 0))) { try OneTimePassword(parsing: [0xC3, 0xA9]) }
    }

    @Test func otherParametersAndAFragmentAreIgnored() throws {
        let otp = try OneTimePassword(
            parsing: "otpauth://totp/a?image=https%3A%2F%2Fexample.com%2Fx.png&secret=\(Self.secret)&&foo#frag")
        #expect(otp.secret == Self.secretBytes)
    }

    @Test(arguments: [
        ("", OTPError.empty),
        ("  \n", .empty),
        ("https://example.com/?secret=JBSWY3DPEHPK3PXP", .wrongScheme),
        ("otpauth:totp/a?secret=JBSWY3DPEHPK3PXP", .malformedURI),
        ("otpauth://motp/a?secret=JBSWY3DPEHPK3PXP", .unknownType),
        ("otpauth://motp/a", .unknownType),
        ("otpauth://", .unknownType),
        ("otpauth://totp/a?issuer=Example", .missingSecret),
        ("otpauth://totp/a?secret=", .missingSecret),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PX1", .badSecret(.character(offset: 15))),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXPA", .badSecret(.length(17))),
        ("otpauth://totp/a?secret=JB=SWY3DP", .badSecret(.padding)),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP===", .badSecret(.padding)),
        ("JBSWY3DPEHPK3PX0", .badSecret(.character(offset: 15))),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&algorithm=MD5", .unknownAlgorithm),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&algorithm=SHA-1", .unknownAlgorithm),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&digits=5", .badDigits),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&digits=9", .badDigits),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&digits=+6", .badDigits),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&digits=six", .badDigits),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&period=0", .badPeriod),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&period=-30", .badPeriod),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&period=30s", .badPeriod),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&period=99999999999999999999", .badPeriod),
        ("otpauth://hotp/a?secret=JBSWY3DPEHPK3PXP", .missingCounter),
        ("otpauth://hotp/a?secret=JBSWY3DPEHPK3PXP&counter=18446744073709551616", .badCounter),
        ("otpauth://hotp/a?secret=JBSWY3DPEHPK3PXP&counter=-1", .badCounter),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&secret=JBSWY3DPEHPK3PXP", .duplicateParameter("secret")),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&Digits=6&digits=8", .duplicateParameter("digits")),
        ("otpauth://totp/a%2?secret=JBSWY3DPEHPK3PXP", .badPercentEncoding),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP%", .badPercentEncoding),
        ("otpauth://totp/a?secret=JBSWY3DPEHPK3PXP&issuer=%FF", .badPercentEncoding),
    ])
    func badInputIsATypedError(_ text: String, _ expected: OTPError) {
        #expect(throws: expected) { try OneTimePassword(parsing: text) }
    }

    @Test func errorsNeverQuoteTheSecret() {
        let secrets = ["JBSWY3DPEHPK3PX1", "SUPERSECRETSEEDQ!"]
        for secret in secrets {
            for text in [
                secret, "otpauth://totp/a?secret=\(secret)", "otpauth://totp/a?secret=\(secret)&digits=5",
                "otpauth://x/a?secret=\(secret)", "otpauth://totp/a?secret=\(secret)&algorithm=\(secret)",
            ] {
                do {
                    _ = try OneTimePassword(parsing: text)
                } catch {
                    #expect(!error.description.contains(secret))
                    #expect(!error.description.contains(secret.lowercased()))
                }
            }
        }
    }

    @Test func base32RoundTripsEveryLength() throws {
        var bytes: [UInt8] = []
        for n in 0..<40 {
            if n > 0 { #expect(try Base32.decode(Base32.encode(bytes)) == bytes) }
            bytes.append(UInt8(truncatingIfNeeded: n &* 37 &+ 11))
        }
        // RFC 4648 §10 vectors.
        let vectors = [
            "f": "MY", "fo": "MZXQ", "foo": "MZXW6", "foob": "MZXW6YQ", "fooba": "MZXW6YTB", "foobar": "MZXW6YTBOI",
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(try Base32.decode(encoded) == Array(plain.utf8))
        }
        #expect(try Base32.decode("MZXW6YQ=") == Array("foob".utf8))
        #expect(try Base32.decode("MY======") == Array("f".utf8))
        #expect(throws: Base32Error.empty) { try Base32.decode("  ") }
        #expect(throws: Base32Error.length(1)) { try Base32.decode("M") }
    }

    /// URIs built from random settings read back as those settings: names
    /// with spaces, `&`, `?`, `#`, `%`, `=`, `/` and non-ASCII letters,
    /// percent-encoded, in any parameter order.
    @Test func randomURIsReadBackAsTheirSettings() throws {
        var generator = SystemRandomNumberGenerator()
        let letters = Array("aZ09 &?#%=/+.@_-éü密🔑")
        func name() -> String {
            String(
                (0..<Int.random(in: 1...12, using: &generator)).map { _ in letters.randomElement(using: &generator)! })
        }
        func encoded(_ text: String) -> String {
            text.utf8.map { byte in
                let c = Character(Unicode.Scalar(byte))
                return byte < 0x80 && (c.isLetter || c.isNumber || "-._~@".contains(c))
                    ? String(c) : String(format: "%%%02X", byte)
            }.joined()
        }
        for _ in 0..<300 {
            let secret = (0..<Int.random(in: 1...64, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            let algorithm = OTPAlgorithm.allCases.randomElement(using: &generator)!
            let digits = Int.random(in: 6...8, using: &generator)
            let issuer = name().trimmingCharacters(in: .whitespaces)
            let account = name().trimmingCharacters(in: .whitespaces)
            let hotp = Bool.random(using: &generator)
            let period = Int.random(in: 1...300, using: &generator)
            let counter = UInt64.random(in: 0...UInt64.max, using: &generator)
            var parameters = [
                "secret=\(Base32.encode(secret))", "algorithm=\(algorithm.rawValue)", "digits=\(digits)",
                hotp ? "counter=\(counter)" : "period=\(period)",
            ]
            if !issuer.isEmpty { parameters.append("issuer=\(encoded(issuer))") }
            parameters.shuffle(using: &generator)
            let label = issuer.isEmpty ? encoded(account) : "\(encoded(issuer)):\(encoded(account))"
            let uri = "otpauth://\(hotp ? "hotp" : "totp")/\(label)?\(parameters.joined(separator: "&"))"
            let otp = try OneTimePassword(parsing: uri)
            #expect(otp.secret == secret)
            #expect(otp.algorithm == algorithm && otp.digits == digits)
            #expect(otp.kind == (hotp ? .hotp(counter: counter) : .totp(period: period)))
            #expect(otp.issuer == (issuer.isEmpty ? nil : issuer))
            #expect(otp.account == account)
        }
    }

    /// Bytes that are not a URI or a secret are always an error, never a crash.
    @Test func arbitraryBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        let pieces = [
            "otpauth://", "totp", "hotp", "/", ":", "%", "%3A", "?", "&", "=", "secret", "counter", "period",
            "digits", "algorithm", "JBSW", "1", "6", "9", "#", " ", "é", "\u{0}", "\u{FFFD}",
        ]
        for _ in 0..<2000 {
            let text = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            _ = try? OneTimePassword(parsing: text)
        }
    }
}

import FobTestSupport
import Foundation
import Testing

@testable import FobTokens

@Suite struct JWTTests {
    static let issueToken = FobTestSupport.issueToken

    @Test func decodesTheIssueTokenWhosePayloadLacksPadding() throws {
        // The claims segment is 71 characters: one `=` of padding was dropped.
        let segment = JWTTests.issueToken.split(separator: ".")[1]
        #expect(segment.count % 4 == 3)
        let jwt = try JWT(decoding: JWTTests.issueToken)
        #expect(jwt.claims["sub"]?.string == "dev@example.com")
        #expect(jwt.header["alg"]?.string == "HS256")
        #expect(jwt.algorithm == "HS256")
        #expect(jwt.expiresAt.date?.iso8601 == "2016-04-05T16:01:14Z")
        #expect(jwt.issuedAt.date?.iso8601 == "2016-04-05T15:31:14Z")
        #expect(jwt.notBefore == .absent)
        #expect(jwt.signature == Array("sig".utf8))
        #expect(jwt.claims.keys.sorted() == ["exp", "iat", "sub"])
        #expect(
            String(decoding: jwt.claimsJSON, as: UTF8.self)
                == #"{"sub":"dev@example.com","iat":1459870274,"exp":1459872074}"#)
    }

    @Test func paddedSegmentsDecodeTheSame() throws {
        let parts = JWTTests.issueToken.split(separator: ".").map(String.init)
        let padded = parts.map { $0 + String(repeating: "=", count: (4 - $0.count % 4) % 4) }.joined(separator: ".")
        #expect(padded != JWTTests.issueToken)
        #expect(try JWT(decoding: padded) == JWT(decoding: JWTTests.issueToken))
    }

    @Test func surroundingWhitespaceIsIgnored() throws {
        #expect(try JWT(decoding: "  \(JWTTests.issueToken)\n").claims["sub"]?.string == "dev@example.com")
    }

    @Test func payloadThatIsTheJSONStringXIsAnError() {
        let token = makeToken(claims: #""x""#)
        #expect(throws: JWTError.notAnObject(.claims, found: "a string")) { try JWT(decoding: token) }
        let error = (try? JWT(decoding: token)) == nil
        #expect(error)
        #expect(
            JWTError.notAnObject(.claims, found: "a string").description
                == "not a JWT: the claims is a string, not a JSON object")
    }

    @Test func headerThatIsAnArrayIsAnError() {
        #expect(throws: JWTError.notAnObject(.header, found: "an array")) {
            try JWT(decoding: makeToken(header: "[1]", claims: "{}"))
        }
    }

    @Test(arguments: [("", 0), ("abc", 1), ("a.b", 2), ("a.b.c.d", 4), ("a.b.c.d.e", 5)])
    func wrongSegmentCountsAreErrors(token: String, count: Int) {
        let expected: JWTError = count == 0 ? .empty : .segmentCount(count)
        #expect(throws: expected) { try JWT(decoding: token) }
    }

    @Test func fiveSegmentsAreReportedAsJWE() {
        #expect(JWTError.segmentCount(5).description.contains("JWE"))
        #expect(JWTError.segmentCount(2).description.contains("found 2"))
    }

    @Test func badBase64IsAnError() {
        let claims = Base64URL.encode(Array(#"{"a":1}"#.utf8))
        // Standard base64 characters are not base64url.
        #expect(throws: JWTError.base64(.header)) { try JWT(decoding: "ab+/.\(claims).c2ln") }
        #expect(throws: JWTError.base64(.claims)) { try JWT(decoding: "e30.\(claims)!.c2ln") }
        // A length of 4n+1 is impossible.
        #expect(throws: JWTError.base64(.claims)) { try JWT(decoding: "e30.\(claims)AAA.c2ln") }
        #expect(throws: JWTError.base64(.signature)) { try JWT(decoding: "e30.\(claims).c2l=n") }
    }

    @Test func claimsThatAreNotUTF8OrNotJSONAreErrors() {
        let notUTF8 = "e30." + Base64URL.encode([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) + ".c2ln"
        #expect(throws: JWTError.notUTF8(.claims)) { try JWT(decoding: notUTF8) }
        let notJSON = "e30." + Base64URL.encode(Array("{sub: 1}".utf8)) + ".c2ln"
        #expect(throws: JWTError.json(.claims, JSONError(reason: "Invalid value around character 1."))) {
            try JWT(decoding: notJSON)
        }
        do {
            _ = try JWT(decoding: notJSON)
        } catch {
            guard case .json(.claims, let json) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(json.reason.contains("character 1"))
            #expect(error.description.hasPrefix("not a JWT: the claims is not JSON ("))
        }
        // A NUL byte would let Foundation read the text as UTF-16.
        let utf16 = "e30." + Base64URL.encode([0x7B, 0x00, 0x7D, 0x00]) + ".c2ln"
        #expect(throws: JWTError.json(.claims, JSONError(reason: "a NUL byte; JSON text must be UTF-8"))) {
            try JWT(decoding: utf16)
        }
        // A number beyond Double's range makes the whole claims set unreadable.
        do {
            _ = try JWT(decoding: makeToken(claims: #"{"exp":1e400}"#))
            Issue.record("exp 1e400 was accepted")
        } catch {
            guard case .json(.claims, _) = error else {
                Issue.record("wrong error \(error)")
                return
            }
        }
    }

    /// RFC 7519 §4: a parser may reject duplicate member names or return the
    /// lexically last one; JSONSerialization does the latter.
    @Test func duplicateMemberNamesKeepTheLexicallyLastValue() throws {
        let jwt = try JWT(
            decoding: makeToken(
                header: #"{"alg":"none","alg":"HS256"}"#, claims: #"{"sub":"a","exp":1,"sub":"b","exp":"2"}"#))
        #expect(jwt.claims["sub"]?.string == "b")
        #expect(jwt.algorithm == "HS256")
        #expect(jwt.expiresAt.date?.secondsSince1970 == 2)
        #expect(jwt.claims.count == 2)
    }

    /// Foundation hands out JSON booleans as NSNumber, and on Linux
    /// `NSNumber(value: 1) is Bool` holds: `true` must never become 1970-01-01T00:00:01Z.
    @Test func booleansAreNeverNumericDates() throws {
        let jwt = try JWT(decoding: makeToken(claims: #"{"iat":1,"exp":true,"nbf":false}"#))
        #expect(jwt.issuedAt.date?.secondsSince1970 == 1)
        #expect(jwt.expiresAt == .invalid("true"))
        #expect(jwt.notBefore == .invalid("false"))
        #expect(throws: JWTError.invalidNumericDate(claim: "exp", value: "true")) { try jwt.checkTimeClaims() }
        let zeroAndOne = try JWT(decoding: makeToken(claims: #"{"iat":0,"exp":1.0}"#))
        #expect(zeroAndOne.issuedAt.date?.secondsSince1970 == 0)
        #expect(zeroAndOne.expiresAt.date?.secondsSince1970 == 1)
        #expect(NumericDate(json: .bool(true)) == nil)
        #expect(NumericDate(json: .bool(false)) == nil)
        #expect(NumericDate(json: .integer(1))?.secondsSince1970 == 1)
    }

    @Test func unsecuredTokenWithEmptySignatureDecodes() throws {
        let jwt = try JWT(decoding: makeToken(header: #"{"alg":"none"}"#, claims: #"{"sub":"a"}"#, signature: ""))
        #expect(jwt.signature.isEmpty)
        #expect(jwt.algorithm == "none")
    }

    @Test func numericDatesAcceptIntegersFractionsAndNumericStrings() throws {
        let jwt = try JWT(decoding: makeToken(claims: #"{"iat":1459870274,"exp":1459872074.5,"nbf":"1459870000"}"#))
        #expect(jwt.issuedAt.date?.secondsSince1970 == 1_459_870_274)
        #expect(jwt.issuedAt.date?.hasFraction == false)
        #expect(jwt.expiresAt.date?.iso8601 == "2016-04-05T16:01:14.5Z")
        #expect(jwt.expiresAt.date?.hasFraction == true)
        #expect(jwt.notBefore.date?.iso8601 == "2016-04-05T15:26:40Z")
        try jwt.checkTimeClaims()

        let fractionString = try JWT(decoding: makeToken(claims: #"{"exp":"1459872074.125"}"#))
        #expect(fractionString.expiresAt.date?.iso8601 == "2016-04-05T16:01:14.125Z")
        let exponent = try JWT(decoding: makeToken(claims: #"{"exp":1.459872074E9}"#))
        #expect(exponent.expiresAt.date?.iso8601 == "2016-04-05T16:01:14Z")
    }

    @Test(arguments: [
        #"true"#, #"false"#, #""tomorrow""#, #""1e9""#, #"" 12""#, #"{"t":1}"#, #"[1]"#, #"null"#, #""""#,
        #""1459872074Z""#,
    ])
    func otherTimeValuesAreReportedNotGuessed(value: String) throws {
        let jwt = try JWT(decoding: makeToken(claims: #"{"sub":"a","exp":\#(value)}"#))
        guard case .invalid(let found) = jwt.expiresAt else {
            Issue.record("exp \(value) was accepted as \(jwt.expiresAt)")
            return
        }
        #expect(found == value)
        #expect(throws: JWTError.invalidNumericDate(claim: "exp", value: found)) { try jwt.checkTimeClaims() }
        #expect(!jwt.isExpired(at: Date()))
    }

    @Test func expiryIsComparedWithTheGivenClock() throws {
        let jwt = try JWT(decoding: JWTTests.issueToken)
        #expect(jwt.isExpired(at: Date(timeIntervalSince1970: 1_459_872_074)))
        #expect(!jwt.isExpired(at: Date(timeIntervalSince1970: 1_459_872_073)))
        #expect(!(try JWT(decoding: makeToken(claims: "{}"))).isExpired(at: Date()))
    }

    @Test func errorsNeverContainTheToken() {
        let token = makeToken(claims: #""secret-claims""#)
        do {
            _ = try JWT(decoding: token)
            Issue.record("decoded")
        } catch {
            #expect(!error.description.contains(token))
            #expect(!error.description.contains("secret-claims"))
        }
    }
}

@Suite struct TimeTextTests {
    @Test func durations() {
        #expect(TimeText.duration(0) == "0s")
        #expect(TimeText.duration(59.9) == "59s")
        #expect(TimeText.duration(240) == "4m")
        #expect(TimeText.duration(3600) == "1h")
        #expect(TimeText.duration(7500) == "2h 5m")
        #expect(TimeText.duration(-(3 * 86_400 + 4 * 3600 + 5)) == "3d 4h")
        #expect(TimeText.duration(10 * 365 * 86_400 + 239 * 86_400 + 7) == "10y 239d")
    }

    @Test func relativeExpiry() {
        let now = Date(timeIntervalSince1970: 1000)
        #expect(TimeText.expiry(now.addingTimeInterval(245), now: now) == "expires in 4m")
        #expect(TimeText.expiry(now.addingTimeInterval(-7500), now: now) == "expired 2h 5m ago")
        #expect(TimeText.expiry(now, now: now) == "expired 0s ago")
    }

    @Test func localTimeUsesTheGivenZone() throws {
        let text = TimeText.local(Date(timeIntervalSince1970: 1_459_872_074), timeZone: "Europe/Berlin")
        #expect(text == "2016-04-05 18:01:14 CEST")
    }
}

@Suite struct Base64URLTests {
    // RFC 4648 §10 vectors, in the URL-safe alphabet and without padding.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"),
        ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        let padded = encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)
        #expect(Base64URL.decode(padded) == Array(plain.utf8))
    }

    @Test func urlSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
        #expect(Base64URL.decode("+/8") == nil)
    }

    @Test func malformedInputIsRefused() {
        #expect(Base64URL.decode("Z") == nil) // 4n+1 characters
        #expect(Base64URL.decode("Zg=") == nil) // wrong padding
        #expect(Base64URL.decode("Zm9v=") == nil) // padding on a full group
        #expect(Base64URL.decode("Zh") == nil) // non-zero trailing bits
        #expect(Base64URL.decode("Zm 9v") == nil)
    }
}

@Suite struct JSONTextTests {
    @Test func booleansAndNumbersAreToldApart() throws {
        let values = try #require(
            try JSONText.parse(Array(#"[true,false,1,0,1.0,-3,2.5,12345678901234567890]"#.utf8)).array)
        #expect(values.map { $0.bool != nil } == [true, true, false, false, false, false, false, false])
        #expect(values.map { $0.number != nil } == [false, false, true, true, true, true, true, true])
        #expect(values.dropLast().map(\.number) == [nil, nil, 1, 0, 1, -3, 2.5])
        #expect(values[7] == .unsigned(12_345_678_901_234_567_890))
        #expect(values[4] == .double(1))
        #expect(JSONValue.string("1").number == nil)
        #expect(JSONValue.integer(1).bool == nil)
    }

    @Test(arguments: [
        ("{}", "an object"), ("[]", "an array"), (#""x""#, "a string"), ("1", "a number"),
        ("true", "a boolean"), ("null", "null"),
    ])
    func typeDescriptions(text: String, expected: String) throws {
        #expect(JSONText.typeDescription(try JSONText.parse(Array(text.utf8))) == expected)
    }

    @Test func escapesAndUnicode() throws {
        let value = try JSONText.parse(Array(#""a\"b\\c\n\u00e9\ud83d\udd11\/""#.utf8))
        #expect(value.string == "a\"b\\c\né🔑/")
        #expect(JSONText.text("q\"\u{01}\n/") == #""q\"\u0001\n/""#)
    }

    @Test func textSortsKeysAndIsCompact() throws {
        let value = try JSONText.parse(Array(#"{"z": 1.5, "a": [true, null], "m": {"k": "v"}, "n": 1459872074}"#.utf8))
        #expect(JSONText.text(value) == #"{"a":[true,null],"m":{"k":"v"},"n":1459872074,"z":1.5}"#)
        #expect(JSONText.text(["ok": true, "none": nil]) == #"{"none":null,"ok":true}"#)
        #expect(JSONText.text(try JSONText.parse(Array("[2.0,-0.0,1e-7,1e3]".utf8))) == "[2,-0,1e-07,1000]")
    }

    /// Each malformed text is refused with the reason JSONSerialization gives.
    @Test(arguments: [
        ("", "Unexpected end of file during JSON parse."), ("{", "Unexpected end of file during JSON parse."),
        ("[1,,]", "Invalid value around character 3."),
        ("01", "Invalid value around character 1."), ("[.5]", "Invalid value around character 1."),
        ("[NaN]", "Invalid value around character 1."),
        (
            #"["\ud800"]"#,
            "Unable to convert hex escape sequence (no low character) to UTF8-encoded character at position 8."
        ),
        ("// c\n[1]", "Invalid value around character 0."), ("1.", "Unexpected end of file during JSON parse."),
        ("-", "Unexpected end of file during JSON parse."),
        ("\"\u{01}\"", "Invalid string: control character around character 1."),
        (#""\x""#, "Invalid escape sequence around character 2."), ("tru", "Unexpected end of file during JSON parse."),
        ("{} {}", "Garbage at end around character 3."), (#"{"a" 1}"#, "Invalid value around character 5."),
        ("1e400", "Number 1e400 is not representable in Swift."),
    ])
    func malformedJSONIsAnError(text: String, reason: String) {
        #expect(throws: JSONError(reason: reason)) { try JSONText.parse(Array(text.utf8)) }
    }

    /// RFC 8259 §9 lets a parser accept non-JSON forms; JSONSerialization
    /// accepts one trailing comma in an array or object.
    @Test func aTrailingCommaIsAccepted() throws {
        #expect(try JSONText.parse(Array("[1,]".utf8)).array?.count == 1)
        #expect(try JSONText.parse(Array(#"{"a":1,}"#.utf8)).object?.keys.sorted() == ["a"])
    }

    @Test func deepNestingIsRefusedWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONError(reason: "Too many nested arrays or dictionaries around character 512.")) {
            try JSONText.parse(Array(deep.utf8))
        }
        let ok = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: Never.self) { try JSONText.parse(Array(ok.utf8)) }
    }
}

import Foundation
import Testing

@testable import FobTokens

/// HOTP (RFC 4226) and TOTP (RFC 6238) against the RFCs' own vectors.
@Suite struct OneTimePasswordTests {
    static let seed20 = Array("12345678901234567890".utf8)
    static let seed32 = Array("12345678901234567890123456789012".utf8)
    static let seed64 = Array("1234567890123456789012345678901234567890123456789012345678901234".utf8)

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// RFC 4226 Appendix D: the ten HOTP values of the ASCII secret "12345678901234567890".
    @Test(
        arguments: zip(
            0..<10,
            [
                "755224", "287082", "359152", "969429", "338314",
                "254676", "287922", "162583", "399871", "520489",
            ]))
    func rfc4226AppendixD(counter: Int, expected: String) throws {
        #expect(
            OneTimePassword.hotp(secret: Self.seed20, counter: UInt64(counter), digits: 6, algorithm: .sha1) == expected
        )
        let otp = try OneTimePassword(secret: Self.seed20, kind: .hotp(counter: UInt64(counter)))
        #expect(otp.code(at: Date()) == expected)
        #expect(otp.secondsLeft(at: Date()) == nil)
    }

    /// RFC 4226 Appendix D, Table 1: the HMAC-SHA-1 value behind count 0.
    @Test func rfc4226IntermediateHMAC() {
        let mac = OTPAlgorithm.sha1.mac(key: Self.seed20, message: [UInt8](repeating: 0, count: 8))
        #expect(Self.hex(mac) == "cc93cf18508d94934c64b65d8ba7667fb7cde4b0")
    }

    struct Vector: Sendable, CustomTestStringConvertible {
        var time: Int64
        var algorithm: OTPAlgorithm
        var code: String
        var testDescription: String { "\(algorithm.rawValue) at \(time)" }
    }

    /// RFC 6238 Appendix B: 8 digits, 30 s, T0 = 0, the seed of each hash's length.
    static let rfc6238: [Vector] = {
        let table: [(Int64, String, String, String)] = [
            (59, "94287082", "46119246", "90693936"),
            (1_111_111_109, "07081804", "68084774", "25091201"),
            (1_111_111_111, "14050471", "67062674", "99943326"),
            (1_234_567_890, "89005924", "91819424", "93441116"),
            (2_000_000_000, "69279037", "90698825", "38618901"),
            (20_000_000_000, "65353130", "77737706", "47863826"),
        ]
        return table.flatMap { time, sha1, sha256, sha512 in
            [
                Vector(time: time, algorithm: .sha1, code: sha1),
                Vector(time: time, algorithm: .sha256, code: sha256),
                Vector(time: time, algorithm: .sha512, code: sha512),
            ]
        }
    }()

    @Test(arguments: rfc6238)
    func rfc6238AppendixB(_ vector: Vector) throws {
        let seed: [UInt8]
        switch vector.algorithm {
        case .sha1: seed = Self.seed20
        case .sha256: seed = Self.seed32
        case .sha512: seed = Self.seed64
        }
        let otp = try OneTimePassword(secret: seed, algorithm: vector.algorithm, digits: 8)
        #expect(otp.code(atUnixTime: vector.time) == vector.code)
        #expect(otp.code(at: Date(timeIntervalSince1970: TimeInterval(vector.time))) == vector.code)
        // The same through a URI, the seed in base32.
        let uri =
            "otpauth://totp/RFC:6238?secret=\(Base32.encode(seed))&algorithm=\(vector.algorithm.rawValue)&digits=8&period=30"
        #expect(try OneTimePassword(parsing: uri).code(atUnixTime: vector.time) == vector.code)
    }

    /// RFC 4231 test case 6 and RFC 2202 test case 6: keys longer than the
    /// hash's block are hashed first (libsodium's and Nettle's init take any length).
    @Test func hmacWithKeysLongerThanABlock() {
        let data = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(
            Self.hex(OTPAlgorithm.sha1.mac(key: [UInt8](repeating: 0xAA, count: 80), message: data))
                == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
        #expect(
            Self.hex(OTPAlgorithm.sha256.mac(key: [UInt8](repeating: 0xAA, count: 131), message: data))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            Self.hex(OTPAlgorithm.sha512.mac(key: [UInt8](repeating: 0xAA, count: 131), message: data))
                == "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"
        )
    }

    @Test func codesKeepTheirLeadingZeros() throws {
        // RFC 6238: SHA1 at 1111111109 is 07081804; its 6-digit form is 081804.
        let otp = try OneTimePassword(secret: Self.seed20, digits: 6)
        #expect(otp.code(atUnixTime: 1_111_111_109) == "081804")
        let seven = try OneTimePassword(secret: Self.seed20, digits: 7)
        #expect(seven.code(atUnixTime: 1_111_111_109) == "7081804")
    }

    @Test func secondsLeftInThePeriod() throws {
        let otp = try OneTimePassword(secret: Self.seed20)
        #expect(otp.secondsLeft(atUnixTime: 0) == 30)
        #expect(otp.secondsLeft(atUnixTime: 29) == 1)
        #expect(otp.secondsLeft(atUnixTime: 30) == 30)
        #expect(otp.secondsLeft(atUnixTime: 59) == 1)
        #expect(otp.secondsLeft(at: Date(timeIntervalSince1970: 59.9)) == 1)
        // A code holds for its whole step and changes at the boundary.
        #expect(otp.code(atUnixTime: 30) == otp.code(atUnixTime: 59))
        #expect(otp.code(atUnixTime: 59) != otp.code(atUnixTime: 60))
        let minute = try OneTimePassword(secret: Self.seed20, kind: .totp(period: 60))
        #expect(minute.secondsLeft(atUnixTime: 61) == 59)
        #expect(
            minute.code(atUnixTime: 61)
                == OneTimePassword.hotp(secret: Self.seed20, counter: 1, digits: 6, algorithm: .sha1))
    }

    @Test func timeStepsUseFloorAndT0Zero() {
        #expect(OneTimePassword.timeStep(atUnixTime: 0, period: 30) == 0)
        #expect(OneTimePassword.timeStep(atUnixTime: 59, period: 30) == 1)
        #expect(OneTimePassword.timeStep(atUnixTime: 20_000_000_000, period: 30) == 666_666_666)
        #expect(OneTimePassword.timeStep(atUnixTime: -5, period: 30) == 0)
        // Past 2038: the step no longer fits 32 bits signed seconds, and is still right.
        #expect(OneTimePassword.timeStep(atUnixTime: Int64(UInt32.max) * 30, period: 30) == UInt64(UInt32.max))
    }

    @Test func invalidPartsAreRefused() {
        #expect(throws: OTPError.missingSecret) { try OneTimePassword(secret: []) }
        #expect(throws: OTPError.badDigits) { try OneTimePassword(secret: Self.seed20, digits: 5) }
        #expect(throws: OTPError.badDigits) { try OneTimePassword(secret: Self.seed20, digits: 9) }
        #expect(throws: OTPError.badPeriod) { try OneTimePassword(secret: Self.seed20, kind: .totp(period: 0)) }
    }

    @Test func descriptionsLeaveTheSecretOut() throws {
        let otp = try OneTimePassword(parsing: "otpauth://totp/ACME:ana?secret=JBSWY3DPEHPK3PXP")
        for text in [
            otp.description, String(reflecting: otp),
            {
                var s = ""
                dump(otp, to: &s)
                return s
            }(),
        ] {
            #expect(!text.contains("JBSWY3DPEHPK3PXP"))
            #expect(!text.contains("72, 101, 108")) // the decoded bytes, "Hello!"
            #expect(text.contains("ana"))
        }
        #expect(otp.description == #"TOTP SHA1 6 digits 30 s, issuer "ACME", account "ana""#)
    }
}

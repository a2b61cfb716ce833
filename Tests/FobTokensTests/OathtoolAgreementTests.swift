import FobTestSupport
import Foundation
import Testing

@testable import FobTokens

/// Where `oathtool` is on the `PATH`, if it is.
enum Oathtool {
    static let path: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/oathtool" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()
}

/// Fob's codes against OATH Toolkit's `oathtool` (Debian `oathtool`, in
/// `scripts/setup --test`), an independent HOTP/TOTP implementation, at
/// fixed instants. The secret goes to oathtool on its standard input (`-`),
/// never in its arguments.
@Suite(
    .enabled(
        if: Oathtool.path != nil,
        "oathtool is not installed (apt-get install oathtool, or scripts/setup --test): agreement with it not checked"))
struct OathtoolAgreementTests {
    /// oathtool's code for a base32 secret.
    static func oathtool(_ arguments: [String], secret: String) throws -> String {
        let result = try runTool(Oathtool.path!, arguments + ["-b", "-"], input: Array((secret + "\n").utf8))
        #expect(result.status == 0)
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func randomSecret(bytes: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static let instants: [Int64] = [0, 59, 1_111_111_109, 1_234_567_890, 1_700_000_000, 2_000_000_000, 20_000_000_000]

    @Test(arguments: OTPAlgorithm.allCases)
    func totpAgreesWithOathtool(_ algorithm: OTPAlgorithm) throws {
        for (digits, period) in [(6, 30), (7, 60), (8, 30)] {
            let secret = Self.randomSecret(bytes: 20)
            let base32 = Base32.encode(secret)
            let otp = try OneTimePassword(
                parsing:
                    "otpauth://totp/t?secret=\(base32)&algorithm=\(algorithm.rawValue)&digits=\(digits)&period=\(period)"
            )
            for instant in Self.instants {
                let theirs = try Self.oathtool(
                    [
                        "--totp=\(algorithm.rawValue.lowercased())", "-d", "\(digits)",
                        "-s", "\(period)s", "--now", "@\(instant)",
                    ], secret: base32)
                #expect(
                    otp.code(atUnixTime: instant) == theirs, "\(algorithm) \(digits) digits \(period) s at \(instant)")
            }
        }
    }

    /// The default settings, as `oathtool --totp -b SECRET` uses them, with a
    /// grouped lower-case secret as people paste them.
    @Test func aBareSecretAgreesWithOathtoolsDefaults() throws {
        let base32 = Base32.encode(Self.randomSecret(bytes: 10))
        let grouped = stride(from: 0, to: base32.count, by: 4).map { start in
            let from = base32.index(base32.startIndex, offsetBy: start)
            return base32[from..<base32.index(from, offsetBy: min(4, base32.count - start))].lowercased()
        }.joined(separator: " ")
        let otp = try OneTimePassword(parsing: grouped)
        let theirs = try Self.oathtool(["--totp", "--now", "@1700000000"], secret: base32)
        #expect(otp.code(atUnixTime: 1_700_000_000) == theirs)
    }

    @Test func hotpAgreesWithOathtool() throws {
        let base32 = Base32.encode(Self.randomSecret(bytes: 20))
        for counter: UInt64 in [0, 1, 9, 1000, 4_294_967_296] {
            let otp = try OneTimePassword(parsing: "otpauth://hotp/h?secret=\(base32)&counter=\(counter)&digits=8")
            let theirs = try Self.oathtool(["-c", "\(counter)", "-d", "8"], secret: base32)
            #expect(otp.code(at: Date()) == theirs, "counter \(counter)")
        }
    }
}

import FobTokens
import Foundation
import Testing

@testable import FobCLI

/// `fob generate`, in process.
@Suite struct GenerateCommandTests {
    static func json(_ run: CLIRun) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(run.stdout)) as? [String: Any])
    }

    @Test func defaultsPrintTwentyCharactersAndANewline() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["generate"], plain: true)
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.stdout.count == 21 && run.stdout.last == UInt8(ascii: "\n"))
        let password = run.stdout.dropLast()
        for characterClass in CharacterClass.allCases {
            #expect(password.contains { characterClass.characters.contains($0) })
        }
        #expect(h.run(["generate"], plain: true).stdout != run.stdout)
    }

    @Test func jsonHasThePasswordAndItsEntropy() throws {
        let h = try CLIHarness(createVault: false)
        let object = try Self.json(
            h.run(["generate", "--length", "32", "--classes", "lower,digits", "--json"], plain: true))
        let password = try #require(object["password"] as? String)
        #expect(password.count == 32)
        #expect(password.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber) })
        let entropy = try #require(object["entropy"] as? Double)
        let exact = try PasswordPolicy(length: 32, classes: [.lower, .digits]).entropy()
        #expect(entropy <= exact && exact - entropy < 0.01)
        #expect(Set(object.keys) == ["password", "entropy"])
    }

    @Test func passphrases() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["generate", "--words", "5", "--separator", "-", "--json"], plain: true)
        #expect(run.status == 0, "\(run.stderr)")
        let object = try Self.json(run)
        let words = Set(EFFWordlist.words)
        let phrase = try #require(object["password"] as? String)
        // Four EFF words have a hyphen of their own ("t-shirt"), so count by the list.
        #expect(phrase.split(separator: "-").count >= 5)
        #expect(object["entropy"] as? Double == 64.62) // 5 × 12.9248…, rounded down
        let plain = h.run(["generate", "--words", "3"], plain: true).stdoutText
        #expect(plain.hasSuffix("\n"))
        #expect(plain.dropLast().split(separator: " ").allSatisfy { words.contains(String($0)) })
    }

    @Test func excludedCharactersAreLiteralEvenWhenTheyLookLikeOptions() throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["generate", "--length", "500", "--classes", "symbols", "--exclude", "-!\\"], plain: true)
        #expect(run.status == 0, "\(run.stderr)")
        let password = run.stdout.dropLast()
        #expect(
            !password.contains(UInt8(ascii: "-")) && !password.contains(UInt8(ascii: "!"))
                && !password.contains(UInt8(ascii: "\\")))
        #expect(password.count == 500)
    }

    @Test(arguments: [
        (["--length", "0"], "the length must be 1 to 4096 characters, not 0"),
        (["--length", "4097"], "the length must be 1 to 4096 characters, not 4097"),
        (["--length", "twenty"], "--length needs a whole number"),
        (["--length", "-5"], "--length needs a whole number"),
        (["--words", "0"], "the number of words must be 1 to 64, not 0"),
        (["--words", "65"], "the number of words must be 1 to 64, not 65"),
        (["--length", "3"], "4 character classes cannot each appear in 3 characters"),
        (["--classes", "lower,emoji"], "--classes takes a comma-separated list of lower, upper, digits, symbols"),
        (["--classes", ""], "--classes takes a comma-separated list of lower, upper, digits, symbols"),
        (
            ["--classes", "digits", "--exclude", "0123456789"],
            "the excluded characters include every character of the class 'digits'"
        ),
        (["--words", "4", "--length", "10"], "--length is for passwords of characters, not with --words"),
        (["--separator", "-"], "--separator goes with --words"),
    ])
    func badSettingsAreUsageErrors(_ arguments: [String], _ message: String) throws {
        let h = try CLIHarness(createVault: false)
        let run = h.run(["generate"] + arguments, plain: true)
        #expect(run.status == 2)
        #expect(run.stdout.isEmpty)
        #expect(run.stderrLines.first == "fob: \(message)")
    }

    @Test func helpDescribesEveryOption() throws {
        let h = try CLIHarness(createVault: false)
        let help = h.run(["generate", "--help"], plain: true).stdoutText
        for option in ["--length N", "--classes LIST", "--exclude CHARS", "--words N", "--separator S", "--json"] {
            #expect(help.contains(option))
        }
    }
}

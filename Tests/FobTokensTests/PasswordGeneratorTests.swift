import Foundation
import Testing

@testable import FobTokens

/// Chi-square goodness of fit with a fixed, generous threshold.
enum ChiSquare {
    /// Σ (observed − expected)² / expected, for equal expected counts.
    static func statistic(_ counts: [Int], total: Int) -> Double {
        let expected = Double(total) / Double(counts.count)
        return counts.reduce(0) { $0 + pow(Double($1) - expected, 2) / expected }
    }

    /// The value a uniform source exceeds with probability under 10⁻⁶: the
    /// Wilson–Hilferty approximation `df · (1 − 2/(9 df) + z √(2/(9 df)))³`
    /// with z = 5. Against the exact chi-square tail, the false-failure
    /// probability is 2.2 × 10⁻⁷ for 25 degrees of freedom (78.2),
    /// 2.6 × 10⁻⁷ for 89 (172.7) and 2.9 × 10⁻⁷ for 7,775 (8,414.6).
    static func critical(degreesOfFreedom df: Int) -> Double {
        let d = Double(df)
        let z = 5.0
        return d * pow(1 - 2 / (9 * d) + z * (2 / (9 * d)).squareRoot(), 3)
    }
}

@Suite struct PasswordGeneratorTests {
    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func defaultsAreTwentyCharactersOfAllFourClasses() throws {
        let policy = PasswordPolicy()
        #expect(
            policy.kind == .characters && policy.length == 20 && policy.classes.count == 4 && policy.excluded.isEmpty)
        for _ in 0..<200 {
            let password = try PasswordGenerator.generate(policy)
            #expect(password.count == 20)
            for characterClass in CharacterClass.allCases {
                #expect(password.contains { characterClass.characters.contains($0) })
            }
        }
    }

    @Test func theClassesAreDisjointPrintableASCII() {
        let all = CharacterClass.allCases.flatMap(\.characters)
        #expect(all.count == 94)
        #expect(Set(all).count == 94)
        #expect(Set(all) == Set(0x21...0x7E))
        #expect(CharacterClass.symbols.characters.count == 32)
    }

    @Test func everyRequestedClassAppearsEvenAtTheMinimumLength() throws {
        let policy = PasswordPolicy(length: 4)
        for _ in 0..<500 {
            let password = try PasswordGenerator.generate(policy)
            for characterClass in CharacterClass.allCases {
                #expect(password.contains { characterClass.characters.contains($0) })
            }
        }
    }

    /// Excluded characters are taken one by one: `a-z` is three characters, not a range.
    @Test func excludedCharactersAreTakenLiterally() throws {
        let excluded = #"a-z\]^"'$ é"#
        let policy = PasswordPolicy(length: 200, excluded: excluded)
        var seen = Set<UInt8>()
        for _ in 0..<50 { seen.formUnion(try PasswordGenerator.generate(policy)) }
        for byte in Array("a-z\\]^\"'$".utf8) { #expect(!seen.contains(byte), "\(Character(Unicode.Scalar(byte)))") }
        #expect(seen.contains(UInt8(ascii: "b")) && seen.contains(UInt8(ascii: "y")))
        #expect(seen.count == 94 - 9)
    }

    @Test func badSettingsAreTypedErrors() {
        func refused(_ policy: PasswordPolicy) -> PasswordPolicyError? {
            do {
                _ = try PasswordGenerator.generate(policy)
                return nil
            } catch { return error }
        }
        #expect(refused(PasswordPolicy(length: 0)) == .length(0))
        #expect(refused(PasswordPolicy(length: 4097)) == .length(4097))
        #expect(refused(PasswordPolicy(length: -1)) == .length(-1))
        #expect(refused(PasswordPolicy(length: 3)) == .moreClassesThanLength(classes: 4, length: 3))
        #expect(refused(PasswordPolicy(classes: [])) == .noClasses)
        #expect(refused(PasswordPolicy(excluded: "9876543210")) == .classExcluded(.digits))
        #expect(refused(.passphrase(words: 0)) == .wordCount(0))
        #expect(refused(.passphrase(words: 65)) == .wordCount(65))
        #expect(throws: PasswordPolicyError.length(0)) { try PasswordPolicy(length: 0).entropy() }
        // The limits themselves are accepted.
        #expect(refused(PasswordPolicy(length: 1, classes: [.digits])) == nil)
        #expect(refused(PasswordPolicy(length: 4096)) == nil)
        #expect(refused(.passphrase(words: 1)) == nil)
        #expect(refused(.passphrase(words: 64)) == nil)
        // The other kind's settings are not checked.
        var words = PasswordPolicy.passphrase()
        words.length = 0
        #expect(refused(words) == nil)
    }

    @Test func passphrasesAreWordsOfTheListJoinedByTheSeparator() throws {
        let words = Set(EFFWordlist.words)
        let password = Self.text(try PasswordGenerator.generate(.passphrase(words: 8, separator: " + ")))
        let parts = password.components(separatedBy: " + ")
        #expect(parts.count == 8)
        #expect(parts.allSatisfy { words.contains($0) })
        #expect(words.contains(Self.text(try PasswordGenerator.generate(.passphrase(words: 1, separator: "x")))))
        let unicode = try PasswordGenerator.generate(.passphrase(words: 3, separator: "·"))
        #expect(Self.text(unicode).components(separatedBy: "·").count == 3)
    }

    @Test func theWordlistIsTheEFFLongList() throws {
        let words = EFFWordlist.words
        #expect(words.count == 7776)
        #expect(Set(words).count == 7776)
        #expect(words == words.sorted())
        #expect(words.first == "abacus" && words.last == "zoom")
        #expect(
            words.allSatisfy { (3...9).contains($0.count) && $0.allSatisfy { $0 == "-" || ("a"..."z").contains($0) } })
        // Where Debian's diceware package is installed, the list matches it word for word.
        let debian = "/usr/lib/python3/dist-packages/diceware/wordlists/wordlist_en_eff.txt"
        if let text = try? String(contentsOfFile: debian, encoding: .utf8) {
            let lines = text.split(separator: "\n")
            #expect(lines.count == 7776)
            for (index, line) in lines.enumerated() {
                var n = index
                var dice = ""
                for _ in 0..<5 {
                    dice = String(n % 6 + 1) + dice
                    n /= 6
                }
                #expect(line == "\(dice)\t\(words[index])")
            }
        }
    }

    // MARK: Entropy

    /// Counts the passwords of `length` over classes of these sizes that
    /// hold every class, by enumerating all of them.
    static func acceptable(_ sizes: [Int], length: Int) -> Int {
        let classOf = sizes.enumerated().flatMap { index, size in [Int](repeating: index, count: size) }
        let everyClass = (1 << sizes.count) - 1
        var count = 0
        var word = [Int](repeating: 0, count: length)
        while true {
            var seen = 0
            for character in word { seen |= 1 << classOf[character] }
            if seen == everyClass { count += 1 }
            var position = 0
            while position < length {
                word[position] += 1
                if word[position] < classOf.count { break }
                word[position] = 0
                position += 1
            }
            if position == length { return count }
        }
    }

    @Test func entropyIsTheLogOfTheNumberOfAcceptablePasswords() throws {
        // digits {0 1 2} and symbols {! #}, 3 characters: 125 − 27 − 8 = 90 passwords.
        let small = PasswordPolicy(
            length: 3, classes: [.digits, .symbols], excluded: "3456789" + Self.symbolsExcept("!#"))
        #expect(Self.acceptable([3, 2], length: 3) == 90)
        #expect(abs(try small.entropy() - log2(90)) < 1e-12)
        // Four classes of 2, 1, 3, 2 characters, lengths 4 to 6, against enumeration.
        let policy = PasswordPolicy(
            length: 4,
            excluded: "cdefghijklmnopqrstuvwxyz" + "BCDEFGHIJKLMNOPQRSTUVWXYZ" + "3456789" + Self.symbolsExcept("!#"))
        for length in 4...6 {
            var p = policy
            p.length = length
            let exact = log2(Double(Self.acceptable([2, 1, 3, 2], length: length)))
            #expect(abs(try p.entropy() - exact) < 1e-9, "length \(length)")
        }
        // The defaults: 20 of 94 characters.
        let bits = try PasswordPolicy().entropy()
        #expect(bits < 20 * log2(94.0))
        #expect(abs(bits - 130.92587) < 1e-4, "\(bits)")
        // A single possible password has no entropy.
        #expect(try PasswordPolicy(length: 5, classes: [.digits], excluded: "123456789").entropy() == 0)
        #expect(
            try PasswordGenerator.generate(PasswordPolicy(length: 5, classes: [.digits], excluded: "123456789"))
                == Array("00000".utf8))
        // Words: 12.925 bits each.
        #expect(abs(try PasswordPolicy.passphrase(words: 6).entropy() - 6 * log2(7776.0)) < 1e-12)
        // Long passwords do not overflow.
        #expect(abs(try PasswordPolicy(length: 4096).entropy() - 4096 * log2(94.0)) < 1e-6)
    }

    static func symbolsExcept(_ kept: String) -> String {
        String(decoding: CharacterClass.symbols.characters.filter { !kept.utf8.contains($0) }, as: UTF8.self)
    }

    // MARK: Uniformity

    /// Rejection sampling redraws the whole password: with a scripted source
    /// the first draft, which lacks a digit, is dropped, not patched.
    @Test func aDraftLackingAClassIsDrawnAgainWhole() throws {
        let policy = PasswordPolicy(length: 3, classes: [.lower, .digits])
        // The alphabet is a-z then 0-9: indexes 0, 1, 2 are "abc"; 26 is "0".
        var script: [UInt32] = [0, 1, 2, 3, 26, 4]
        let password = try PasswordGenerator.generate(policy) { bound in
            #expect(bound == 36)
            return script.removeFirst()
        }
        #expect(Self.text(password) == "d0e")
        #expect(script.isEmpty)
    }

    /// Each character of a one-class password is uniform over its 26 letters.
    @Test func charactersAreUniform() throws {
        let policy = PasswordPolicy(length: 40, classes: [.lower])
        var counts = [Int](repeating: 0, count: 26)
        let passwords = 2000
        for _ in 0..<passwords {
            for byte in try PasswordGenerator.generate(policy) { counts[Int(byte - UInt8(ascii: "a"))] += 1 }
        }
        let statistic = ChiSquare.statistic(counts, total: passwords * 40)
        #expect(statistic < ChiSquare.critical(degreesOfFreedom: 25), "χ² = \(statistic)")
    }

    /// With the each-class rule, whole passwords are uniform over the
    /// acceptable ones: 90 of them for 3 characters of {0 1 2} and {! #}.
    @Test func acceptedPasswordsAreUniformOverTheAcceptableOnes() throws {
        let policy = PasswordPolicy(
            length: 3, classes: [.digits, .symbols], excluded: "3456789" + Self.symbolsExcept("!#"))
        var counts: [String: Int] = [:]
        let draws = 18_000
        for _ in 0..<draws { counts[Self.text(try PasswordGenerator.generate(policy)), default: 0] += 1 }
        #expect(counts.count == 90)
        #expect(counts.keys.allSatisfy { $0.contains { "012".contains($0) } && $0.contains { "!#".contains($0) } })
        let statistic = ChiSquare.statistic(Array(counts.values), total: draws)
        #expect(statistic < ChiSquare.critical(degreesOfFreedom: 89), "χ² = \(statistic)")
    }

    /// Every word of the list is equally likely.
    @Test func wordsAreUniform() throws {
        var index: [String: Int] = [:]
        for (i, word) in EFFWordlist.words.enumerated() { index[word] = i }
        var counts = [Int](repeating: 0, count: 7776)
        let calls = 1215 // × 64 words = 77,760 draws, 10 per word expected
        for _ in 0..<calls {
            let phrase = Self.text(try PasswordGenerator.generate(.passphrase(words: 64, separator: " ")))
            for word in phrase.split(separator: " ") { counts[index[String(word)]!] += 1 }
        }
        let statistic = ChiSquare.statistic(counts, total: calls * 64)
        #expect(statistic < ChiSquare.critical(degreesOfFreedom: 7775), "χ² = \(statistic)")
    }

    /// The threshold itself: a skewed source fails it.
    @Test func theThresholdCatchesABiasedSource() {
        // `byte % 26` over 256 byte values favours the first 22 letters (10 vs 9 ways).
        var counts = [Int](repeating: 0, count: 26)
        for i in 0..<80_000 { counts[(i % 256) % 26] += 1 }
        #expect(ChiSquare.statistic(counts, total: 80_000) > ChiSquare.critical(degreesOfFreedom: 25))
    }
}

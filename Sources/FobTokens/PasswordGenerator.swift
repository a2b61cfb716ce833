import CSodium
import FobSystem
import FoundationEssentials
@preconcurrency import Glibc

/// A set of characters a generated password may draw from. The four
/// classes are disjoint and printable ASCII, 94 characters in all.
public enum CharacterClass: String, CaseIterable, Sendable, Comparable {
    /// `a-z`, 26 characters.
    case lower
    /// `A-Z`, 26 characters.
    case upper
    /// `0-9`, 10 characters.
    case digits
    /// The 32 ASCII punctuation characters `` !"#$%&'()*+,-./:;<=>?@[\]^_`{|}~ ``
    /// (no space).
    case symbols

    /// The class's characters as ASCII bytes, in code order.
    public var characters: [UInt8] {
        switch self {
        case .lower: return Array(UInt8(ascii: "a")...UInt8(ascii: "z"))
        case .upper: return Array(UInt8(ascii: "A")...UInt8(ascii: "Z"))
        case .digits: return Array(UInt8(ascii: "0")...UInt8(ascii: "9"))
        case .symbols:
            return (UInt8(0x21)...UInt8(0x7E)).filter {
                !(0x30...0x39).contains($0) && !(0x41...0x5A).contains($0) && !(0x61...0x7A).contains($0)
            }
        }
    }

    /// In the order of ``allCases``: lower, upper, digits, symbols.
    public static func < (a: CharacterClass, b: CharacterClass) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// What a generated password looks like: characters from some classes, or
/// a passphrase of words from the EFF long wordlist. A plain value, for a
/// dialog to edit field by field: switching ``kind`` keeps the other
/// kind's settings.
///
/// ```swift
/// var policy = PasswordPolicy()                 // 20 characters, all four classes
/// policy.length = 32
/// policy.excluded = "O0Il1"
/// let password = try PasswordGenerator.generate(policy)   // [UInt8], UTF-8
/// let bits = try policy.entropy()               // ≈ 206.3
/// ```
public struct PasswordPolicy: Sendable, Equatable {
    /// Characters or words.
    public enum Kind: Sendable, Equatable {
        /// ``length`` characters from ``classes`` less ``excluded``, each
        /// class at least once.
        case characters
        /// ``words`` words of the EFF long wordlist joined by ``separator``.
        case words
    }

    /// Characters or words; `.characters` by default.
    public var kind: Kind
    /// The number of characters, 1 to 4,096 (default 20).
    public var length: Int
    /// The classes to draw from, each appearing at least once (default all four).
    public var classes: Set<CharacterClass>
    /// Characters never used, taken literally one by one (no ranges, no
    /// escapes); characters outside every class change nothing. Default none.
    public var excluded: String
    /// The number of words of a passphrase, 1 to 64 (default 6, about 77.5 bits).
    public var words: Int
    /// What goes between the words of a passphrase (default one space).
    /// An empty separator, or one made of letters, can make two word
    /// sequences read alike, so ``entropy()`` is then an upper bound.
    public var separator: String

    /// The lengths accepted: 1 to 4,096 characters.
    public static let lengthRange = 1...4096
    /// The word counts accepted: 1 to 64.
    public static let wordRange = 1...64
    /// The default length: 20 characters.
    public static let defaultLength = 20
    /// The default number of words: 6.
    public static let defaultWords = 6

    /// A policy for characters (``kind`` `.characters`).
    /// - Parameters:
    ///   - length: characters, 1 to 4,096 (checked by ``validate()``).
    ///   - classes: the classes to use, each at least once.
    ///   - excluded: characters never used.
    public init(
        length: Int = PasswordPolicy.defaultLength, classes: Set<CharacterClass> = Set(CharacterClass.allCases),
        excluded: String = ""
    ) {
        kind = .characters
        self.length = length
        self.classes = classes
        self.excluded = excluded
        words = PasswordPolicy.defaultWords
        separator = " "
    }

    /// A policy for a passphrase (``kind`` `.words`).
    /// - Parameters:
    ///   - words: words, 1 to 64 (checked by ``validate()``).
    ///   - separator: what goes between the words.
    public static func passphrase(words: Int = PasswordPolicy.defaultWords, separator: String = " ") -> PasswordPolicy {
        var policy = PasswordPolicy()
        policy.kind = .words
        policy.words = words
        policy.separator = separator
        return policy
    }

    /// The characters each requested class keeps once ``excluded`` is
    /// taken out, in class order (lower, upper, digits, symbols).
    /// - Throws: as ``validate()``.
    public func alphabets() throws(PasswordPolicyError) -> [(CharacterClass, [UInt8])] {
        guard Self.lengthRange.contains(length) else { throw .length(length) }
        guard !classes.isEmpty else { throw .noClasses }
        guard classes.count <= length else { throw .moreClassesThanLength(classes: classes.count, length: length) }
        let excludedBytes = Set(excluded.unicodeScalars.filter(\.isASCII).map { UInt8($0.value) })
        return try classes.sorted().map { (characterClass) throws(PasswordPolicyError) in
            let kept = characterClass.characters.filter { !excludedBytes.contains($0) }
            guard !kept.isEmpty else { throw .classExcluded(characterClass) }
            return (characterClass, kept)
        }
    }

    /// Checks the settings of the current ``kind``.
    /// - Throws: for `.characters`: ``PasswordPolicyError/length(_:)``
    ///   (outside 1...4,096), `.noClasses`, `.moreClassesThanLength` (each
    ///   class must fit at least once), `.classExcluded` (every character of a
    ///   class excluded); for `.words`: `.wordCount` (outside 1...64).
    public func validate() throws(PasswordPolicyError) {
        switch kind {
        case .characters: _ = try alphabets()
        case .words: guard Self.wordRange.contains(words) else { throw .wordCount(words) }
        }
    }

    /// The entropy of a generated password, in bits: log2 of the number of
    /// passwords the generator can return, each equally likely. It follows
    /// from the settings, never from a password.
    ///
    /// - Words: `words × log2(7776)` (12.925 bits a word).
    /// - Characters: not `length × log2(N)` for an alphabet of N characters,
    ///   since passwords that lack a requested class are rejected. With
    ///   classes of sizes c₁…c_k (after exclusion), N = Σcᵢ and length L,
    ///   the acceptable passwords number, by inclusion–exclusion over the
    ///   classes left out,
    ///   `A = Σ_{S ⊆ classes} (−1)^|S| (N − Σ_{i∈S} cᵢ)^L`,
    ///   and this returns `log2 A = L·log2 N + log2 Σ_S (−1)^|S| (1 − Σ_{i∈S} cᵢ / N)^L`,
    ///   exact to double precision. For 20 characters of all 94 it is
    ///   130.93 bits, not 131.09; for 4 characters of all four classes, 22.31, not 26.22.
    /// - Returns: bits, > 0 except for a single choice (0).
    /// - Throws: as ``validate()``.
    public func entropy() throws(PasswordPolicyError) -> Double {
        switch kind {
        case .words:
            try validate()
            return Double(words) * log2(Double(EFFWordlist.count))
        case .characters:
            let sizes = try alphabets().map { Double($0.1.count) }
            let total = sizes.reduce(0, +)
            var sum = 0.0
            for subset in 0..<(1 << sizes.count) {
                var leftOut = 0.0
                var sign = 1.0
                for (index, size) in sizes.enumerated() where subset & (1 << index) != 0 {
                    leftOut += size
                    sign = -sign
                }
                sum += sign * pow(1 - leftOut / total, Double(length))
            }
            return Double(length) * log2(total) + log2(sum)
        }
    }
}

/// Why a ``PasswordPolicy`` cannot be used. Descriptions name the setting
/// and its limits.
public enum PasswordPolicyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A length outside 1...4,096.
    case length(Int)
    /// A number of words outside 1...64.
    case wordCount(Int)
    /// No character class chosen.
    case noClasses
    /// More classes than characters: each class must appear at least once.
    case moreClassesThanLength(classes: Int, length: Int)
    /// Every character of this class is excluded.
    case classExcluded(CharacterClass)

    /// One line naming the problem.
    public var description: String {
        switch self {
        case .length(let n):
            return
                "the length must be \(PasswordPolicy.lengthRange.lowerBound) to \(PasswordPolicy.lengthRange.upperBound) characters, not \(n)"
        case .wordCount(let n):
            return
                "the number of words must be \(PasswordPolicy.wordRange.lowerBound) to \(PasswordPolicy.wordRange.upperBound), not \(n)"
        case .noClasses:
            return "choose at least one character class (lower, upper, digits, symbols)"
        case .moreClassesThanLength(let classes, let length):
            return "\(classes) character classes cannot each appear in \(length) character\(length == 1 ? "" : "s")"
        case .classExcluded(let characterClass):
            return "the excluded characters include every character of the class '\(characterClass.rawValue)'"
        }
    }
}

/// Generates passwords and passphrases with libsodium's CSPRNG.
public enum PasswordGenerator {
    /// A new password or passphrase for `policy`.
    ///
    /// Every character (or word) is drawn uniformly and independently with
    /// `randombytes_uniform`, which rejects the biased values a plain
    /// `random % n` would keep. For characters, a whole password that lacks
    /// one of the requested classes is thrown away and drawn again
    /// (rejection sampling), so each acceptable password is exactly as
    /// likely as any other: no position is fixed up afterwards.
    /// - Parameter policy: the settings.
    /// - Returns: the password as UTF-8 bytes (ASCII for characters; words,
    ///   with the separator's UTF-8 between them).
    /// - Throws: ``PasswordPolicyError``, as ``PasswordPolicy/validate()``.
    /// - Important: bytes, not a `String`, so that the caller can move them
    ///   into wipeable memory (FobStore's `SecretBytes`) and zero this array;
    ///   a Swift `String` cannot be wiped. Rejected drafts are zeroed here.
    public static func generate(_ policy: PasswordPolicy) throws(PasswordPolicyError) -> [UInt8] {
        try generate(policy, uniform: libsodiumUniform)
    }

    /// `randombytes_uniform(n)`: uniform in `0..<n`.
    static func libsodiumUniform(_ bound: UInt32) -> UInt32 {
        Sodium.ensureInitialised()
        return randombytes_uniform(bound)
    }

    /// ``generate(_:)`` with the random source given, for tests.
    /// - Parameter uniform: returns a uniform value in `0..<bound`.
    static func generate(_ policy: PasswordPolicy, uniform: (UInt32) -> UInt32) throws(PasswordPolicyError) -> [UInt8] {
        switch policy.kind {
        case .words:
            try policy.validate()
            let separator = Array(policy.separator.utf8)
            var out: [UInt8] = []
            for index in 0..<policy.words {
                if index > 0 { out += separator }
                out += EFFWordlist.wordBytes[Int(uniform(UInt32(EFFWordlist.count)))]
            }
            return out
        case .characters:
            let alphabets = try policy.alphabets()
            let alphabet = alphabets.flatMap(\.1)
            var memberOf = [Int](repeating: -1, count: 128)
            for (index, (_, characters)) in alphabets.enumerated() {
                for character in characters { memberOf[Int(character)] = index }
            }
            var draft = [UInt8](repeating: 0, count: policy.length)
            while true {
                var seen = 0
                for position in draft.indices {
                    let character = alphabet[Int(uniform(UInt32(alphabet.count)))]
                    draft[position] = character
                    seen |= 1 << memberOf[Int(character)]
                }
                if seen == (1 << alphabets.count) - 1 { return draft }
                draft.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            }
        }
    }
}

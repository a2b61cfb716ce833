import FobTokens

/// Why a generator setting in ``GeneratorSpec``'s text form was refused.
public enum GeneratorSpecError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A word that is neither a number, `words`, a class set nor `exclude=…`.
    case unknownWord(String)
    /// A second number.
    case twoNumbers
    /// A length or word count out of range.
    case outOfRange(Int)
    /// Character settings together with `words`.
    case classesWithWords

    public var description: String {
        switch self {
        case .unknownWord(let word): return "'\(word)' is not a setting (try: 20 luds exclude=O0Il1, or 6 words)"
        case .twoNumbers: return "give one number: the length, or with 'words' the word count"
        case .outOfRange(let n): return "\(n) is out of range (characters 1 to 4096, words 1 to 64)"
        case .classesWithWords: return "classes and exclude= are for characters, not with 'words'"
        }
    }
}

/// Generator settings as one line of text, and the one-line summary the
/// form's Generator row shows (``summary(of:short:)``). The terminal UI sets
/// the settings in its generator dialog (``GeneratorDialogModel``); the text
/// form is a compact way to write them down.
///
/// Words separated by spaces, in any order: a number (the length, or the
/// word count with `words`); a set of class letters, `l` lower, `u` upper,
/// `d` digits, `s` symbols (each used at least once); `exclude=CHARS`
/// (characters never used, taken literally); `words` for an EFF-wordlist
/// passphrase. Examples: `20 luds` (the default), `32 lud exclude=O0Il1`,
/// `6 words`. A pure function from text to a policy (a fuzz target calls it).
public enum GeneratorSpec {
    /// Parses the settings.
    /// - Throws: ``GeneratorSpecError``.
    public static func parse(_ text: String) throws(GeneratorSpecError) -> PasswordPolicy {
        var number: Int?
        var classes: Set<CharacterClass>?
        var excluded: String?
        var words = false
        for word in text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init) {
            if word == "words" || word == "word" {
                words = true
            } else if word.hasPrefix("exclude=") {
                excluded = (excluded ?? "") + word.dropFirst("exclude=".count)
            } else if !word.isEmpty, word.utf8.count <= 5, word.allSatisfy({ $0.isASCII && $0.isNumber }) {
                guard number == nil else { throw .twoNumbers }
                number = Int(word)
            } else if !word.isEmpty, word.allSatisfy({ "luds".contains($0) }) {
                var set = classes ?? []
                for letter in word {
                    switch letter {
                    case "l": set.insert(.lower)
                    case "u": set.insert(.upper)
                    case "d": set.insert(.digits)
                    default: set.insert(.symbols)
                    }
                }
                classes = set
            } else {
                throw .unknownWord(word)
            }
        }
        if words {
            guard classes == nil, excluded == nil else { throw .classesWithWords }
            let count = number ?? PasswordPolicy.defaultWords
            guard PasswordPolicy.wordRange.contains(count) else { throw .outOfRange(count) }
            return .passphrase(words: count)
        }
        let length = number ?? PasswordPolicy.defaultLength
        guard PasswordPolicy.lengthRange.contains(length) else { throw .outOfRange(length) }
        return PasswordPolicy(
            length: length, classes: classes ?? Set(CharacterClass.allCases), excluded: excluded ?? "")
    }
}

extension GeneratorSpec {
    /// The tiniest summary, for the Generator row at 80 columns: `20 chars, aA9#`
    /// (a letter or sign per class), `6 words, "-"`.
    public static func summary(of policy: PasswordPolicy, tiny: Bool) -> String {
        guard tiny, policy.kind == .characters else { return summary(of: policy, short: true) }
        let signs = policy.classes.sorted().map { (c: CharacterClass) -> String in
            switch c {
            case .lower: return "a"
            case .upper: return "A"
            case .digits: return "9"
            case .symbols: return "#"
            }
        }
        var text = "\(policy.length) char\(policy.length == 1 ? "" : "s"), " + (signs.isEmpty ? "none" : signs.joined())
        if !policy.excluded.isEmpty { text += ", not \(policy.excluded)" }
        return text
    }

    /// One line describing `policy`, as the form's Generator row shows it:
    /// `20 characters · a-z A-Z 0-9 symbols`, `32 characters · 0-9 · not O0Il1`,
    /// `6 words` or `6 words · separated by "-"`; with `short`, for narrow
    /// screens: `20 chars, a-z A-Z 0-9 sym` (never a sample of symbols: the
    /// class is all 32 ASCII punctuation characters). Says nothing about whether the
    /// settings are valid.
    public static func summary(of policy: PasswordPolicy, short: Bool = false) -> String {
        switch policy.kind {
        case .words:
            let count = "\(policy.words) word\(policy.words == 1 ? "" : "s")"
            guard policy.separator != " " else { return count }
            return short ? "\(count), \"\(policy.separator)\"" : "\(count) · separated by \"\(policy.separator)\""
        case .characters:
            let unit = short ? "char" : "character"
            var parts = ["\(policy.length) \(unit)\(policy.length == 1 ? "" : "s")"]
            let names = policy.classes.sorted().map { short && $0 == .symbols ? "sym" : classLabel($0) }
            parts.append(names.isEmpty ? "no classes" : names.joined(separator: " "))
            if !policy.excluded.isEmpty { parts.append("not \(policy.excluded)") }
            return parts.joined(separator: short ? ", " : " · ")
        }
    }

    /// How a class reads in summaries: `a-z`, `A-Z`, `0-9`, `symbols`.
    public static func classLabel(_ characterClass: CharacterClass) -> String {
        switch characterClass {
        case .lower: return "a-z"
        case .upper: return "A-Z"
        case .digits: return "0-9"
        case .symbols: return "symbols"
        }
    }
}

/// The EFF long wordlist: 7,776 English words (five dice), for passphrases
/// (© 2016 Electronic Frontier Foundation, CC BY 3.0 US; see
/// `Assets/EFF-wordlist-LICENSE.txt`). The words are in
/// `EFFWordlistData.swift`, which `scripts/generate-wordlist` makes from
/// Debian's `diceware` package.
public enum EFFWordlist {
    /// The number of words: 7,776 = 6^5, so one word carries log2(7776) ≈ 12.925 bits.
    public static let count = 7776

    /// Every word, in the list's (alphabetical) order: lower-case ASCII
    /// letters, four of them with a hyphen (`t-shirt`, …), 3 to 9 characters.
    public static let words: [String] = {
        let words = packed.flatMap { $0.split(separator: " ").map(String.init) }
        precondition(words.count == count, "the EFF wordlist has \(words.count) words, not \(count)")
        return words
    }()

    /// ``words`` as UTF-8 bytes, for building a passphrase without a `String`.
    static let wordBytes: [[UInt8]] = words.map { Array($0.utf8) }
}

import FobSystem
import FobTokens
import FoundationEssentials

/// `fob generate`: prints one new password or passphrase.
enum GenerateCommand: FobCommand {
    static let name = "generate"
    static let summary = "print a new random password (or with --words, a passphrase)"
    static let options: [OptionSpec] = [
        .value("--length", "N", help: "characters, 1 to 4096 (default 20)"),
        .value(
            "--classes", "LIST",
            help: "comma-separated: lower, upper, digits, symbols (default all four), each used at least once"),
        .value("--exclude", "CHARS", help: "never use these characters, taken literally"),
        .value("--words", "N", help: "a passphrase of N words, 1 to 64, from the EFF long wordlist"),
        .value("--separator", "S", help: "between the words of a passphrase (default one space)"),
        .flag("--json", help: "print one JSON object: password, entropy (bits)"),
    ]
    static let discussion = """
        Every character or word is drawn uniformly with libsodium. A password
        lacking one of the classes is drawn again whole, so every acceptable
        password is equally likely. The entropy (--json) follows from the
        settings: log2 of the number of acceptable passwords, or words × log2 7776.
        """

    static func run(_ invocation: Invocation) throws -> Int32 {
        let policy = try policy(invocation.arguments)
        let entropy: Double
        var password: [UInt8]
        do {
            entropy = try policy.entropy()
            password = try PasswordGenerator.generate(policy)
        } catch {
            throw UsageError(error.description, command: name)
        }
        defer { password.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        if invocation.arguments.flag("--json") {
            // Whole hundredths, rounded down: the figure never claims more than the settings give.
            let bits = (entropy * 100).rounded(.down) / 100
            let object: [String: JSONValue] = [
                "password": .string(String(decoding: password, as: UTF8.self)), "entropy": .double(bits),
            ]
            invocation.standardOutput.write(JSONText.text(object) + "\n")
        } else {
            password.append(UInt8(ascii: "\n"))
            password.withUnsafeBytes { invocation.standardOutput.write($0) }
        }
        return 0
    }

    /// The policy the options ask for.
    /// - Throws: ``UsageError`` for a value that is not a number or a class,
    ///   and for character options mixed with `--words`.
    static func policy(_ arguments: ParsedArguments) throws(UsageError) -> PasswordPolicy {
        if let words = arguments.value("--words") {
            for option in ["--length", "--classes", "--exclude"] where arguments.value(option) != nil {
                throw UsageError("\(option) is for passwords of characters, not with --words", command: name)
            }
            return .passphrase(
                words: try number(words, option: "--words"), separator: arguments.value("--separator") ?? " ")
        }
        if arguments.value("--separator") != nil {
            throw UsageError("--separator goes with --words", command: name)
        }
        var policy = PasswordPolicy()
        if let length = arguments.value("--length") { policy.length = try number(length, option: "--length") }
        if let list = arguments.value("--classes") { policy.classes = try classes(list) }
        policy.excluded = arguments.value("--exclude") ?? ""
        return policy
    }

    private static func number(_ text: String, option: String) throws(UsageError) -> Int {
        guard !text.isEmpty, text.utf8.count <= 9,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            let value = Int(text)
        else {
            throw UsageError("\(option) needs a whole number", command: name)
        }
        return value
    }

    private static func classes(_ list: String) throws(UsageError) -> Set<CharacterClass> {
        var result = Set<CharacterClass>()
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            let word = item.trimmingSpaces().lowercased()
            guard let characterClass = CharacterClass(rawValue: word) else {
                throw UsageError(
                    "--classes takes a comma-separated list of lower, upper, digits, symbols", command: name)
            }
            result.insert(characterClass)
        }
        return result
    }
}

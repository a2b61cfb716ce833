/// Why an `--env` value or a line of an `--env-file` was refused.
public enum EnvBindingError: Error, Equatable, Sendable {
    /// No `=` after the variable name (the line, from 1; 0 for `--env`).
    case missingEquals(line: Int)
    /// The name is not `[A-Za-z_][A-Za-z0-9_]*`.
    case invalidName(line: Int)
    /// No unescaped `/` between the service and the account, or one of them is empty.
    case missingSlash(line: Int)
    /// A `\` in the service not followed by `/` or `\`.
    case invalidEscape(line: Int)
    /// Not UTF-8, or a NUL byte.
    case invalidText(line: Int)
    /// The same variable named twice (its name).
    case duplicate(String)
    /// The file is larger than ``EnvBinding/maxFileBytes``.
    case tooLong
}

/// One variable `fob run` sets: `NAME=SERVICE/ACCOUNT`.
///
/// The service ends at the first `/` that is not escaped; inside the
/// service `\/` stands for `/` and `\\` for `\`. The account is the rest
/// of the text, taken as it is (it may hold `/`). In a file, each line is
/// one binding; blank lines and lines whose first non-blank character is
/// `#` are ignored, and spaces and tabs around a line are dropped.
///
/// ```
/// # deploy secrets
/// GITHUB_TOKEN=github.com/ci
/// API_KEY=api\/v2/svc/reader      # service "api/v2", account "svc/reader"
/// ```
public struct EnvBinding: Sendable, Equatable {
    /// The environment variable, such as `GITHUB_TOKEN`.
    public var name: String
    /// The item's service.
    public var service: String
    /// The item's account.
    public var account: String

    /// The largest `--env-file`: 1 MiB.
    public static let maxFileBytes = 1 << 20

    /// - Parameters: as the properties: the variable's name and the item's service and account.
    public init(name: String, service: String, account: String) {
        self.name = name
        self.service = service
        self.account = account
    }

    /// Parses one `NAME=SERVICE/ACCOUNT` (an `--env` value). Pure.
    /// - Parameter line: the line number for errors (0 for `--env`).
    /// - Throws: ``EnvBindingError``: `.missingEquals`, `.invalidName`, `.missingSlash`, `.invalidEscape`.
    public static func parse(_ text: String, line: Int = 0) throws(EnvBindingError) -> EnvBinding {
        guard let equals = text.firstIndex(of: "=") else { throw .missingEquals(line: line) }
        let name = String(text[..<equals])
        guard isValidName(name) else { throw .invalidName(line: line) }
        var service = ""
        var rest = text[text.index(after: equals)...]
        var escaped = false
        var account: Substring?
        var index = rest.startIndex
        while index < rest.endIndex {
            let c = rest[index]
            if escaped {
                guard c == "/" || c == "\\" else { throw .invalidEscape(line: line) }
                service.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "/" {
                account = rest[rest.index(after: index)...]
                break
            } else {
                service.append(c)
            }
            index = rest.index(after: index)
        }
        if escaped { throw .invalidEscape(line: line) }
        guard let account, !service.isEmpty, !account.isEmpty else { throw .missingSlash(line: line) }
        rest = account
        return EnvBinding(name: name, service: service, account: String(rest))
    }

    /// Parses an `--env-file`: a pure function of its bytes (a fuzz target calls it).
    /// Blank lines and lines starting with `#` are skipped, and a `#` after
    /// a space or tab starts a comment that runs to the end of the line (so
    /// `NAME=svc/acct   # why` binds account `acct`).
    /// - Throws: ``EnvBindingError`` naming the first bad line; `.duplicate` for a name given twice; `.tooLong`.
    public static func parseFile(_ bytes: [UInt8]) throws(EnvBindingError) -> [EnvBinding] {
        guard bytes.count <= maxFileBytes else { throw .tooLong }
        var bindings: [EnvBinding] = []
        var lineNumber = 0
        for rawLine in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            guard !rawLine.contains(0), let line = String(validating: rawLine, as: UTF8.self) else {
                throw .invalidText(line: lineNumber)
            }
            let trimmed = String(withoutComment(line)).trimmingBlanks()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            bindings.append(try parse(trimmed, line: lineNumber))
        }
        try checkUnique(bindings)
        return bindings
    }

    /// `line` up to a `#` that follows a space or tab (a trailing comment).
    static func withoutComment(_ line: String) -> Substring {
        var previous: Character = " "
        for index in line.indices {
            let c = line[index]
            if c == "#", previous == " " || previous == "\t" { return line[..<index] }
            previous = c
        }
        return line[...]
    }

    /// Refuses a variable named twice.
    /// - Throws: `.duplicate` with the first name seen twice.
    public static func checkUnique(_ bindings: [EnvBinding]) throws(EnvBindingError) {
        var seen: Set<String> = []
        for binding in bindings where !seen.insert(binding.name).inserted { throw .duplicate(binding.name) }
    }

    /// `[A-Za-z_][A-Za-z0-9_]*`, the names POSIX shells accept.
    public static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic)
        else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)))
        }
    }
}

extension String {
    /// Without spaces, tabs and a `\r` at either end.
    func trimmingBlanks() -> String {
        let blanks: Set<Character> = [" ", "\t", "\r"]
        var text = Substring(self)
        while let first = text.first, blanks.contains(first) { text = text.dropFirst() }
        while let last = text.last, blanks.contains(last) { text = text.dropLast() }
        return String(text)
    }
}

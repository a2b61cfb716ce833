import FoundationEssentials
@preconcurrency import Glibc

extension StringProtocol {
    /// The text without the spaces and tabs at either end: Unicode
    /// scalars of general category Zs and U+0009.
    public func trimmingSpaces() -> String { trimmingScalars(where: TextScalars.isSpace) }

    /// The text without white space and line ends at either end: Unicode
    /// scalars of general category Z (Zs, Zl, Zp), U+0009 to U+000D and U+0085.
    public func trimmingSpacesAndNewlines() -> String { trimmingScalars(where: TextScalars.isSpaceOrNewline) }

    /// The text without the Unicode scalars matching `drop` at either end.
    public func trimmingScalars(where drop: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !drop($0) }) else { return "" }
        var last = scalars.index(before: scalars.endIndex)
        while drop(scalars[last]) { last = scalars.index(before: last) }
        var kept = String.UnicodeScalarView()
        kept.append(contentsOf: scalars[first...last])
        return String(kept)
    }

    /// The text with each Unicode scalar outside `allowed` written as `%`
    /// and two upper-case hex digits per UTF-8 byte (RFC 3986 §2.1).
    public func percentEncoded(allowing allowed: (Unicode.Scalar) -> Bool) -> String {
        var out = ""
        for scalar in unicodeScalars {
            if allowed(scalar) {
                out.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { out += "%" + HexText.byte(byte, uppercase: true) }
            }
        }
        return out
    }

    /// The text with each `%` and two hex digits replaced by the byte
    /// they name (RFC 3986 §2.1).
    /// - Returns: `nil` when a `%` is not followed by two hex digits, or
    ///   when the bytes are not UTF-8.
    public func percentDecoded() -> String? {
        PercentDecoding.decode(utf8).flatMap { String(validating: $0, as: UTF8.self) }
    }
}

/// Classes of Unicode scalars, from the standard library's Unicode tables.
public enum TextScalars {
    /// General category Zs, or U+0009 (tab).
    public static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }

    /// General category Z (Zs, Zl, Zp), U+0009 to U+000D, or U+0085.
    public static func isSpaceOrNewline(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x85: return true
        default:
            switch scalar.properties.generalCategory {
            case .spaceSeparator, .lineSeparator, .paragraphSeparator: return true
            default: return false
            }
        }
    }

    /// A letter, mark or number: general categories L, M and N.
    public static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .nonspacingMark, .spacingMark, .enclosingMark, .decimalNumber, .letterNumber, .otherNumber:
            return true
        default: return false
        }
    }
}

/// Hexadecimal digits for bytes.
public enum HexText {
    /// Two hex digits for `byte`, lower case unless `uppercase`.
    public static func byte(_ byte: UInt8, uppercase: Bool = false) -> String {
        let digits: StaticString = uppercase ? "0123456789ABCDEF" : "0123456789abcdef"
        return digits.withUTF8Buffer { d in
            String(decoding: [d[Int(byte >> 4)], d[Int(byte & 0xF)]], as: UTF8.self)
        }
    }

    /// Two lower-case hex digits per byte.
    public static func bytes<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        bytes.map { byte($0) }.joined()
    }

    /// The value (0–15) of one ASCII hex digit, either case; `nil` for other bytes.
    public static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// File system paths as text.
public enum PathText {
    /// The path without its last component, as POSIX `dirname` but
    /// empty for a bare name: `/a/b` → `/a`, `/a/b/` → `/a`, `/a` → `/`,
    /// `/` → `/`, `a` → ``.
    public static func deletingLastComponent(_ path: String) -> String {
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty else { return "" }
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "" }
        var parent = Array(bytes[..<slash])
        while parent.count > 1 && parent.last == UInt8(ascii: "/") { parent.removeLast() }
        return parent.isEmpty ? "/" : String(decoding: parent, as: UTF8.self)
    }

    /// The user's home directory: `$HOME` when set and not empty, else
    /// the password database's entry for the real user id (`getpwuid`),
    /// else `/`.
    public static func homeDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }
}

/// Numbers as the C library's `printf` writes them.
public enum NumberText {
    /// `value` with `places` digits after the point (`%.*f`, rounded as
    /// `printf` rounds): `77.5` for 77.54 with one place.
    public static func fixed(_ value: Double, places: Int) -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        let count = withVaList([Int32(clamping: places), value]) { arguments in
            vsnprintf(&buffer, buffer.count, "%.*f", arguments)
        }
        guard count > 0 else { return "" }
        return String(
            decoding: buffer.prefix(min(Int(count), buffer.count - 1)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

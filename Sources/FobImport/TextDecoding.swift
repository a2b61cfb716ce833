import FoundationEssentials

/// Turns an export's bytes into UTF-8 bytes.
public enum TextDecoding {
    /// The legacy encodings `--encoding` names (any case), and what Foundation calls them.
    public static let encodings: [String: String.Encoding] = [
        "utf-8": .utf8, "utf8": .utf8,
        "latin1": .isoLatin1, "iso-8859-1": .isoLatin1,
        "latin2": .isoLatin2, "iso-8859-2": .isoLatin2,
        "windows-1252": .windowsCP1252, "cp1252": .windowsCP1252,
        "windows-1250": .windowsCP1250, "cp1250": .windowsCP1250,
        "windows-1251": .windowsCP1251, "cp1251": .windowsCP1251,
        "macroman": .macOSRoman, "mac-roman": .macOSRoman,
        "utf-16": .utf16, "utf-16le": .utf16LittleEndian, "utf-16be": .utf16BigEndian,
    ]

    /// The text of `bytes` as UTF-8 bytes: UTF-8 with or without a byte-order
    /// mark (dropped) unless `encoding` names another encoding.
    ///
    /// A pure function (a fuzz target).
    /// - Parameters:
    ///   - bytes: the file's bytes.
    ///   - encoding: a name from ``encodings``, or `nil` for UTF-8.
    /// - Returns: valid UTF-8 without a byte-order mark.
    /// - Throws: ``ImportError/encoding(line:_:)`` naming the first line that
    ///   is not valid UTF-8 (or not valid in `encoding`); `.wrongType` for an
    ///   unknown encoding name.
    public static func utf8(_ bytes: [UInt8], encoding: String? = nil) throws(ImportError) -> [UInt8] {
        if let name = encoding, name.lowercased() != "utf-8", name.lowercased() != "utf8" {
            guard let enc = encodings[name.lowercased()] else {
                throw .wrongType(
                    "unknown encoding \"\(displaySafeName(name))\"; known: "
                        + encodings.keys.sorted().joined(separator: ", "))
            }
            guard let text = String(data: Data(bytes), encoding: enc) else {
                throw .encoding(line: 1, "the text is not valid \(name)")
            }
            var out = Array(text.utf8)
            if out.starts(with: [0xEF, 0xBB, 0xBF]) { out.removeFirst(3) }
            return out
        }
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        if body.starts(with: [0xFF, 0xFE]) || body.starts(with: [0xFE, 0xFF]) {
            throw .encoding(line: 1, "the text is UTF-16, not UTF-8; import it with --encoding utf-16")
        }
        if String(validating: body, as: UTF8.self) != nil { return Array(body) }
        var line = 1
        for piece in body.split(separator: 0x0A, omittingEmptySubsequences: false) {
            if String(validating: piece, as: UTF8.self) == nil {
                throw .encoding(
                    line: line, "the text is not valid UTF-8; name its encoding with --encoding (such as windows-1252)")
            }
            line += 1
        }
        throw .encoding(line: line, "the text is not valid UTF-8")
    }

    static func displaySafeName(_ name: String) -> String {
        String(name.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(40).map(Character.init))
    }
}

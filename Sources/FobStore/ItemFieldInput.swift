import FoundationEssentials

/// Why a custom-field argument, a notes file, a field name or a service was
/// refused. Messages name the field, never its value; the CLI and the
/// terminal UI show the same words.
public enum FieldInputError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `--field` without `=`: the value would have nowhere to come from.
    case missingEquals(String)
    /// An empty name, or one with control characters or `=`.
    case badName(String)
    /// A name over ``Item/maxFieldNameBytes`` bytes.
    case nameTooLong
    /// One of the names `get --field` reserves (`user`, `url`, `notes`, `totp`).
    case reservedName(String)
    /// A value over ``Item/maxFieldValueBytes`` bytes.
    case valueTooLong(String)
    /// A value or notes that are not UTF-8 text.
    case notText(String)
    /// Notes over ``Item/maxNotesBytes`` bytes.
    case notesTooLong
    /// An empty service: an item must name what it is for (an empty user ID is a value).
    case emptyService

    public var description: String {
        switch self {
        case .missingEquals(let name):
            return "--field wants NAME=VALUE (hidden values: --hidden-field NAME), not '\(displaySafe(name))'"
        case .badName(let name):
            return "a field name must be non-empty without '=' or control characters, not '\(displaySafe(name))'"
        case .nameTooLong: return "a field name is longer than \(Item.maxFieldNameBytes) bytes"
        case .reservedName(let name): return "'\(name)' is a built-in field of 'fob get --field'; choose another name"
        case .valueTooLong(let name):
            return "the value of field '\(displaySafe(name))' is longer than \(Item.maxFieldValueBytes) bytes"
        case .notText(let what): return "\(what) is not UTF-8 text"
        case .notesTooLong: return "the notes are longer than \(Item.maxNotesBytes) bytes"
        case .emptyService: return "the service cannot be empty (an empty user ID is allowed)"
        }
    }
}

/// The rules for what an item may hold, shared by the CLI (`--field`,
/// `--hidden-field`, `--rm-field`, `--notes-file`, the SERVICE argument) and
/// the terminal UI's editor, and called by fuzz targets: bytes in, a value
/// or a ``FieldInputError`` out.
public enum ItemFieldInput {
    /// The names `fob get --field` answers itself; a custom field cannot take them.
    public static let reservedNames: Set<String> = ["user", "url", "notes", "totp"]

    /// Checks a custom field's name: 1 to ``Item/maxFieldNameBytes`` bytes of
    /// UTF-8, no `=`, no control characters, not a ``reservedNames`` entry.
    /// - Throws: ``FieldInputError/badName(_:)``, ``FieldInputError/nameTooLong``,
    ///   ``FieldInputError/reservedName(_:)``.
    public static func name(_ text: String) throws(FieldInputError) -> String {
        guard !text.isEmpty, !text.contains("="),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else {
            throw .badName(text)
        }
        guard text.utf8.count <= Item.maxFieldNameBytes else { throw .nameTooLong }
        guard !reservedNames.contains(text) else { throw .reservedName(text) }
        return text
    }

    /// Checks an item's service: any text but the empty one. The user ID
    /// (account) has no rule: an empty one is a value, as in the Keychain.
    /// - Throws: ``FieldInputError/emptyService``.
    public static func service(_ text: String) throws(FieldInputError) -> String {
        guard !text.isEmpty else { throw .emptyService }
        return text
    }

    /// Parses a visible field `NAME=VALUE` (split at the first `=`; VALUE may
    /// be empty and may hold `=`).
    /// - Returns: a visible ``CustomField``.
    /// - Throws: ``FieldInputError/missingEquals(_:)`` and the errors of ``name(_:)``
    ///   and ``value(_:name:)``.
    public static func visibleField(_ argument: String) throws(FieldInputError) -> CustomField {
        guard let equals = argument.firstIndex(of: "=") else { throw .missingEquals(argument) }
        let fieldName = try name(String(argument[..<equals]))
        let text = String(argument[argument.index(after: equals)...])
        return CustomField(name: fieldName, value: try value(SecretBytes(utf8: text), name: fieldName), isHidden: false)
    }

    /// Checks a field value's size and encoding.
    /// - Throws: ``FieldInputError/valueTooLong(_:)``, ``FieldInputError/notText(_:)``.
    public static func value(_ bytes: SecretBytes, name: String) throws(FieldInputError) -> SecretBytes {
        guard bytes.count <= Item.maxFieldValueBytes else { throw .valueTooLong(name) }
        guard bytes.isValidUTF8 else { throw .notText("the value of field '\(displaySafe(name))'") }
        return bytes
    }

    /// Notes from a file's bytes: UTF-8 text up to ``Item/maxNotesBytes``;
    /// one trailing newline is dropped; empty notes remove them (`nil`).
    /// - Throws: ``FieldInputError/notesTooLong``, ``FieldInputError/notText(_:)``.
    public static func notes(_ bytes: [UInt8]) throws(FieldInputError) -> String? {
        guard bytes.count <= Item.maxNotesBytes + 2 else { throw .notesTooLong }
        var body = bytes[...]
        if body.last == 0x0A {
            body = body.dropLast()
            if body.last == 0x0D { body = body.dropLast() }
        }
        guard body.count <= Item.maxNotesBytes else { throw .notesTooLong }
        guard let text = String(validating: body, as: UTF8.self) else { throw .notText("the notes file") }
        return text.isEmpty ? nil : text
    }

    /// `fields` with each of `changes` applied in order: a field replaces the
    /// first existing one of its name (keeping its place) or is appended;
    /// then every field named in `removals` goes.
    public static func merged(_ fields: [CustomField], setting changes: [CustomField], removing removals: [String])
        -> [CustomField]
    {
        var result = fields
        for change in changes {
            if let index = result.firstIndex(where: { $0.name == change.name }) {
                result[index] = change
            } else {
                result.append(change)
            }
        }
        let gone = Set(removals)
        return result.filter { !gone.contains($0.name) }
    }
}

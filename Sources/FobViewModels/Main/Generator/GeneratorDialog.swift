import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// The password generator dialog (Alt-G, or Enter on the form's Generator
/// row): the settings Ctrl-G uses, field by field, with a live preview of a
/// password made with them and its entropy.
///
/// The dialog edits a copy: ``policy()`` becomes the kept settings only when
/// the preview is used (Enter); Esc drops the copy. Every change makes a new
/// preview, or, when the settings cannot be used, a ``problem`` instead.
public final class GeneratorDialogModel {
    /// The dialog's fields, in Tab order.
    public enum Field: Sendable, Equatable, CaseIterable {
        /// Characters or words (a choice).
        case mode
        /// The number of characters (text, 1 to 4,096).
        case length
        /// Lower case `a-z` (a toggle).
        case lower
        /// Upper case `A-Z` (a toggle).
        case upper
        /// Digits `0-9` (a toggle).
        case digits
        /// ASCII symbols (a toggle).
        case symbols
        /// Characters never used, taken literally (text).
        case excluded
        /// The number of words (text, 1 to 64).
        case words
        /// What goes between words (text).
        case separator

        /// Whether the field is typed into (otherwise Space switches it).
        public var isText: Bool {
            switch self {
            case .length, .excluded, .words, .separator: return true
            case .mode, .lower, .upper, .digits, .symbols: return false
            }
        }

        /// The class a toggle stands for, or `nil` for other fields.
        public var characterClass: CharacterClass? {
            switch self {
            case .lower: return .lower
            case .upper: return .upper
            case .digits: return .digits
            case .symbols: return .symbols
            default: return nil
            }
        }
    }

    /// Characters or words.
    public internal(set) var kind: PasswordPolicy.Kind
    /// The Length field: digits.
    public let length: TextFieldState
    /// The classes switched on.
    public internal(set) var classes: Set<CharacterClass>
    /// The Excluded characters field.
    public let excluded: TextFieldState
    /// The Words field: digits.
    public let words: TextFieldState
    /// The Separator field.
    public let separator: TextFieldState
    /// The field with focus.
    public internal(set) var focus: Field = .mode
    /// The password made with the current settings, or `nil` while they
    /// cannot be used. Dropped (and wiped) with the dialog.
    public private(set) var preview: SecretBytes?
    /// The entropy of a password made with the current settings, in bits,
    /// computed from the settings (``PasswordPolicy/entropy()``), never
    /// from the preview; `nil` while they cannot be used.
    public private(set) var entropy: Double?
    /// Why the current settings cannot be used, or `nil` when they can.
    public private(set) var problem: String?
    /// Whether the preview shows its characters (Ctrl-R); masked by default.
    public internal(set) var isPreviewRevealed = false
    /// The kept settings the dialog opened on: the length or word count of
    /// the mode not in use comes from them while its field is not a number
    /// in range, so using one mode never resets the other's.
    private let opened: PasswordPolicy

    /// A dialog showing `policy`, with a first preview made.
    /// - Parameter policy: the kept settings.
    public init(policy: PasswordPolicy) {
        opened = policy
        kind = policy.kind
        length = TextFieldState(text: String(policy.length), maxBytes: 8)
        classes = policy.classes
        excluded = TextFieldState(text: policy.excluded, maxBytes: 1024)
        words = TextFieldState(text: String(policy.words), maxBytes: 8)
        separator = TextFieldState(text: policy.separator, maxBytes: 64)
        regenerate()
    }

    /// The fields that apply to the current mode, in Tab order.
    public var fields: [Field] {
        kind == .characters
            ? [.mode, .length, .lower, .upper, .digits, .symbols, .excluded] : [.mode, .words, .separator]
    }

    /// The text field with focus, if focus is on one.
    public var focusedField: TextFieldState? {
        switch focus {
        case .length: return length
        case .excluded: return excluded
        case .words: return words
        case .separator: return separator
        case .mode, .lower, .upper, .digits, .symbols: return nil
        }
    }

    /// The settings as the fields say, both modes' (the length and the word
    /// count are kept whichever mode is used; the one not in use, when its
    /// field is not a number in range, as the dialog opened with it).
    /// - Throws: ``GeneratorSettingsError``: a number field of the mode in
    ///   use that is not a number, or what ``PasswordPolicy/validate()`` refuses.
    public func policy() throws(GeneratorSettingsError) -> PasswordPolicy {
        var policy = PasswordPolicy(classes: classes, excluded: excluded.text)
        policy.kind = kind
        policy.separator = separator.text
        policy.length =
            Self.number(length.text).flatMap { PasswordPolicy.lengthRange.contains($0) ? $0 : nil }
            ?? opened.length
        policy.words =
            Self.number(words.text).flatMap { PasswordPolicy.wordRange.contains($0) ? $0 : nil }
            ?? opened.words
        switch kind {
        case .characters:
            guard let number = Self.number(length.text) else { throw .notANumber("Length", PasswordPolicy.lengthRange) }
            policy.length = number
        case .words:
            guard let number = Self.number(words.text) else { throw .notANumber("Words", PasswordPolicy.wordRange) }
            policy.words = number
        }
        do { try policy.validate() } catch { throw .policy(error) }
        return policy
    }

    /// What the Preview line shows: the password while revealed (Ctrl-R),
    /// one `•` per character while masked (counted from the bytes), or
    /// empty while the settings cannot be used.
    /// - Important: a revealed preview is a `String`, which cannot be wiped.
    public var previewText: String {
        guard let preview else { return "" }
        guard isPreviewRevealed, let text = preview.unsafeString else {
            return String(repeating: TextFieldState.maskCharacter, count: HomeFormModel.characterCount(preview))
        }
        return text
    }

    /// The entropy as the dialog shows it, such as `130.9 bits`, or empty.
    public var entropyText: String {
        guard let entropy else { return "" }
        return Self.entropyText(entropy)
    }

    /// `bits` as the dialog and the generated-password messages show it: `130.9 bits`.
    static func entropyText(_ bits: Double) -> String { NumberText.fixed(bits, places: 1) + " bits" }

    /// Makes a new preview from the fields (Ctrl-G, and after every change),
    /// or sets ``problem`` when they cannot be used.
    func regenerate() {
        preview = nil
        entropy = nil
        do {
            let policy = try policy()
            var bytes = try PasswordGenerator.generate(policy)
            defer { bytes.wipe() }
            entropy = try policy.entropy()
            preview = SecretBytes(bytes)
            problem = nil
        } catch let error as GeneratorSettingsError {
            problem = error.description
        } catch let error as PasswordPolicyError {
            problem = GeneratorSettingsError.policy(error).description
        } catch {
            problem = "\(error)"
        }
    }

    /// Moves focus by `step` fields (+1 next, -1 previous) among ``fields``, wrapping.
    func moveFocus(_ step: Int) {
        let order = fields
        let index = order.firstIndex(of: focus) ?? 0
        focus = order[((index + step) % order.count + order.count) % order.count]
    }

    /// Space, Left or Right on a choice: switches the mode or the class with focus.
    func toggle() {
        if focus == .mode {
            kind = kind == .characters ? .words : .characters
        } else if let characterClass = focus.characterClass {
            if classes.contains(characterClass) {
                classes.remove(characterClass)
            } else {
                classes.insert(characterClass)
            }
        } else {
            return
        }
        regenerate()
    }

    /// Drops the preview and every field's text.
    func wipe() {
        preview = nil
        entropy = nil
        isPreviewRevealed = false
        for field in [length, excluded, words, separator] { field.clear() }
    }

    /// `text` as a whole number, or `nil` when it is not only ASCII digits.
    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}

/// Why the generator dialog's settings cannot be used; the description is
/// the line the dialog shows.
public enum GeneratorSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A number field (its name, its range) holds something else or nothing.
    case notANumber(String, ClosedRange<Int>)
    /// The settings, read, are refused by ``PasswordPolicy/validate()``.
    case policy(PasswordPolicyError)

    public var description: String {
        switch self {
        case .notANumber(let name, let range):
            return "\(name): type a number from \(range.lowerBound) to \(range.upperBound)"
        case .policy(let error):
            let text = error.description
            return text.prefix(1).uppercased() + text.dropFirst()
        }
    }
}

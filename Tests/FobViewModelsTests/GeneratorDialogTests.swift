import FobStore
import FobTestSupport
import FobTokens
import FobViewModels
import Foundation
import Testing

/// The password generator dialog: opened with Alt-G or from the Generator
/// row, edited field by field with a live preview, used with Enter,
/// cancelled with Esc; Ctrl-G in Password keeps using what was last used.
@Suite struct GeneratorDialogTests {
    /// A harness on a new item with the dialog open.
    private func opened() throws -> (Harness, GeneratorDialogModel) {
        let h = try Harness.unlocked()
        h.send(.newItem, .focus(.password), .openGenerator)
        #expect(h.app.overlay == .generator)
        return (h, try #require(h.main.generatorDialog))
    }

    private func text(_ secret: SecretBytes?) -> String? { secret?.unsafeString }

    @Test func opensFromAltGAndTheGeneratorRow() throws {
        let h = try Harness.unlocked()
        h.send(.openGenerator)
        #expect(h.app.overlay == .generator)
        h.send(.cancel)
        #expect(h.app.overlay == nil)
        // Enter and Ctrl-G on the Generator row open it too.
        h.send(.focus(.generator), .submit)
        #expect(h.app.overlay == .generator)
        h.send(.cancel, .generatePassword)
        #expect(h.app.overlay == .generator)
        let dialog = try #require(h.main.generatorDialog)
        #expect(dialog.kind == .characters && dialog.length.text == "20" && dialog.classes.count == 4)
        #expect(dialog.focus == .mode)
        #expect(h.main.generatorSummary == "20 characters · a-z A-Z 0-9 symbols")
    }

    @Test func thePreviewIsMaskedItsEntropyComesFromTheSettings() throws {
        let (h, dialog) = try opened()
        let preview = try #require(dialog.preview)
        #expect(preview.count == 20)
        #expect(dialog.previewText == String(repeating: "•", count: 20))
        #expect(dialog.entropy == (try PasswordPolicy().entropy()))
        #expect(dialog.entropyText == "130.9 bits")
        h.send(.toggleReveal)
        #expect(dialog.isPreviewRevealed)
        #expect(dialog.previewText == text(preview))
        h.send(.toggleReveal)
        #expect(dialog.previewText.allSatisfy { $0 == "•" })
    }

    @Test func eachFieldChangesThePreview() throws {
        let (h, dialog) = try opened()
        // Length: Tab to it, type 32.
        h.send(.focusNext)
        #expect(dialog.focus == .length)
        h.send(.clearField, .insert("32"))
        #expect(dialog.preview?.count == 32)
        // Classes: switch off lower, upper and symbols: digits only.
        h.send(.focusNext, .cycleKind(1), .focusNext, .cycleKind(1), .focusNext, .focusNext, .cycleKind(1))
        #expect(dialog.classes == [.digits])
        let digits = try #require(text(dialog.preview))
        #expect(digits.count == 32 && digits.allSatisfy { $0.isASCII && $0.isNumber })
        #expect(dialog.entropy.map { abs($0 - 32 * log2(10)) < 1e-9 } == true)
        // Excluded characters, taken literally.
        h.send(.focusNext)
        #expect(dialog.focus == .excluded)
        h.send(.insert("0123456"))
        let left = try #require(text(dialog.preview))
        #expect(left.allSatisfy { "789".contains($0) })
        // Tab wraps back to the mode; words mode has its own fields.
        h.send(.focusNext)
        #expect(dialog.focus == .mode)
        h.send(.cycleKind(1))
        #expect(dialog.kind == .words && dialog.fields == [.mode, .words, .separator])
        h.send(.focusNext, .clearField, .insert("4"), .focusNext, .clearField, .insert("-"))
        let words = try #require(text(dialog.preview))
        #expect(words.split(separator: "-").count == 4)
        #expect(dialog.entropy.map { abs($0 - 4 * log2(7776)) < 1e-9 } == true)
        // Shift-Tab goes back.
        h.send(.focusPrevious)
        #expect(dialog.focus == .words)
    }

    @Test(arguments: [
        ("0", "The length must be 1 to 4096 characters, not 0"),
        ("5000", "The length must be 1 to 4096 characters, not 5000"),
        ("", "Length: type a number from 1 to 4096"),
        ("1x", "Length: type a number from 1 to 4096"),
        ("99999999", "The length must be 1 to 4096 characters, not 99999999"),
    ])
    func invalidLengthsSaySoAndNeverFill(length: String, problem: String) throws {
        let (h, dialog) = try opened()
        h.send(.focusNext, .clearField, .insert(length))
        #expect(dialog.problem == problem)
        #expect(dialog.preview == nil && dialog.entropy == nil && dialog.previewText.isEmpty)
        h.send(.submit)
        #expect(h.app.overlay == .generator)
        #expect(h.form.password.isEmpty && !h.form.passwordEdited)
    }

    @Test func noClassAndAnExcludedClassSaySo() throws {
        let (h, dialog) = try opened()
        h.send(.focusNext, .focusNext)
        for _ in 0..<4 { h.send(.cycleKind(1), .focusNext) }
        #expect(dialog.classes.isEmpty)
        #expect(dialog.problem == "Choose at least one character class (lower, upper, digits, symbols)")
        h.send(.submit, .generatePassword)
        #expect(h.app.overlay == .generator && dialog.preview == nil)
        // Digits back on, then every digit excluded.
        h.send(.focusPrevious, .focusPrevious, .cycleKind(1), .focusNext, .focusNext)
        #expect(dialog.problem == nil)
        h.send(.insert("0123456789"))
        #expect(dialog.problem == "The excluded characters include every character of the class 'digits'")
        h.send(.deleteBackward)
        #expect(dialog.problem == nil && dialog.preview != nil)
        // Words out of range.
        h.send(.focus(.list)) // not for the dialog: ignored
        #expect(h.app.overlay == .generator)
        h.send(.focusNext, .cycleKind(1), .focusNext, .clearField, .insert("65"))
        #expect(dialog.problem == "The number of words must be 1 to 64, not 65")
        #expect(h.form.password.isEmpty)
    }

    @Test func ctrlGMakesANewPreview() throws {
        let (h, dialog) = try opened()
        let first = try #require(dialog.preview)
        let entropy = dialog.entropy
        h.send(.generatePassword)
        let second = try #require(dialog.preview)
        #expect(first != second)
        #expect(dialog.entropy == entropy)
    }

    @Test func enterFillsThePasswordWithExactlyThePreviewAndKeepsTheSettings() throws {
        let (h, dialog) = try opened()
        h.send(
            .focusNext, .clearField, .insert("32"), .focusNext, .cycleKind(1), .focusNext, .cycleKind(1),
            .focusNext, .focusNext, .cycleKind(1))
        let preview = try #require(dialog.preview)
        h.send(.submit)
        #expect(h.app.overlay == nil && h.main.generatorDialog == nil)
        #expect(h.form.password.secret() == preview)
        #expect(h.form.passwordEdited)
        #expect(h.main.focus == .password)
        #expect(h.message.hasPrefix("Generated a password (32 characters, 106.3 bits)"))
        #expect(h.main.generatorSummary == "32 characters · 0-9")
        // Ctrl-G in Password now makes 32 digits.
        h.send(.generatePassword)
        #expect(h.form.password.count == 32)
        #expect(h.form.password.text.allSatisfy { $0.isNumber })
        #expect(h.form.password.secret() != preview)
        // And the dialog opens again on those settings.
        h.send(.openGenerator)
        let again = try #require(h.main.generatorDialog)
        #expect(again.length.text == "32" && again.classes == [.digits])
    }

    @Test func escChangesNothing() throws {
        let (h, dialog) = try opened()
        h.form.password.insert("typed")
        h.send(.focusNext, .clearField, .insert("8"), .focusNext, .cycleKind(1))
        #expect(dialog.preview?.count == 8)
        h.send(.cancel)
        #expect(h.app.overlay == nil && h.main.generatorDialog == nil)
        #expect(h.form.password.text == "typed")
        #expect(h.main.generatorSettings == PasswordPolicy())
        #expect(h.message == "Generator closed; nothing changed")
        // The dialog's preview was wiped with it.
        #expect(dialog.preview == nil)
    }

    @Test func wordsSettingsAreRememberedForCtrlGAndAcrossALock() throws {
        let (h, _) = try opened()
        h.send(.cycleKind(1), .focusNext, .clearField, .insert("6"), .submit)
        #expect(h.form.password.text.split(separator: " ").count == 6)
        #expect(h.main.generatorSummary == "6 words")
        h.send(.generatePassword)
        #expect(h.form.password.text.split(separator: " ").count == 6)
        #expect(h.message == "Generated a password (6 words, 77.5 bits); Ctrl-R shows it")
        h.send(.focus(.list), .lock)
        h.unlock()
        #expect(h.main.generatorSummary == "6 words")
    }

    /// Using one mode keeps the other mode's length or word count (and separator).
    @Test func usingOneModeKeepsTheOtherModesLengthAndWordCount() throws {
        let (h, dialog) = try opened()
        // 12 characters of lower case and digits, without O0Il1.
        h.send(
            .focusNext, .clearField, .insert("12"), .focusNext, .focusNext, .cycleKind(1),
            .focusNext, .focusNext, .cycleKind(1), .focusNext, .insert("O0Il1"))
        #expect(dialog.classes == [.lower, .digits] && dialog.problem == nil)
        h.send(.submit)
        // Words once: the character settings stay.
        h.send(.openGenerator, .cycleKind(1), .submit)
        #expect(h.main.generatorSettings.kind == .words && h.main.generatorSettings.length == 12)
        h.send(.openGenerator, .cycleKind(1))
        var again = try #require(h.main.generatorDialog)
        #expect(again.kind == .characters && again.length.text == "12")
        #expect(again.classes == [.lower, .digits] && again.excluded.text == "O0Il1")
        // 4 words with '-', then characters: back to words shows 4 and '-'.
        h.send(.cycleKind(1), .focusNext, .clearField, .insert("4"), .focusNext, .clearField, .insert("-"), .submit)
        h.send(.openGenerator, .cycleKind(1), .submit)
        #expect(h.main.generatorSettings.kind == .characters && h.main.generatorSettings.words == 4)
        #expect(h.form.password.count == 12)
        h.send(.openGenerator, .cycleKind(1))
        again = try #require(h.main.generatorDialog)
        #expect(again.kind == .words && again.words.text == "4" && again.separator.text == "-")
        // A word count not in range while characters are used is not kept.
        h.send(.focusNext, .clearField, .insert("99"), .focusPrevious, .cycleKind(1), .submit)
        #expect(h.main.generatorSettings.words == 4)
    }

    /// Ctrl-G says the entropy as the dialog's Enter does.
    @Test func ctrlGAndEnterBothSayTheEntropy() throws {
        let (h, dialog) = try opened()
        let entropy = dialog.entropyText
        h.send(.submit)
        #expect(h.message == "Generated a password (20 characters, \(entropy)); Ctrl-R shows it")
        h.send(.generatePassword)
        #expect(h.message == "Generated a password (20 characters, 130.9 bits); Ctrl-R shows it")
    }

    @Test func theIdleLockClosesTheDialogAndDropsThePreview() throws {
        let (h, dialog) = try opened()
        #expect(dialog.preview != nil)
        h.clock.advance(by: 301)
        h.app.tick()
        #expect(h.app.overlay == nil && h.app.mainModel == nil)
        #expect(dialog.preview == nil)
    }

    @Test func ctrlGOutsideThePasswordFieldSaysWhereItWorks() throws {
        let h = try Harness.unlocked()
        h.send(.newItem, .generatePassword)
        #expect(h.message.hasPrefix("Ctrl-G fills the Password field"))
        #expect(h.form.password.isEmpty)
    }

    @Test(arguments: [
        (PasswordPolicy(), "20 characters · a-z A-Z 0-9 symbols"),
        (
            PasswordPolicy(length: 32, classes: [.lower, .upper, .digits], excluded: "O0Il1"),
            "32 characters · a-z A-Z 0-9 · not O0Il1"
        ),
        (PasswordPolicy.passphrase(words: 6), "6 words"),
        (PasswordPolicy.passphrase(words: 1, separator: "-"), #"1 word · separated by "-""#),
    ])
    func summaries(policy: PasswordPolicy, summary: String) {
        #expect(GeneratorSpec.summary(of: policy) == summary)
        #expect(GeneratorSpec.summary(of: policy, short: true).count <= summary.count)
    }
}

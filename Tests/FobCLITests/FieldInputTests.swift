import FobStore
import Foundation
import Testing

@testable import FobCLI

/// The parsers of `--field`, `--hidden-field`, `--notes-file` and `fob totp set`.
@Suite struct FieldInputTests {
    /// The pure parsers reject bad input with the right case.
    @Test func fieldInputParsers() throws {
        #expect(throws: FieldInputError.missingEquals("abc")) { try ItemFieldInput.visibleField("abc") }
        #expect(throws: FieldInputError.badName("")) { try ItemFieldInput.visibleField("=x") }
        #expect(throws: FieldInputError.reservedName("notes")) { try ItemFieldInput.name("notes") }
        #expect(throws: FieldInputError.nameTooLong) {
            try ItemFieldInput.name(String(repeating: "n", count: Item.maxFieldNameBytes + 1))
        }
        #expect(throws: FieldInputError.notText("the notes file")) { try ItemFieldInput.notes([0xC3]) }
        #expect(throws: FieldInputError.notesTooLong) {
            try ItemFieldInput.notes([UInt8](repeating: 0x61, count: Item.maxNotesBytes + 1))
        }
        #expect(throws: FieldInputError.valueTooLong("v")) {
            try ItemFieldInput.value(
                SecretBytes([UInt8](repeating: 0x61, count: Item.maxFieldValueBytes + 1)), name: "v")
        }
        #expect(try ItemFieldInput.notes(Array("a\r\n".utf8)) == "a")
        #expect(try ItemFieldInput.notes([]) == nil)
        let field = try ItemFieldInput.visibleField("k=v=w")
        #expect(field.name == "k" && field.unsafeText == "v=w" && !field.isHidden)
        #expect(throws: OneTimeSeed.SeedError.counterBased) {
            try OneTimeSeed.normalized(
                SecretBytes(utf8: "otpauth://hotp/x?secret=JBSWY3DPEHPK3PXP&counter=1"), account: "a")
        }
        let stored = try OneTimeSeed.normalized(SecretBytes(utf8: " jbswy3dpehpk3pxp \n"), account: "a b")
        #expect(stored.unsafeString == "otpauth://totp/a%20b?secret=JBSWY3DPEHPK3PXP")
    }

}

/// Hidden field values on a terminal: masked prompts, asked twice, before the secret.
@Suite struct HiddenFieldPromptTests {
    @Test func hiddenValuesAreAskedOnTheTerminal() throws {
        let h = try CLIHarness()
        let terminal = ScriptedTerminal(answers: "4321", "4321", "pw", "pw")
        let result = h.run(["add", "mail", "ana", "--hidden-field", "pin"], terminal: terminal, stdinIsTerminal: true)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(
            terminal.prompts == [
                #"Value of hidden field "pin": "#, "Retype it: ",
                #"Secret for service "mail", account "ana": "#, "Retype the secret: ",
            ])
        let vault = try h.openVault()
        let stored = try vault.item(service: "mail", account: "ana")
        #expect(stored.customFields == [CustomField(name: "pin", text: "4321", isHidden: true)])
        #expect(stored.secret == SecretBytes(utf8: "pw"))
    }

    @Test func differingEntriesStoreNothing() throws {
        let h = try CLIHarness()
        let result = h.run(
            ["add", "mail", "ana", "--hidden-field", "pin"],
            terminal: ScriptedTerminal(answers: "1", "2"), stdinIsTerminal: true)
        #expect(result.status == 1)
        #expect(result.stderr.contains("differ"))
        #expect(h.run(["get", "mail", "ana"]).status == 44)
    }
}

/// Random bytes never crash the new parsers: each returns a value or its typed error.
@Suite struct FieldInputRobustnessTests {
    @Test func randomInputGivesAValueOrATypedError() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("=:/?&%# \n\r\t\u{0}\u{1B}aZ09é🔑".unicodeScalars)
        for _ in 0..<2_000 {
            let count = Int.random(in: 0...40, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let text = String(
                String.UnicodeScalarView((0..<count).map { _ in alphabet.randomElement(using: &generator)! }))
            _ = try? ItemFieldInput.notes(bytes)
            _ = try? ItemFieldInput.visibleField(text)
            _ = try? ItemFieldInput.name(text)
            _ = try? ItemFieldInput.value(SecretBytes(bytes), name: "f")
            _ = try? OneTimeSeed.normalized(SecretBytes(bytes), account: text)
            _ = try? OneTimeSeed.normalized(SecretBytes(utf8: "otpauth://totp/" + text), account: "a")
        }
    }
}

import FobStore
import FobTestSupport
import FobViewModels
import Testing

@Suite struct TextFieldStateTests {
    @Test func insertMoveAndDeleteWorkInWholeCharacters() {
        let field = TextFieldState(secure: true)
        field.insert("ae\u{301}👍🏽z")
        #expect(field.count == 4)
        #expect(!field.isRevealed)
        field.moveCursor(.left)
        field.deleteBackward()
        #expect(field.text == "ae\u{301}z")
        #expect(field.count == 3)
        #expect(field.cursor == 2)
        field.moveCursor(.home)
        field.deleteForward()
        #expect(field.text == "e\u{301}z")
        field.moveCursor(.end)
        #expect(field.cursor == 2)
        field.moveCursor(.right)
        #expect(field.cursor == 2)
    }

    @Test func combiningMarkTypedSeparatelyJoinsThePreviousCharacter() {
        let field = TextFieldState(secure: true)
        field.insert("e")
        field.insert("\u{301}")
        #expect(field.count == 1)
        #expect(field.text == "e\u{301}")
        field.deleteBackward()
        #expect(field.isEmpty)
        #expect(field.byteCount == 0)
    }

    @Test func insertInTheMiddleAndControlCharactersDropped() {
        let field = TextFieldState()
        field.insert("ac")
        field.moveCursor(.left)
        field.insert("b\n\t")
        #expect(field.text == "abc")
        #expect(field.cursor == 2)
    }

    @Test func revealShowsTextOnlyForSecureFields() {
        let field = TextFieldState(secure: true, text: "pw")
        #expect(!field.isRevealed && field.text == "pw")
        field.toggleReveal()
        #expect(field.isRevealed)
        #expect(field.text == "pw")
        field.clear()
        #expect(!field.isRevealed)
        #expect(field.text == "")
        let plain = TextFieldState(text: "x")
        plain.toggleReveal()
        #expect(!plain.isRevealed)
        #expect(plain.text == "x")
    }

    @Test func secretAndClear() {
        let field = TextFieldState(secure: true)
        field.insert(String(repeating: "x", count: 500))
        #expect(field.secret() == SecretBytes(utf8: String(repeating: "x", count: 500)))
        field.clear()
        #expect(field.isEmpty)
        #expect(field.cursor == 0)
        #expect(field.secret().count == 0)
    }

    @Test func maxBytesIsEnforced() {
        let field = TextFieldState(maxBytes: 4)
        field.insert("abcdef")
        #expect(field.text == "abcd")
        field.insert("é")
        #expect(field.text == "abcd")
    }

    @Test func setTextReplaces() {
        let field = TextFieldState(text: "old")
        field.setText("new")
        #expect(field.text == "new")
        #expect(field.cursor == 3)
    }
}

@Suite struct TextFieldStateSizeTests {
    @Test func aLargePasteIsAccepted() {
        let field = TextFieldState(secure: true, maxBytes: 1 << 20)
        field.insert(String(repeating: "aé", count: 50_000))
        #expect(field.count == 100_000)
        #expect(field.byteCount == 150_000)
        field.deleteBackward()
        #expect(field.count == 99_999)
    }
}

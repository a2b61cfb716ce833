import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// The Notes field holds several lines: Up and Down move the cursor between
/// them, and leave the field past its first or last line (as in any other
/// field, where they move to the previous or next one).
@Suite struct NotesLinesTests {
    /// The cursor's line and column.
    static func position(_ field: TextFieldState) -> [Int] { [field.cursorPosition.line, field.cursorPosition.column] }

    /// Down keeps the cursor's column, or goes to the end of a shorter
    /// line; past the last line it stays and says so.
    @Test func downAndUpMoveBetweenLinesKeepingTheColumn() {
        let field = TextFieldState(allowsLineBreaks: true)
        field.setText("abcdef\nxy\nlonger line")
        // Home at the last line's start, then Home again at the note's start.
        field.moveCursor(.home)
        field.moveCursor(.home)
        for _ in 0..<4 { field.moveCursor(.right) }
        #expect(Self.position(field) == [0, 4])
        field.moveCursor(.lineDown)
        #expect(Self.position(field) == [1, 2])
        #expect(field.cursor == 9)
        #expect(field.moveLine(1))
        #expect(Self.position(field) == [2, 2])
        #expect(!field.moveLine(1))
        #expect(field.cursor == 12)
        field.moveCursor(.lineUp)
        field.moveCursor(.lineUp)
        #expect(field.cursor == 2)
        #expect(!field.moveLine(-1))
    }

    /// Home and End (Ctrl-A, Ctrl-E) go to the start and end of the
    /// cursor's line; pressed there again, to the start and end of the note.
    @Test func homeAndEndGoToTheLinesEndsThenTheNotes() {
        let field = TextFieldState(allowsLineBreaks: true)
        field.setText("abcdef\nxy\nlonger line")
        #expect(field.cursor == 21)
        field.moveCursor(.home)
        #expect(Self.position(field) == [2, 0])
        field.moveCursor(.home)
        #expect(field.cursor == 0)
        field.moveCursor(.end)
        #expect(Self.position(field) == [0, 6])
        field.moveCursor(.end)
        #expect(field.cursor == 21)
        field.moveCursor(.lineUp)
        #expect(field.cursor == 9)
        field.moveCursor(.home)
        #expect(field.cursor == 7)
        field.moveCursor(.end)
        #expect(field.cursor == 9)
        // A one-line field: its start and end at once.
        let line = TextFieldState(text: "one line")
        line.moveCursor(.home)
        #expect(line.cursor == 0)
        line.moveCursor(.end)
        #expect(line.cursor == 8)
    }

    /// A one-line field has one line: Up and Down never move its cursor.
    @Test func aOneLineFieldHasNoOtherLine() {
        let field = TextFieldState(text: "one line")
        #expect(!field.moveLine(1) && !field.moveLine(-1))
        #expect(field.cursor == 8)
    }

    /// In the editor: Up in Notes goes to the line above, then (from the
    /// first line) to URL; Down in Service goes to User ID, as before.
    @Test func upLeavesNotesFromItsFirstLine() throws {
        var noted = item("mail", "ana", "pw")
        noted.notes = "one\ntwo"
        let h = try Harness.unlocked(items: [noted])
        h.send(.editSelected, .moveCursor(.lineDown))
        #expect(h.main.focus == .userID)
        h.send(.focus(.notes))
        #expect(Self.position(h.form.notes) == [1, 3])
        h.send(.moveCursor(.lineUp))
        #expect(h.main.focus == .notes)
        #expect(Self.position(h.form.notes) == [0, 3])
        h.send(.moveCursor(.lineUp))
        #expect(h.main.focus == .url)
        h.send(.moveCursor(.lineDown))
        #expect(h.main.focus == .notes)
        h.send(.moveCursor(.lineDown))
        #expect(h.main.focus == .notes)
        h.send(.moveCursor(.lineDown))
        #expect(h.main.focus == .oneTimeSeed)
        #expect(h.form.notes.text == "one\ntwo")
    }
}

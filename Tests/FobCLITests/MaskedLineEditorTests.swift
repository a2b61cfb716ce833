import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

private func type(_ bytes: [UInt8], maxBytes: Int = 100) -> (MaskedLineEditor.Outcome, [UInt8], [UInt8], Bool) {
    var editor = MaskedLineEditor(maxBytes: maxBytes)
    var echo: [UInt8] = []
    var outcome = MaskedLineEditor.Outcome.editing
    for byte in bytes {
        outcome = editor.feed(byte, echo: &echo)
        if outcome != .editing { break }
    }
    return (outcome, editor.take().unsafeArray, echo, editor.overflowed)
}

private let bullet = MaskedLineEditor.bullet
private let erase = MaskedLineEditor.erase

@Suite struct MaskedLineEditorTests {
    @Test func oneBulletPerCharacter() {
        let (outcome, line, echo, _) = type(Array("aÉ🔑".utf8) + [0x0D])
        #expect(outcome == .finished)
        #expect(line == Array("aÉ🔑".utf8))
        #expect(echo == bullet + bullet + bullet)
    }

    @Test func backspaceRemovesOneWholeCharacter() {
        let (_, line, echo, _) = type(
            Array("ab🔑".utf8) + [0x7F] + Array("c".utf8) + [0x08, 0x7F] + Array("d".utf8) + [0x0A])
        #expect(line == Array("ad".utf8))
        #expect(echo == bullet + bullet + bullet + erase + bullet + erase + erase + bullet)
    }

    @Test func backspaceOnAnEmptyLineDoesNothing() {
        let (_, line, echo, _) = type([0x7F, 0x7F, 0x61, 0x0D])
        #expect(line == [0x61])
        #expect(echo == bullet)
    }

    @Test func ctrlUClearsTheLine() {
        let (_, line, echo, _) = type(Array("xÉz".utf8) + [0x15] + Array("ok".utf8) + [0x0D])
        #expect(line == Array("ok".utf8))
        #expect(echo == bullet + bullet + bullet + erase + erase + erase + bullet + bullet)
    }

    @Test func ctrlCAndCtrlDOnEmptyCancel() {
        #expect(type(Array("abc".utf8) + [0x03]).0 == .cancelled)
        #expect(type([0x04]).0 == .cancelled)
        let (outcome, line, _, _) = type([0x61, 0x04, 0x0D])
        #expect(outcome == .finished)
        #expect(line == [0x61])
    }

    @Test func escapeSequencesAndControlBytesAreIgnored() {
        // Up arrow (CSI A), Home (SS3 H), Alt-x, tab.
        let (_, line, echo, _) = type([0x61, 0x1B, 0x5B, 0x41, 0x1B, 0x4F, 0x48, 0x1B, 0x78, 0x09, 0x62, 0x0D])
        #expect(line == Array("ab".utf8))
        #expect(echo == bullet + bullet)
    }

    @Test func bytesPastTheLimitAreDroppedAndFlagged() {
        let (_, line, _, overflowed) = type(Array("abcdef".utf8) + [0x0D], maxBytes: 4)
        #expect(line == Array("abcd".utf8))
        #expect(overflowed)
        #expect(!type(Array("abcd".utf8) + [0x0D], maxBytes: 4).3)
    }

    @Test func noTerminalFailsAtOnce() {
        #expect(throws: PromptError.noTerminal) { _ = try NoTerminal().readSecret(prompt: "x", maxBytes: 10) }
        #expect(throws: PromptError.noTerminal) {
            _ = try ControllingTerminal(path: "/nonexistent/tty").readSecret(prompt: "x", maxBytes: 10)
        }
    }
}

@Suite struct InputReaderTests {
    @Test func linesThenTheRest() throws {
        let reader = InputReader(source: BufferSource(text: "first\r\nsecond\nrest\nof it"))
        #expect(try reader.readLine(maxBytes: 100).unsafeArray == Array("first".utf8))
        #expect(try reader.readLine(maxBytes: 100).unsafeArray == Array("second".utf8))
        #expect(try reader.readToEnd(maxBytes: 100).unsafeArray == Array("rest\nof it".utf8))
        #expect(try reader.readToEnd(maxBytes: 100).count == 0)
    }

    @Test func aLongLineIsCutAtTheLimitAndConsumed() throws {
        let reader = InputReader(source: BufferSource(text: String(repeating: "x", count: 200_000) + "\nnext"))
        #expect(try reader.readLine(maxBytes: 10).count == 10)
        #expect(try reader.readToEnd(maxBytes: 100).unsafeArray == Array("next".utf8))
    }

    @Test func readToEndRefusesTooMuch() {
        let reader = InputReader(source: BufferSource([UInt8](repeating: 1, count: 70_000)))
        #expect(thrownKeychainError { _ = try reader.readToEnd(maxBytes: 65_536) }?.statusName == "errSecParam")
    }

    @Test func droppingOneNewline() {
        let cases: [(String, String)] = [
            ("a\n", "a"), ("a\r\n", "a"), ("a\n\n", "a\n"), ("a\r", "a\r"), ("\n", ""), ("", ""), ("a", "a"),
        ]
        for (input, output) in cases {
            #expect(InputReader.droppingOneNewline(.text(input)).unsafeArray == Array(output.utf8))
        }
    }
}

@Suite struct ItemJSONTests {
    @Test func base64MatchesFoundation() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let out = SecretBytes(bytes).base64().unsafeArray
            #expect(String(decoding: out, as: UTF8.self) == Data(bytes).base64EncodedString())
        }
    }

    @Test func stringsEscapeEveryControlCharacter() throws {
        let text = String((0..<0x80).map { Character(Unicode.Scalar(UInt8($0))) }) + "é🔑"
        var out: [UInt8] = []
        ItemJSON.appendString(text.utf8, to: &out)
        let decoded = try JSONSerialization.jsonObject(with: Data(out), options: [.fragmentsAllowed]) as? String
        #expect(decoded == text)
    }
}

@Suite struct DateFormatTests {
    @Test func datesAreISO8601InUTC() {
        #expect(ItemJSON.date(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(ItemJSON.date(Date(timeIntervalSince1970: 1_777_777_777.9)) == "2026-05-03T03:09:37Z")
        let now = Date()
        let formatter = ISO8601DateFormatter()
        #expect(ItemJSON.date(now) == formatter.string(from: now))
    }

    /// Years outside four digits keep every digit, and are padded to four.
    @Test func yearsOutsideFourDigits() {
        #expect(ItemJSON.date(Date(timeIntervalSince1970: 253_402_300_800)) == "10000-01-01T00:00:00Z")
        #expect(ItemJSON.date(Date(timeIntervalSince1970: -59_011_459_200)) == "0100-01-01T00:00:00Z")
    }
}

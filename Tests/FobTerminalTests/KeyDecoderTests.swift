import CNcurses
import Testing

@testable import FobTerminal

private func decode(_ bursts: [[RawInput]]) -> [Key] {
    var d = KeyDecoder()
    var keys: [Key] = []
    for burst in bursts {
        for input in burst { keys += d.feed(input) }
        keys += d.flush()
    }
    return keys
}

private func chars(_ s: String) -> [RawInput] { s.unicodeScalars.map { .character($0.value) } }

@Suite struct KeyDecoderTests {
    @Test func printableTextBecomesClusters() {
        #expect(decode([chars("ab")]) == [.character("a"), .character("b")])
        #expect(decode([chars("e\u{301}x")]) == [.character("e\u{301}"), .character("x")])
        #expect(decode([chars("密🔑")]) == [.character("密"), .character("🔑")])
    }

    @Test func controlKeys() {
        #expect(decode([[.character(9)]]) == [.tab])
        #expect(decode([[.character(13)], [.character(10)]]) == [.enter, .enter])
        #expect(decode([[.character(127)], [.character(8)]]) == [.backspace, .backspace])
        #expect(decode([[.character(0x12)]]) == [.control("r")])
        #expect(decode([[.function(KEY_BTAB)], [.function(KEY_RESIZE)]]) == [.backTab, .resize])
        #expect(
            decode([[.function(KEY_F0 + 1)], [.function(KEY_UP)], [.function(KEY_BACKSPACE)]]) == [
                .function(1), .up, .backspace,
            ])
    }

    @Test func escapeAloneVersusAlt() {
        #expect(decode([[.character(27)]]) == [.escape])
        #expect(decode([[.character(27), .character(0x78)]]) == [.alt("x")])
        #expect(decode([[.character(27)], chars("x")]) == [.escape, .character("x")])
        #expect(decode([[.character(27), .character(27)]]) == [.escape, .escape])
    }

    @Test func undecodedSequences() {
        #expect(decode([[.character(27)] + chars("[A")]) == [.up])
        #expect(decode([[.character(27)] + chars("[Z")]) == [.backTab])
        #expect(decode([[.character(27)] + chars("[3~")]) == [.delete])
        #expect(decode([[.character(27)] + chars("[99~x")]) == [.character("x")])
    }

    @Test func bracketedPasteKeepsMarkersOut() {
        let paste = [.character(27)] + chars("[200~pa\u{1B}ss\r\nwörd") + [.character(27)] + chars("[201~")
        #expect(decode([paste]) == [.paste("pa\u{1B}ss\nwörd")])
        // Split across reads, text before and after.
        let split: [[RawInput]] = [
            chars("a") + [.character(27)] + chars("[20"), chars("0~xy"), chars("z\u{1B}[2"), chars("01~b"),
        ]
        #expect(decode(split) == [.character("a"), .paste("xyz"), .character("b")])
    }

    @Test func idleFlushEndsAnUnterminatedPaste() {
        var d = KeyDecoder()
        for i in [.character(27)] + chars("[200~abc") { _ = d.feed(i) }
        #expect(d.flush() == [])
        #expect(d.inPaste)
        #expect(d.flush(idle: true) == [.paste("abc")])
        #expect(!d.inPaste)
    }
}

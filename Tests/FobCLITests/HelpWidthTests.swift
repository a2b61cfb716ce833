import Testing

@testable import FobCLI

/// `fob --help` and every command's `--help` fit an 80-column terminal.
@Suite struct HelpWidthTests {
    static func help(_ arguments: [String]) -> String {
        let out = BufferSink()
        #expect(FobCLI.run(CLIContext(arguments: arguments, standardOutput: out)) == 0)
        return out.text
    }

    @Test(arguments: [[]] + (FobCLI.commands + FobCLI.internalCommands).map { [$0.name] })
    func helpFitsEightyColumns(_ command: [String]) {
        let text = Self.help(command + ["--help"])
        #expect(!text.isEmpty)
        for line in text.split(separator: "\n") {
            #expect(line.count <= 80, "fob \(command.joined()) --help: \(line)")
        }
    }

    @Test func wrappingKeepsEveryWordAndTheColumns() {
        let row = "  cmd    " + Array(repeating: "word", count: 30).joined(separator: " ")
        let fitted = HelpFormatter.fit(row)
        #expect(fitted.split(separator: "\n").allSatisfy { $0.count <= 80 })
        #expect(
            fitted.split(separator: "\n").dropFirst().allSatisfy {
                $0.hasPrefix(String(repeating: " ", count: 9) + "word")
            })
        #expect(fitted.split(whereSeparator: { $0 == " " || $0 == "\n" }) == row.split(separator: " "))
        #expect(HelpFormatter.fit("short\n") == "short\n")
    }

    /// The nesting of brackets at the end of `line`: 0 when every `[` is closed.
    static func openBrackets(_ line: Substring) -> Int {
        var depth = 0
        for character in line {
            if character == "[" { depth += 1 }
            if character == "]" { depth -= 1 }
        }
        return depth
    }

    /// A wrapped usage line breaks between options, never inside one's
    /// brackets: `fob add --help` keeps `[--hidden-field NAME]...` on one line.
    @Test(arguments: FobCLI.commands.map { $0.name })
    func usageLinesBreakOnlyBetweenBracketGroups(_ command: String) {
        let text = Self.help([command, "--help"])
        let usage = text.split(separator: "\n\n").first ?? ""
        for line in usage.split(separator: "\n") {
            let open = Self.openBrackets(line)
            #expect(open == 0, "fob \(command) --help: \(line)")
        }
    }

    @Test func aLongUsageLineKeepsItsGroupsWhole() {
        let group = "[--option NAME]..."
        let line = "Usage: fob cmd SERVICE " + Array(repeating: group, count: 8).joined(separator: " ")
        let fitted = HelpFormatter.fit(line).split(separator: "\n")
        let pad = String(repeating: " ", count: 15)
        let fits = fitted.allSatisfy { $0.count <= 80 }
        let aligned = fitted.dropFirst().allSatisfy { $0.hasPrefix(pad + group) }
        #expect(fitted.count > 1)
        #expect(fits)
        #expect(aligned)
    }
}

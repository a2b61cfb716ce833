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
}

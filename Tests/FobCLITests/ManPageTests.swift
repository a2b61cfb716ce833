import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

/// The man page, `Assets/fob.1`, must describe every command and option.
@Suite struct ManPageTests {
    static let manPage: String = {
        let url = FobProcess.packageRoot.appendingPathComponent("Assets/fob.1")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The roff text with escapes for dashes and fonts removed.
    static var plainManPage: String {
        manPage.replacingOccurrences(of: "\\-", with: "-")
            .replacingOccurrences(of: "\\fB", with: "").replacingOccurrences(of: "\\fI", with: "")
            .replacingOccurrences(of: "\\fR", with: "").replacingOccurrences(of: "\\fP", with: "")
    }

    /// The `.B` lines that follow a `.TP` in the man page's COMMANDS
    /// section (each command's synopsis lines), without the `.B `.
    static var commandTags: [String] {
        var tags: [String] = []
        var inCommands = false
        var afterTP = false
        for line in manPage.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(".SH ") { inCommands = line == ".SH COMMANDS" }
            guard inCommands else { continue }
            if line == ".TP" {
                afterTP = true
                continue
            }
            if afterTP, line.hasPrefix(".B ") { tags.append(String(line.dropFirst(3))) }
            afterTP = false
        }
        return tags
    }

    /// The command names of the man page's COMMANDS section: the first word of
    /// each `.B` line that follows a `.TP`.
    static var manPageCommands: Set<String> {
        Set(
            commandTags.compactMap { tag in
                tag.split(separator: " ").first.map { String($0).replacingOccurrences(of: "\\-", with: "-") }
            })
    }

    /// The command names `fob --help` lists: the first word of each indented
    /// line under `Commands:`.
    static func helpCommands() -> [String] {
        let out = BufferSink()
        _ = FobCLI.run(CLIContext(arguments: ["--help"], standardOutput: out))
        var names: [String] = []
        var inCommands = false
        for line in out.text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "Commands:" {
                inCommands = true
                continue
            }
            guard inCommands else { continue }
            guard line.hasPrefix("  ") else { break }
            if line.hasPrefix("   ") { continue } // a wrapped summary's continuation
            if let first = line.split(separator: " ").first { names.append(String(first)) }
        }
        return names
    }

    @Test func theManPageExistsAndHasItsSections() {
        #expect(!Self.manPage.isEmpty)
        for section in [
            "NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES",
        ] {
            #expect(Self.manPage.contains(".SH \(section)\n"), "\(section)")
        }
    }

    /// A stray control character (a `\f` that became a form feed) shows as
    /// garbage in `man`; roff needs none but the newline.
    @Test func theManPageHasNoControlCharacters() {
        let lines = Self.manPage.split(separator: "\n", omittingEmptySubsequences: false)
        for (number, line) in lines.enumerated() {
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "line \(number + 1)")
        }
    }

    /// groff reads the page without a warning (`-ww` turns every warning on).
    @Test func groffRendersTheManPageWithoutWarnings() throws {
        let page = FobProcess.packageRoot.appendingPathComponent("Assets/fob.1").path
        let result = try runTool("/bin/sh", ["-c", "groff -man -ww -z \"$0\" 2>&1", page])
        #expect(result.status == 0)
        #expect(result.output.isEmpty, "\(result.output)")
    }

    @Test func everyCommandInHelpIsInTheManPage() {
        let help = Self.helpCommands()
        #expect(help.count == CommandInfo.all.count)
        let documented = Self.manPageCommands
        for name in help {
            #expect(documented.contains(name), "fob --help names '\(name)', which Assets/fob.1 lacks")
        }
    }

    @Test func everyOptionIsInTheManPage() {
        let text = Self.plainManPage
        for command in CommandInfo.all {
            for option in command.options {
                #expect(text.contains(option.name), "\(command.name) \(option.name)")
            }
        }
        for (option, variable) in GlobalOptions.specs {
            #expect(text.contains(option.name))
            #expect(text.contains(variable))
        }
        for flag in ["--help", "-h", "--version"] { #expect(text.contains(flag)) }
    }

    /// The synopsis lines of `command` in the COMMANDS section: every
    /// `.B` tag after a `.TP` whose first word is the command, fonts and
    /// escapes removed, as `fob COMMAND …`.
    static func synopsis(of command: String) -> [String] {
        commandTags.map { tag in
            var plain = tag
            for (escape, text) in [("\\-", "-"), ("\\fB", ""), ("\\fI", ""), ("\\fR", ""), ("\\fP", "")] {
                plain = plain.replacingOccurrences(of: escape, with: text)
            }
            return plain
        }.filter { $0.split(separator: " ").first.map(String.init) == command }.map { "fob " + $0 }
    }

    /// The usage lines `fob COMMAND --help` prints, each as `fob COMMAND …`
    /// on one line again: the help wraps a line wider than 80 columns, and a
    /// wrapped line goes on indented, while the next form starts with `fob`.
    static func helpUsageLines(of command: String) -> [String] {
        let out = BufferSink()
        _ = FobCLI.run(CLIContext(arguments: [command, "--help"], standardOutput: out))
        let block = out.text.split(separator: "\n\n").first.map(String.init) ?? ""
        var lines: [String] = []
        for line in block.split(separator: "\n") {
            let words = line.split(separator: " ")
            if line.hasPrefix("Usage: ") {
                lines.append(words.dropFirst().joined(separator: " "))
            } else if words.first == "fob" {
                lines.append(words.joined(separator: " "))
            } else if !lines.isEmpty {
                lines[lines.count - 1] += " " + words.joined(separator: " ")
            }
        }
        return lines
    }

    /// `fob COMMAND --help` gives the usage lines the man page's synopsis
    /// gives, word for word, for every command, so a new one cannot drift.
    @Test(arguments: CommandInfo.all.map(\.name))
    func usageLinesMatchTheManPage(command: String) throws {
        let info = try #require(CommandInfo.all.first { $0.name == command })
        #expect(!Self.synopsis(of: command).isEmpty, "Assets/fob.1 has no synopsis for \(command)")
        #expect(Self.synopsis(of: command) == info.usageLines)
        #expect(Self.helpUsageLines(of: command) == Self.synopsis(of: command))
    }

    /// A long usage line comes back whole from the wrapped help: `add`'s is
    /// wider than 80 columns.
    @Test func aWrappedUsageLineIsReadWhole() {
        let lines = Self.helpUsageLines(of: "add")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("fob add SERVICE ACCOUNT [--label T]") == true)
        #expect(lines.first?.hasSuffix("[--accessible WHEN] [--raw]") == true)
    }

    /// Every option of a command is in one of its usage lines, also where the
    /// command writes its forms by hand (`oauth`, `totp`, `jwt`, `sync`).
    @Test(arguments: CommandInfo.all.map(\.name))
    func everyOptionIsInAUsageLine(command: String) throws {
        let info = try #require(CommandInfo.all.first { $0.name == command })
        let words = Set(
            info.usageLines.flatMap { $0.split(separator: " ") }.map { String($0.filter { !"[]().".contains($0) }) })
        for option in info.options {
            #expect(words.contains(option.name), "fob \(command) --help: \(option.name) is in no usage line")
        }
    }

    /// The command table of docs/cli.md (its contract) gives the same forms
    /// of every command, each in backticks (`|` escaped for the table).
    @Test(arguments: CommandInfo.all.map(\.name))
    func usageLinesAreInTheCommandTable(command: String) throws {
        let page = try String(
            contentsOf: FobProcess.packageRoot.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let section = try #require(page.split(separator: "\n## ").first { $0.hasPrefix("# Command line\n") })
        let info = try #require(CommandInfo.all.first { $0.name == command })
        for line in info.usageLines {
            let form = "`" + line.dropFirst(4).replacingOccurrences(of: "|", with: "\\|") + "`"
            #expect(section.contains(form), "docs/cli.md's command table lacks \(form)")
        }
    }

    @Test func everyExitStatusIsInTheManPage() {
        for status in [0, 1, 2, 36, 44, 45, 50, 51, 60, 61, 62, 63, 93] {
            #expect(Self.manPage.contains(".B \(status)\n"), "\(status)")
        }
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

@Suite struct GlobalOptionTests {
    @Test func globalOptionsWorkBeforeAndAfterTheCommand() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw\n").status == 0)
        let after = h.run(
            ["get", "mail", "ana", "--vault", h.vaultPath, "--password-file", h.passwordFile], plain: true)
        #expect(after.status == 0)
        #expect(after.stdoutText == "pw\n")
        let mixed = h.run(
            ["--vault", h.vaultPath, "get", "--password-file", h.passwordFile, "mail", "ana"], plain: true)
        #expect(mixed.stdoutText == "pw\n")
        let equals = h.run(
            ["get", "mail", "ana", "--vault=\(h.vaultPath)", "--password-file=\(h.passwordFile)"], plain: true)
        #expect(equals.stdoutText == "pw\n")
    }

    @Test func environmentVariablesStandInForOptions() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let env = ["FOB_VAULT": h.vaultPath, "FOB_PASSWORD_FILE": h.passwordFile]
        let result = h.run(["get", "mail", "ana"], environment: env, plain: true)
        #expect(result.status == 0)
        #expect(result.stdoutText == "pw\n")
    }

    @Test func anOptionWinsOverItsVariable() throws {
        let h = try CLIHarness()
        let wrong = try h.file("wrong", "not it\n")
        let env = ["FOB_VAULT": "/nonexistent/vault.db", "FOB_PASSWORD_FILE": wrong]
        let result = h.run(
            ["--vault", h.vaultPath, "--password-file", h.passwordFile, "ls"], environment: env, plain: true)
        #expect(result.status == 0)
    }

    @Test func defaultsAndVariablesOfTheTerminalOptions() throws {
        let defaults = try GlobalOptions(given: [:], environment: ["HOME": "/home/ana"])
        #expect(defaults.vaultURL.path == "/home/ana/.local/share/fob/vault.db")
        #expect(defaults.lockAfter == 300)
        #expect(defaults.clearAfter == 45)
        #expect(defaults.clipboard == .auto)
        #expect(defaults.passwordFile == nil)

        let env = ["XDG_DATA_HOME": "/data", "FOB_LOCK_AFTER": "0", "FOB_CLEAR_AFTER": "10", "FOB_CLIPBOARD": "tmux"]
        let fromEnv = try GlobalOptions(given: [:], environment: env)
        #expect(fromEnv.vaultURL.path == "/data/fob/vault.db")
        #expect(fromEnv.lockAfter == 0)
        #expect(fromEnv.clearAfter == 10)
        #expect(fromEnv.clipboard == .tmux)

        let given = try GlobalOptions(
            given: ["--lock-after": "5", "--clear-after": "0", "--clipboard": "wl-copy"], environment: env)
        #expect(given.lockAfter == 5)
        #expect(given.clearAfter == 0)
        #expect(given.clipboard == .wlCopy)

        let emptyVariable = try GlobalOptions(
            given: [:], environment: ["HOME": "/h", "FOB_VAULT": "", "FOB_LOCK_AFTER": ""])
        #expect(emptyVariable.vaultURL.path == "/h/.local/share/fob/vault.db")
        #expect(emptyVariable.lockAfter == 300)
    }

    @Test(arguments: [
        (["--lock-after", "soon", "ls"], "--lock-after"),
        (["--clear-after", "-1", "ls"], "--clear-after"),
        (["--clipboard", "pigeon", "ls"], "--clipboard"),
        (["--vault", "", "ls"], "--vault"),
    ])
    func badGlobalValuesAreUsageErrors(arguments: [String], named option: String) throws {
        let h = try CLIHarness()
        let result = h.run(arguments)
        #expect(result.status == 2)
        #expect(result.stderrLines.count == 2)
        #expect(result.stderrLines.first?.hasPrefix("fob: \(option)") == true)
        #expect(result.stderrLines.last?.contains("--help") == true)
    }

    @Test func badVariableIsNamedInTheError() throws {
        let h = try CLIHarness()
        let result = h.run(["ls"], environment: ["FOB_CLEAR_AFTER": "later"])
        #expect(result.status == 2)
        #expect(result.stderr.hasPrefix("fob: FOB_CLEAR_AFTER wants"))
    }
}

@Suite struct UsageErrorTests {
    @Test(arguments: [
        ["frobnicate"],
        ["--frobnicate"],
        ["get", "mail"],
        ["get", "mail", "ana", "extra"],
        ["get", "mail", "ana", "--bogus"],
        ["add", "mail", "ana", "--label"],
        ["get", "mail", "ana", "--raw=yes"],
        ["--vault"],
        ["ls", "--service"],
        ["add", "mail", "ana", "--kind", "pigeon"],
        ["init", "--kdf", "extreme"],
        ["get", "mail", "ana", "--raw", "--json"],
        ["add", "", "ana"],
        ["save", "", "ana"],
    ])
    func usageErrorsExitTwoWithOneLineAndAHint(arguments: [String]) throws {
        let h = try CLIHarness()
        let result = h.run(arguments, input: "pw")
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrLines.count == 2, "\(result.stderr)")
        #expect(result.stderrLines[0].hasPrefix("fob: "))
        #expect(result.stderrLines[1].hasPrefix("Run 'fob "))
        #expect(
            result.stderrLines[1].hasSuffix("--help' for usage.")
                || result.stderrLines[1].hasSuffix("--help' for its usage."))
    }

    /// Issue 20: the rule the terminal UI's editor shares, in the same words.
    @Test func anEmptyServiceIsRefusedWithTheEditorsWords() throws {
        let h = try CLIHarness()
        let result = h.run(["add", "", "ana"], input: "pw")
        #expect(result.stderrLines.first == "fob: \(FieldInputError.emptyService.description)")
        #expect(h.run(["add", "mail", ""], input: "pw").status == 0, "an empty account is a value")
    }

    /// Issue 35: `mv` keeps the rules of `add`, so no rename makes an item
    /// with an empty service; the item stays as it was.
    @Test func mvOntoAnEmptyServiceIsRefusedAsAddRefusesIt() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "mail", "ana"], input: "pw").status == 0)
        let result = h.run(["mv", "mail", "ana", "", "ana"])
        #expect(result.status == 2)
        #expect(result.stderrLines.first == "fob: \(FieldInputError.emptyService.description)")
        #expect(h.run(["get", "mail", "ana"]).stdoutText == "pw\n")
    }

    /// Issue 35: a directory given to `backup` is named as one, not as "a
    /// file already exists".
    @Test func backupToADirectorySaysItIsADirectory() throws {
        let h = try CLIHarness()
        let directory = h.directory.file("backups").path
        #expect(mkdir(directory, 0o700) == 0)
        for path in [directory, directory + "/"] {
            let result = h.run(["backup", path])
            #expect(result.status != 0)
            #expect(
                result.stderr.contains(
                    "\(directory) is a directory; name the new file itself (such as \(directory)/vault-copy.db)"),
                "\(path): \(result.stderr)")
        }
        let named = h.run(["backup", directory + "/vault-copy.db"])
        #expect(named.status == 0, "\(named.stderr)")
    }

    @Test func theHintPointsToTheCommand() throws {
        let h = try CLIHarness()
        let result = h.run(["get", "mail"])
        #expect(result.stderr == "fob: 'get' needs ACCOUNT\nRun 'fob get --help' for its usage.\n")
        let unknown = h.run(["frobnicate"])
        #expect(unknown.stderr == "fob: unknown command 'frobnicate'\nRun 'fob --help' for usage.\n")
        // Another tool's word for a command is answered with Fob's.
        let delete = h.run(["delete", "mail", "ana"])
        #expect(delete.status == 2)
        #expect(delete.stderr == "fob: unknown command 'delete'; Fob's is 'rm'\nRun 'fob --help' for usage.\n")
        #expect(h.run(["show", "mail", "ana"]).stderr.hasPrefix("fob: unknown command 'show'; Fob's is 'get'\n"))
    }

    @Test func doubleDashAllowsNamesStartingWithADash() throws {
        let h = try CLIHarness()
        #expect(h.run(["add", "--", "-svc", "-acct"], input: "x").status == 0)
        let got = h.run(["get", "--raw", "--", "-svc", "-acct"])
        #expect(got.status == 0)
        #expect(got.stdoutText == "x")
        #expect(try h.secret("-svc", "-acct") == Array("x".utf8))
    }

    @Test func parserTakesFlagsValuesAndPositionals() throws {
        let options: [OptionSpec] = [.flag("--raw", help: ""), .value("--label", "T", help: "")]
        let parsed = try ParsedArguments.parse(
            ["s", "--label", "L1", "a", "--raw", "--label=L2", "-"],
            options: options, positionals: ["S", "A", "B"], command: "x")
        #expect(parsed.positionals == ["s", "a", "-"])
        #expect(parsed.value("--label") == "L2")
        #expect(parsed.flag("--raw"))
        let optional = try ParsedArguments.parse(
            [], options: [], positionals: ["S", "A"], optionalCount: 2, command: "x")
        #expect(optional.positionals.isEmpty)
    }

    @Test func commandLineSplitFindsTheCommandAmongGlobals() throws {
        let split = try CommandLineSplit.split(["--vault", "v", "get", "--clipboard=none", "s", "--raw", "a", "-h"])
        #expect(split.command == "get")
        #expect(split.globals == ["--vault": "v", "--clipboard": "none"])
        #expect(split.rest == ["s", "--raw", "a"])
        #expect(split.help)
        #expect(!split.version)
    }
}

@Suite struct HelpTests {
    @Test func globalHelpListsEveryCommandAndOption() throws {
        let h = try CLIHarness()
        for flag in ["--help", "-h"] {
            let result = h.run([flag], plain: true)
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty)
            for command in CommandInfo.all {
                #expect(result.stdoutText.contains("\n  \(command.name) "), "\(command.name)")
            }
            for (option, variable) in GlobalOptions.specs {
                #expect(result.stdoutText.contains(option.name))
                #expect(result.stdoutText.contains(variable))
            }
        }
    }

    /// `fob help` gave "unknown command 'help'" where git and most tools answer it.
    @Test func helpAsACommandIsTheHelp() throws {
        let h = try CLIHarness()
        let global = h.run(["help"], plain: true)
        #expect(global.status == 0)
        #expect(global.stdoutText == h.run(["--help"], plain: true).stdoutText)
        let get = h.run(["help", "get"], plain: true)
        #expect(get.status == 0)
        #expect(get.stdoutText == h.run(["get", "--help"], plain: true).stdoutText)
        let unknown = h.run(["help", "nosuch"], plain: true)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.hasPrefix("fob: unknown command 'nosuch'"))
    }

    @Test func commandHelpShowsItsUsageAndOptions() throws {
        let h = try CLIHarness()
        for command in CommandInfo.all {
            for arguments in [[command.name, "--help"], ["-h", command.name]] {
                let result = h.run(arguments, plain: true)
                #expect(result.status == 0)
                #expect(result.stdoutText.hasPrefix("Usage: fob \(command.name)"))
                for option in command.options { #expect(result.stdoutText.contains(option.synopsis)) }
            }
        }
        #expect(
            h.run(["get", "--help"], plain: true).stdoutText.hasPrefix(
                "Usage: fob get SERVICE ACCOUNT [--raw] [--json] [--field F]\n"))
    }

    @Test func helpWithAnUnknownCommandIsAUsageError() throws {
        let h = try CLIHarness()
        #expect(h.run(["nope", "--help"], plain: true).status == 2)
    }

    @Test func versionPrintsTheVersion() throws {
        let h = try CLIHarness()
        let result = h.run(["--version"], plain: true)
        #expect(result.status == 0)
        #expect(result.stdoutText == "fob \(FobCLI.version)\n")
    }

    /// No command starts the terminal UI, which needs a terminal: without
    /// one (as in this harness) it is interaction-not-allowed, at once.
    @Test func noCommandWithoutATerminalIsInteractionNotAllowed() throws {
        let h = try CLIHarness()
        let result = h.run([])
        #expect(result.status == 36)
        #expect(result.stdout.isEmpty)
    }

    @Test func noCommandWithStrayArgumentsIsAUsageError() throws {
        let h = try CLIHarness()
        for arguments in [["--raw"], ["--", "x"]] {
            let result = h.run(arguments)
            #expect(result.status == 2)
            #expect(result.stderrLines.count == 2)
        }
    }

    @Test func registryNamesAreUniqueAndDoNotShadowGlobals() {
        let names = CommandInfo.all.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(!names.contains(""))
        let globals = Set(GlobalOptions.specs.map(\.option.name) + ["--help", "-h", "--version"])
        for command in CommandInfo.all {
            #expect(!command.summary.isEmpty)
            for option in command.options {
                #expect(!globals.contains(option.name), "\(command.name) \(option.name)")
                #expect(option.name.hasPrefix("--"))
            }
            let found = FobCLI.command(named: command.name)?.name
            #expect(found == command.name)
        }
    }
}

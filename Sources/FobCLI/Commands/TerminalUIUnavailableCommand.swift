/// `fob` without a command, until the terminal UI is built: says so and fails.
enum TerminalUIUnavailableCommand: FobCommand {
    static let name = ""
    static let summary = "start the terminal UI"

    /// - Throws: always ``CLIFailure`` (exit 1).
    static func run(_ invocation: Invocation) throws -> Int32 {
        throw CLIFailure("the terminal UI is not built yet; run 'fob --help' for the commands")
    }
}

import Foundation
import FobTerminal
import FobViewModels

/// `fob` without a command: the terminal UI on the vault of `--vault`
/// (a create-vault screen when it does not exist yet), with `--lock-after`,
/// `--clear-after` and `--clipboard`.
enum TerminalUICommand: FobCommand {
    static let name = ""
    static let summary = "start the terminal UI"

    /// - Returns: 0 after `q`; 128 + the signal after SIGINT, SIGTERM or
    ///   SIGHUP; 36 without a terminal; 1 when the terminal cannot be set up.
    static func run(_ invocation: Invocation) throws -> Int32 {
        let globals = invocation.globals
        let options = TerminalApp.Options(
            vault: globals.vaultURL,
            lockAfter: TimeInterval(globals.lockAfter),
            clearAfter: TimeInterval(globals.clearAfter),
            clipboard: globals.clipboard,
            environment: invocation.context.environment)
        return TerminalApp.run(options)
    }
}

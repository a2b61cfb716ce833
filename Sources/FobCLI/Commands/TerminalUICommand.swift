import FobAccess
import FobAgent
import FobClipboard
import FobSessions
import FobSystem
import FobTerminal
import FobViewModels
import FoundationEssentials

/// `fob` without a command: the terminal UI on the vault of `--vault`
/// (a create-vault screen when it does not exist yet), with `--lock-after`,
/// `--clear-after` and `--clipboard`.
///
/// This is where the terminal UI's live parts are put together: the wall
/// clock, the clipboard mechanism with its clearing controller, the vault
/// store and the app model; FobTerminal only draws the model.
enum TerminalUICommand: FobCommand {
    static let name = ""
    static let summary = "start the terminal UI"

    /// - Returns: 0 after `q`; 128 + the signal after SIGINT, SIGTERM or
    ///   SIGHUP; 36 without a terminal; 1 when the terminal cannot be set up.
    static func run(_ invocation: Invocation) throws -> Int32 {
        let globals = invocation.globals
        let environment = invocation.context.environment
        let clock = LiveClock()
        let clipboard = ClipboardController(
            clipboard: ClipboardFactory.make(mode: globals.clipboard, environment: environment),
            clearAfter: TimeInterval(globals.clearAfter), clock: clock)
        // The UI asks the master password on its own lock screen: the store never asks.
        let store = ItemAccess(settings: globals.access, password: .none("the vault is locked"))
        store.onLocalUnlock = { vault in
            if let client = invocation.agentClient {
                try? invocation.unlockAgent(
                    client, with: vault, idle: AgentCore.defaultIdleSeconds,
                    max: AgentCore.defaultMaxSeconds)
            }
        }
        store.linkToAgent()
        let app = AppModel(
            store: store, clipboard: clipboard, clock: clock,
            lockAfter: TimeInterval(globals.lockAfter),
            sync: TerminalSyncConflicts(vaultPath: globals.vaultURL.path, environment: environment),
            notices: StateNoticeMemory(environment: environment, vaultPath: globals.vaultURL.path))
        return TerminalApp.run(
            app, vaultDescription: displayPath(globals.vaultURL, environment: environment),
            environment: environment)
    }

    /// `url`'s path with the home directory shown as `~`.
    static func displayPath(_ url: URL, environment: [String: String]) -> String {
        let path = url.path
        if let home = environment["HOME"], !home.isEmpty, path.hasPrefix(home + "/") {
            return "~" + path.dropFirst(home.count)
        }
        return path
    }
}

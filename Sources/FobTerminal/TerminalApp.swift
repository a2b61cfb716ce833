@preconcurrency import Glibc
import Foundation
import FobStore
import FobViewModels
import FobSessions
import FobClipboard
import FobSystem

/// The terminal UI: `fob` with no command.
///
/// One input loop polls the terminal and the signal pipe every
/// ``tickMilliseconds``; keys become intents through ``KeyMap``, every
/// pass runs the model's clock step (idle lock, clipboard clear, changes
/// made by other processes), and the screen is drawn again only when the
/// picture changed.
public enum TerminalApp {
    /// How long one poll waits for input, in milliseconds: the tick period.
    public static let tickMilliseconds: Int32 = 200

    /// What `fob` passes in from its global options.
    public struct Options: Sendable {
        /// The vault file (created through the UI when missing).
        public var vault: URL
        /// Idle seconds before locking; 0 = never.
        public var lockAfter: TimeInterval
        /// Seconds before the clipboard is cleared; 0 = never.
        public var clearAfter: TimeInterval
        /// The clipboard mechanism.
        public var clipboard: ClipboardMode
        /// The process environment (`NO_COLOR`, `TERM`, clipboard helpers).
        public var environment: [String: String]

        /// - Parameters:
        ///   - vault: the vault file.
        ///   - lockAfter: idle lock in seconds (default 300; 0 = never).
        ///   - clearAfter: clipboard auto-clear in seconds (default 45; 0 = never).
        ///   - clipboard: the clipboard mechanism (default `auto`).
        ///   - environment: the environment (default: this process's).
        public init(vault: URL, lockAfter: TimeInterval = 300, clearAfter: TimeInterval = 45,
                    clipboard: ClipboardMode = .auto,
                    environment: [String: String] = ProcessInfo.processInfo.environment) {
            self.vault = vault
            self.lockAfter = lockAfter
            self.clearAfter = clearAfter
            self.clipboard = clipboard
            self.environment = environment
        }
    }

    /// Runs the UI until `q`, a signal or the terminal going away.
    /// - Parameter options: vault, timers and clipboard.
    /// - Returns: the exit status: 0 after `q`; 128 + the signal number after
    ///   SIGINT (130), SIGTERM (143) or SIGHUP (129); 36 without a terminal;
    ///   1 when the terminal cannot be set up. Errors are printed to stderr.
    public static func run(_ options: Options) -> Int32 {
        let screen: TerminalScreen
        do {
            screen = try TerminalScreen(environment: options.environment)
        } catch {
            FileHandle.standardError.write(Data("fob: \(error)\n".utf8))
            return error == .notATerminal ? 36 : 1
        }
        let clock = LiveClock()
        let clipboard = ClipboardController(
            clipboard: ClipboardFactory.make(mode: options.clipboard, environment: options.environment),
            clearAfter: options.clearAfter, clock: clock)
        let store = VaultStore(url: options.vault)
        let app = AppModel(store: store, clipboard: clipboard, clock: clock, lockAfter: options.lockAfter)
        var loop = Loop(app: app, screen: screen, renderer: Renderer(vaultDescription: displayPath(options.vault, environment: options.environment)))
        let status = loop.run()
        screen.close()
        app.shutdown()
        return status
    }

    /// `path` with the home directory shown as `~`.
    static func displayPath(_ url: URL, environment: [String: String]) -> String {
        let path = url.path
        if let home = environment["HOME"], !home.isEmpty, path.hasPrefix(home + "/") {
            return "~" + path.dropFirst(home.count)
        }
        return path
    }

    /// The input loop over one screen and one model.
    struct Loop {
        let app: AppModel
        let screen: TerminalScreen
        var renderer: Renderer
        var decoder = KeyDecoder()
        var last: Canvas?

        mutating func run() -> Int32 {
            draw()
            while true {
                let (signals, input) = screen.poll(timeout: TerminalApp.tickMilliseconds)
                for signal in signals {
                    switch signal {
                    case .terminate(let number):
                        return 128 + number
                    case .suspend:
                        screen.suspend()
                        last = nil
                    case .resume:
                        screen.invalidate()
                        last = nil
                    case .resize:
                        screen.resize()
                        last = nil
                    }
                }
                var keys: [Key] = []
                for raw in input { keys += decoder.feed(raw) }
                keys += decoder.flush(idle: input.isEmpty)
                for key in keys {
                    handle(key)
                    if app.shouldQuit { return 0 }
                }
                app.tick()
                if app.shouldQuit { return 0 }
                draw()
            }
        }

        private mutating func handle(_ key: Key) {
            if key == .resize {
                screen.resize()
                last = nil
                return
            }
            let size = screen.size
            let fits = Renderer.fits(rows: size.rows, columns: size.columns)
            guard let action = KeyMap.action(for: key, in: app, pageRows: renderer.listPage, fits: fits) else {
                app.noteInput()
                return
            }
            if action == .submit, let notice = slowNotice(for: action) {
                renderer.notice = notice
                draw()
                renderer.notice = nil
            }
            app.send(action)
        }

        /// Unlocking and creating run the KDF (a second or more): say so first.
        private func slowNotice(for action: Action) -> String? {
            guard app.overlay == nil else { return nil }
            switch app.screen {
            case .unlock(let model): return model.password.isEmpty ? nil : "Unlocking…"
            case .createVault(let model):
                return model.focus == .confirm && !model.confirmation.isEmpty ? "Creating the vault…" : nil
            case .main: return nil
            }
        }

        private mutating func draw() {
            let size = screen.size
            let canvas = renderer.render(app, rows: size.rows, columns: size.columns, glyphs: screen.glyphs)
            if canvas == last { return }
            screen.present(canvas)
            last = canvas
        }
    }
}

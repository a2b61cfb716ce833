import FobSystem
import FobViewModels
import FoundationEssentials
@preconcurrency import Glibc

/// The terminal UI: `fob` with no command.
///
/// One input loop polls the terminal and the signal pipe every
/// ``tickMilliseconds``; keys become intents through ``KeyMap``, every
/// pass runs the model's clock step (idle lock, clipboard clear, changes
/// made by other processes), and the screen is drawn again only when the
/// picture changed.
public enum TerminalApp {
    /// How long one poll waits for input, in milliseconds: the tick period.
    /// Short enough that a change the agent tells of shows within 100 ms.
    public static let tickMilliseconds: Int32 = 50

    /// Runs the UI over `app` until it quits (Ctrl-Q), a signal or the terminal going
    /// away, then shuts the model down (clipboard cleared if it still holds
    /// a copied value). The caller builds the model (FobCLI is where the live
    /// store, clipboard and clock are put together); this only draws it and
    /// feeds it keys.
    /// - Parameters:
    ///   - app: the model, on its first screen.
    ///   - vaultDescription: the vault's path as shown in the title (`~` for home).
    ///   - environment: the environment (`NO_COLOR`, `TERM`).
    /// - Returns: the exit status: 0 after quitting; 128 + the signal number after
    ///   SIGINT (130), SIGTERM (143) or SIGHUP (129); 36 without a terminal;
    ///   1 when the terminal cannot be set up. Errors are printed to stderr.
    public static func run(_ app: AppModel, vaultDescription: String, environment: [String: String]) -> Int32 {
        let screen: TerminalScreen
        do {
            screen = try TerminalScreen(environment: environment)
        } catch {
            _ = FileDescriptorIO.writeAll(Array("fob: \(error)\n".utf8), to: 2)
            app.shutdown()
            return error == .notATerminal ? 36 : 1
        }
        var loop = Loop(app: app, screen: screen, renderer: Renderer(vaultDescription: vaultDescription))
        let status = loop.run()
        screen.close()
        app.shutdown()
        return status
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
            // Already unlocked: a master password typed blind before this
            // first frame must not become commands or text.
            if app.startedUnlocked { screen.dropTypeahead() }
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
            // Already unlocked: a master password typed blind just after
            // the first frame must not become commands or text either.
            if app.dropsKeyAtStartup() { return }
            let size = screen.size
            let fits = Renderer.fits(rows: size.rows, columns: size.columns)
            let helpPages = layOutHelp()
            guard
                let action = KeyMap.action(
                    for: key, in: app, pageRows: renderer.listPage, fits: fits, helpPages: helpPages,
                    previewRows: renderer.previewRows, pointer: renderer.pointerAreas)
            else {
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

        /// The help's pages are laid out only while it shows, not at every
        /// key: the model's search runs over them (``HelpModel/layOut(_:)``).
        /// - Returns: how many pages the help takes (1 when it does not show).
        @discardableResult
        private func layOutHelp() -> Int {
            let size = screen.size
            return Renderer.layOutHelp(app, rows: size.rows, columns: size.columns)
        }

        private mutating func draw() {
            layOutHelp()
            let size = screen.size
            let canvas = renderer.render(app, rows: size.rows, columns: size.columns, glyphs: screen.glyphs)
            if canvas == last { return }
            screen.present(canvas)
            last = canvas
        }
    }
}

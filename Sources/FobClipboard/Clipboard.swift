import FobSystem
import FoundationEssentials

/// Why a clipboard operation failed. Messages name the helper and never
/// contain the copied value.
public enum ClipboardError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No clipboard is configured or usable (`--clipboard none`, or nothing found by `auto`).
    case unavailable(String)
    /// A helper program is not installed or could not start.
    case helperMissing(String)
    /// A helper program ran and failed.
    case helperFailed(String)
    /// The terminal could not be written (OSC 52).
    case terminal(String)

    public var description: String {
        switch self {
        case .unavailable(let why): return "no clipboard: \(why)"
        case .helperMissing(let what): return "clipboard helper not available: \(what)"
        case .helperFailed(let what): return "clipboard helper failed: \(what)"
        case .terminal(let why): return "cannot write the clipboard escape to the terminal: \(why)"
        }
    }
}

/// A way to put a secret on the system clipboard, check whether it is still
/// there, and clear it. Calls block (they may run helper processes), so the
/// UI runs them off its input thread through ``ClipboardController``.
///
/// - Important: implementations pass the secret to helper processes on
///   stdin only, never in argv or the environment.
public protocol Clipboard: Sendable {
    /// The mechanism's name as given to `--clipboard` (`xclip`, `tmux`, …).
    var name: String { get }
    /// Whether ``holds(_:)`` can read the clipboard back (false for OSC 52 and none).
    var canReadBack: Bool { get }
    /// Puts `secret` on the clipboard.
    /// - Throws: ``ClipboardError``.
    func copy(_ secret: SecretBytes) throws(ClipboardError)
    /// Whether the clipboard still holds exactly `secret` (compared in
    /// constant time), or `nil` when the mechanism cannot tell.
    func holds(_ secret: SecretBytes) -> Bool?
    /// Empties the clipboard (or removes Fob's buffer).
    /// - Throws: ``ClipboardError``.
    func clear() throws(ClipboardError)
    /// Whether ``ClipboardController`` should call this mechanism on the
    /// caller's thread instead of its background queue: true for OSC 52,
    /// whose short write to the terminal must not land in the middle of the
    /// front end's own output. Default false.
    var runsOnCallerThread: Bool { get }
}

extension Clipboard {
    /// Helpers run on the controller's background queue by default.
    public var runsOnCallerThread: Bool { false }
}

/// The `--clipboard` / `FOB_CLIPBOARD` modes.
public enum ClipboardMode: String, Sendable, CaseIterable {
    /// Chosen from the environment: see ``ClipboardFactory/autoMode(environment:hasTerminal:)``.
    case auto
    /// Wayland's `wl-copy` / `wl-paste`.
    case wlCopy = "wl-copy"
    /// X11's `xclip`.
    case xclip
    /// X11's `xsel`.
    case xsel
    /// A named tmux paste buffer.
    case tmux
    /// The OSC 52 escape sequence on the terminal.
    case osc52
    /// No clipboard: copying fails.
    case none
}

/// What happened to a copied value when it was due to be cleared.
public enum ClearOutcome: Sendable, Equatable {
    /// The clipboard held our value and was cleared.
    case cleared
    /// The clipboard could not be read back, so it was cleared blindly (OSC 52).
    case clearedUnchecked
    /// The clipboard held something else (copied since); left alone.
    case leftAlone
    /// Clearing failed.
    case failed(ClipboardError)
}

extension Clipboard {
    /// Clears the clipboard if it still holds `secret` (or blindly when it
    /// cannot be read back); leaves text copied since alone.
    public func clearIfHolds(_ secret: SecretBytes) -> ClearOutcome {
        switch holds(secret) {
        case .some(false):
            return .leftAlone
        case .some(true):
            do { try clear() } catch { return .failed(error) }
            return .cleared
        case .none:
            do { try clear() } catch { return .failed(error) }
            return .clearedUnchecked
        }
    }
}

/// Chooses and builds clipboard mechanisms.
public enum ClipboardFactory {
    /// The mechanism `auto` picks: `wl-copy` when `WAYLAND_DISPLAY` is set and
    /// wl-copy is installed; `xclip`, else `xsel`, when `DISPLAY` is set;
    /// `tmux` when `TMUX` is set; otherwise `osc52` when there is a terminal,
    /// else `none`.
    /// - Parameters:
    ///   - environment: the process environment.
    ///   - hasTerminal: whether a terminal is attached (for OSC 52).
    public static func autoMode(environment: [String: String], hasTerminal: Bool) -> ClipboardMode {
        func set(_ name: String) -> Bool { !(environment[name] ?? "").isEmpty }
        func installed(_ tool: String) -> Bool { ExecutableLookup.find(tool, environment: environment) != nil }
        if set("WAYLAND_DISPLAY"), installed("wl-copy") { return .wlCopy }
        if set("DISPLAY") {
            if installed("xclip") { return .xclip }
            if installed("xsel") { return .xsel }
        }
        if set("TMUX"), installed("tmux") { return .tmux }
        return hasTerminal ? .osc52 : .none
    }

    /// Builds the clipboard for `mode`.
    /// - Parameters:
    ///   - mode: the configured mode; `auto` is resolved with ``autoMode(environment:hasTerminal:)``.
    ///   - environment: the environment passed to helpers (it never carries the secret).
    ///   - terminalDescriptor: where OSC 52 escapes are written; `nil` opens `/dev/tty` when needed.
    public static func make(
        mode: ClipboardMode, environment: [String: String] = ProcessInfo.processInfo.environment,
        terminalDescriptor: Int32? = nil
    ) -> any Clipboard {
        let resolved: ClipboardMode
        if mode == .auto {
            let hasTerminal = terminalDescriptor != nil || OSC52Clipboard.canOpenTerminal()
            resolved = autoMode(environment: environment, hasTerminal: hasTerminal)
        } else {
            resolved = mode
        }
        switch resolved {
        case .auto, .none: return NoClipboard()
        case .wlCopy: return WlCopyClipboard(environment: environment)
        case .xclip: return XclipClipboard(environment: environment)
        case .xsel: return XselClipboard(environment: environment)
        case .tmux: return TmuxClipboard(environment: environment)
        case .osc52: return OSC52Clipboard(descriptor: terminalDescriptor)
        }
    }
}

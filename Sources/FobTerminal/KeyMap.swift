import FobStore
import FobViewModels

/// Which key does what, screen by screen (CONTRACT.md, "Terminal UI").
///
/// Returns the intent for a key in the app's current state, or `nil` for a
/// key that means nothing there (the caller still counts it as input for
/// the idle lock).
public enum KeyMap {
    /// The intent `key` stands for on what `app` shows.
    /// - Parameters:
    ///   - key: a decoded key.
    ///   - app: the root view model (read only).
    ///   - pageRows: how many list rows one page is (PageUp/PageDown).
    ///   - fits: whether the terminal is big enough for the screens
    ///     (``Renderer/fits(rows:columns:)``); when it is not, nothing is
    ///     drawn but the "terminal too small" notice, so every key but `q`
    ///     (quit) means nothing.
    public static func action(for key: Key, in app: AppModel, pageRows: Int = 10, fits: Bool = true) -> Action? {
        guard fits else { return key == .character("q") ? .quit : nil }
        if let overlay = app.overlay {
            switch overlay {
            case .help:
                return key == .character("q") ? .quit : .dismiss
            case .confirm:
                switch key {
                case .character("y"), .character("Y"): return .confirm
                case .character("n"), .character("N"), .escape: return .dismiss
                default: return nil
                }
            }
        }
        switch app.screen {
        case .createVault:
            if let edit = editing(key) { return edit }
            switch key {
            case .tab, .down: return .focusNext
            case .backTab, .up: return .focusPrevious
            case .enter: return .submit
            case .escape: return .quit
            case .control("t"):
                guard case .createVault(let model) = app.screen else { return nil }
                return .setKDFPreset(nextPreset(after: model.kdfPreset))
            default: return nil
            }
        case .unlock:
            if let edit = editing(key) { return edit }
            switch key {
            case .enter: return .submit
            case .escape: return .quit
            default: return nil
            }
        case .main(let main):
            return mainAction(for: key, focus: main.focus, pageRows: pageRows)
        }
    }

    /// The KDF presets in the order Ctrl-T steps through them on the create screen.
    static func nextPreset(after preset: KDFParameters.Preset) -> KDFParameters.Preset {
        let all = KDFParameters.Preset.allCases
        let i = all.firstIndex(of: preset) ?? 0
        return all[(i + 1) % all.count]
    }

    private static func mainAction(for key: Key, focus: MainFocus, pageRows: Int) -> Action? {
        switch focus {
        case .list:
            switch key {
            case .down, .character("j"): return .moveSelection(1)
            case .up, .character("k"): return .moveSelection(-1)
            case .pageDown: return .moveSelection(max(pageRows, 1))
            case .pageUp: return .moveSelection(-max(pageRows, 1))
            case .end: return .moveSelection(Int(Int32.max))
            case .home: return .moveSelection(-Int(Int32.max))
            case .character("/"): return .startFilter
            case .enter: return .openSelected
            case .character("c"): return .copySelected
            case .character("n"): return .newItem
            case .character("d"): return .deleteSelected
            case .character("l"): return .lock
            case .character("W"): return .logoutWipe(service: nil)
            case .character("?"), .function(1): return .showHelp
            case .character("q"): return .quit
            case .tab: return .focusNext
            case .backTab: return .focusPrevious
            case .escape: return .cancel
            case .control("r"): return .toggleReveal
            default: return nil
            }
        case .filter:
            if let edit = editing(key) { return edit }
            switch key {
            case .enter: return .submit
            case .escape: return .cancel
            case .down: return .moveSelection(1)
            case .up: return .moveSelection(-1)
            case .pageDown: return .moveSelection(max(pageRows, 1))
            case .pageUp: return .moveSelection(-max(pageRows, 1))
            case .tab: return .focusNext
            case .backTab: return .focusPrevious
            default: return nil
            }
        case .service, .userID, .password:
            if let edit = editing(key) { return edit }
            switch key {
            case .tab, .down: return .focusNext
            case .backTab, .up: return .focusPrevious
            case .enter: return .submit
            case .escape: return .cancel
            default: return nil
            }
        case .saveButton, .retrieveButton, .deleteButton:
            switch key {
            case .tab, .right, .down: return .focusNext
            case .backTab, .left, .up: return .focusPrevious
            case .enter, .character(" "): return .submit
            case .escape: return .cancel
            case .control("r"): return .toggleReveal
            case .character("?"), .function(1): return .showHelp
            default: return nil
            }
        }
    }

    /// Keys that edit the focused text field.
    private static func editing(_ key: Key) -> Action? {
        switch key {
        case .character(let c): return .insert(String(c))
        case .paste(let text): return .insert(text)
        case .backspace: return .deleteBackward
        case .delete, .control("d"): return .deleteForward
        case .left, .control("b"): return .moveCursor(.left)
        case .right, .control("f"): return .moveCursor(.right)
        case .home, .control("a"): return .moveCursor(.home)
        case .end, .control("e"): return .moveCursor(.end)
        case .control("u"): return .clearField
        case .control("r"): return .toggleReveal
        default: return nil
        }
    }
}

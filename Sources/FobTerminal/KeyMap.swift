import FobStore
import FobViewModels

/// Which key does what, screen by screen, as ``KeyBindings/table`` says
/// (docs/tui.md).
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
    ///     drawn but the "terminal too small" notice, so every key but Ctrl-Q
    ///     and F10 (quit) means nothing.
    ///   - helpPages: how many pages the help overlay takes on this screen
    ///     (``Renderer/helpPages(rows:columns:)``).
    ///   - previewRows: the preview as last drawn (``Renderer/previewRows``),
    ///     for the preview's scroll keys.
    ///   - pointer: where the mouse reaches the list and the preview as
    ///     last drawn (``Renderer/pointerAreas``).
    public static func action(
        for key: Key, in app: AppModel, pageRows: Int = 10, fits: Bool = true, helpPages: Int = 1,
        previewRows: (rows: Int, room: Int, first: Int) = (0, 0, 0), pointer: PointerAreas = PointerAreas()
    ) -> Action? {
        KeyBindings.binding(for: key, in: KeyContext(app, fits: fits))?
            .action(
                for: key,
                in: KeyBinding.Situation(
                    app: app, pageRows: pageRows, helpPages: helpPages, previewRows: previewRows, pointer: pointer))
    }

    /// The KDF presets in the order Ctrl-T steps through them on the create screen.
    static func nextPreset(after preset: KDFParameters.Preset) -> KDFParameters.Preset {
        let all = KDFParameters.Preset.allCases
        let i = all.firstIndex(of: preset) ?? 0
        return all[(i + 1) % all.count]
    }
}

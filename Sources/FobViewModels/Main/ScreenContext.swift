import FobAccess
import FobClipboard
import FobStore
import FobSystem

/// What the main screen's parts share, made once by ``MainScreen``: the
/// state drawn, the unlocked store, the clock, the clipboard, the
/// mailbox that brings background work back to the UI thread, the list's
/// refresh and the undo buffer. Each part (``EditorSession``,
/// ``ItemActions``, ``ConflictDesk``, ``LogoutFlow``) holds it and keeps
/// only its own state beside it.
struct ScreenContext {
    /// The state drawn.
    let model: MainModel
    /// The unlocked store.
    let store: any KeychainStore
    /// The time the screen goes by (injected in tests).
    let clock: any WallClock
    /// Copies with auto-clear.
    let clipboard: ClipboardController
    /// Where background work reaches the store on the UI thread.
    let mailbox: UIThreadMailbox
    /// Keeps the list in step with the store.
    let refresh: ItemRefresh
    /// The last deletes and Saves, undoable for ``UndoBuffer/lifetime`` seconds.
    let undo: UndoBuffer
}

/// A part of the main screen: it reaches what the screen shares through
/// ``screen``, by the names the shared things have there.
protocol ScreenPart {
    /// What the main screen's parts share.
    var screen: ScreenContext { get }
}

extension ScreenPart {
    var model: MainModel { screen.model }
    var store: any KeychainStore { screen.store }
    var clock: any WallClock { screen.clock }
    var clipboard: ClipboardController { screen.clipboard }
    var mailbox: UIThreadMailbox { screen.mailbox }
    var refresh: ItemRefresh { screen.refresh }
    var undo: UndoBuffer { screen.undo }
}

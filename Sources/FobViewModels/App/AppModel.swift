import FobAccess
import FobClipboard
import FobSessions
import FobStore
import FobSystem
import FobTokens
import FoundationEssentials

/// The application's root view model: routes each intent to the screen on
/// show or the overlay over it, and runs what no single screen owns: the
/// idle lock, clipboard auto-clear and background refresh.
///
/// The front end calls ``send(_:)`` for every key (mapped to an ``Action``),
/// ``noteInput()`` for keys that map to nothing, ``tick()`` on a timer (every
/// 100–500 ms), draws ``screen`` and ``overlay``, and calls ``shutdown()``
/// before exiting when ``shouldQuit`` turns true (or on a signal).
///
/// Use from one thread. Clipboard helpers run on a background queue and
/// never block it.
public final class AppModel {
    /// The screen on show.
    public var screen: Screen {
        switch current {
        case .createVault(let model): return .createVault(model)
        case .unlock(let model): return .unlock(model)
        case .main(let main): return .main(main.model)
        }
    }
    /// The overlay on top of the screen, if any.
    public private(set) var overlay: Overlay?
    /// Set by ``Action/quit``: the front end should call ``shutdown()`` and exit.
    public private(set) var shouldQuit = false
    /// The clipboard with auto-clear.
    public let clipboard: ClipboardController
    /// The idle-lock policy and when input last arrived.
    public private(set) var idleLock: IdleLock

    /// How often ``tick()`` asks the store whether another process changed
    /// it, in seconds.
    public static let pollInterval: TimeInterval = ItemRefresh.pollInterval

    /// The screen on show with what drives it.
    private enum Current {
        case createVault(CreateVaultModel)
        case unlock(UnlockModel)
        case main(MainScreen)
    }

    private var current: Current
    private let store: any KeychainStore
    private let clock: any WallClock
    private let kdfOverride: KDFParameters?
    private let oauthTransport: any HTTPTransport
    /// Where the main screen reads sync's conflicts, or `nil` without sync.
    private let sync: (any SyncConflictSource)?
    /// The help overlay's page and search.
    public let help = HelpModel()
    /// Which page of the help overlay shows (``HelpModel/page``).
    public var helpPage: Int { help.page }
    /// Store calls from background work, run at each tick.
    private let mailbox = UIThreadMailbox()
    /// What was said once about this vault (``AccessDefaultNotice``).
    private let notices: any NoticeMemory
    /// A refresh that was waiting for its provider when the screen locked
    /// (or an F6 resolve still writing): the store stays open for it until
    /// it ends (at most the transport's timeout), so that the tokens it
    /// gets, a rotated refresh token among them, are saved rather than
    /// lost; the screen is locked meanwhile.
    private var refreshBeforeStoreLock: BackgroundJob<StatusLine>?
    /// The agent's requests to unlock, heard while the unlock screen shows.
    private var unlockRequests: UnlockRequestFeed?

    /// - Parameters:
    ///   - store: the item store (locked or without a vault).
    ///   - clipboard: the clipboard with its auto-clear delay.
    ///   - clock: the time source.
    ///   - lockAfter: idle seconds before locking (default 300; 0 = never).
    ///   - kdfOverride: KDF costs for a new vault instead of the chosen preset (tests).
    ///   - oauthTransport: how F5 reaches an OAuth provider's token endpoint (a fake in tests).
    ///   - sync: where the list reads sync's conflicts and F6 settles them, or `nil` without sync.
    ///   - notices: what was said once about this vault, kept across runs by the caller.
    public init(
        store: any KeychainStore, clipboard: ClipboardController, clock: any WallClock,
        lockAfter: TimeInterval = 300, kdfOverride: KDFParameters? = nil,
        oauthTransport: any HTTPTransport = HelperHTTPTransport(), sync: (any SyncConflictSource)? = nil,
        notices: any NoticeMemory = SessionNoticeMemory()
    ) {
        self.notices = notices
        self.sync = sync
        self.oauthTransport = oauthTransport
        self.store = store
        self.clipboard = clipboard
        self.clock = clock
        self.kdfOverride = kdfOverride
        idleLock = IdleLock(lockAfter: lockAfter, now: clock.now)
        if !store.vaultExists {
            current = .createVault(CreateVaultModel())
        } else if store.isLocked {
            current = .unlock(UnlockModel())
        } else {
            let main = MainScreen(
                store: store, clipboard: clipboard, clock: clock, transport: oauthTransport, mailbox: mailbox,
                sync: sync)
            main.model.form.message = .warning(AppModel.alreadyUnlockedNote)
            current = .main(main)
            startedUnlocked = true
            startupKeysUntil = clock.now.addingTimeInterval(AppModel.startupKeyWindow)
        }
    }

    /// How long keys are dropped after the UI opened on a vault unlocked
    /// already: 1 second. A master password typed blind, expecting a
    /// prompt that never came, is mostly typed in it.
    public static let startupKeyWindow: TimeInterval = 1
    /// Until when keys are dropped (``startupKeyWindow``); `nil` when the UI
    /// opened on another screen.
    private var startupKeysUntil: Date?

    /// Whether a key read now is to be dropped unread: only within
    /// ``startupKeyWindow`` of opening on a vault unlocked already, while
    /// that main screen shows. The front end asks before it maps the key
    /// to an action.
    public func dropsKeyAtStartup() -> Bool {
        guard let until = startupKeysUntil else { return false }
        if case .main = current, clock.now < until { return true }
        endStartupWindow()
        return false
    }

    /// Ends the window of ``dropsKeyAtStartup()``; the status line, unless
    /// something else was said since, says keys are taken again.
    private func endStartupWindow() {
        startupKeysUntil = nil
        guard let main = mainModel, main.form.message == .warning(AppModel.alreadyUnlockedNote) else { return }
        main.form.message = AccessDefaultNotice.take(store, notices) ?? .info(AppModel.alreadyUnlockedReadyNote)
    }

    /// Whether the first screen is the main screen because the vault was
    /// unlocked already (the agent holds it): keys typed before it showed,
    /// a master password typed blind among them, are to be dropped, never
    /// taken as commands or text.
    public private(set) var startedUnlocked = false

    /// The first message when the vault was unlocked already, while keys
    /// are dropped (``startupKeyWindow``).
    public static let alreadyUnlockedNote =
        "Vault already unlocked (fob agent): no password needed; keys ignored for 1 s"
    /// The message once keys are taken again.
    public static let alreadyUnlockedReadyNote =
        "Vault already unlocked (fob agent): no password needed; early keys ignored"

    /// The create-vault model when that screen shows.
    public var createVaultModel: CreateVaultModel? {
        if case .createVault(let model) = current { return model }
        return nil
    }

    /// The unlock model when that screen shows.
    public var unlockModel: UnlockModel? {
        if case .unlock(let model) = current { return model }
        return nil
    }

    /// The main model when that screen shows.
    public var mainModel: MainModel? {
        if case .main(let main) = current { return main.model }
        return nil
    }

    /// The current time from the clock.
    public var now: Date { clock.now }

    /// When the idle lock will fire if no input comes, or `nil` when it is off.
    public var idleLockDeadline: Date? { idleLock.deadline }

    /// When the clipboard will be cleared, or `nil` when nothing Fob copied waits.
    public var clipboardClearDeadline: Date? { clipboard.clearDeadline }

    /// The lock state for the header: whether the vault is unlocked and
    /// when it locks by itself (the earlier of this UI's idle lock and the
    /// agent's own locks), `nil` when never.
    public var lockState: (unlocked: Bool, locksAt: Date?) {
        guard case .main = current else { return (false, nil) }
        var deadlines = [idleLock.deadline].compactMap { $0 }
        if case .unlocked(let agentLocks?) = store.agentState { deadlines.append(agentLocks) }
        return (true, deadlines.min())
    }

    /// ``lockState`` in words, for the header: `unlocked · locks 20:45`
    /// (local time), `unlocked` without a deadline, `locked`.
    public var lockStateText: String {
        let state = lockState
        guard state.unlocked else { return "locked" }
        guard let at = state.locksAt else { return "unlocked" }
        return "unlocked · locks \(DateText.local(at, "%H:%M"))"
    }

    // MARK: - Input

    /// Counts as input for the idle lock without doing anything else (a key
    /// that maps to no action).
    public func noteInput() { idleLock.noteInput(clock.now) }

    /// Performs a user intent; counts as input for the idle lock.
    public func send(_ action: Action) {
        noteInput()
        if let overlay {
            apply(answer(overlay, action))
        } else {
            switch current {
            case .createVault(let model): apply(model.handle(action, store: store, kdfOverride: kdfOverride))
            case .unlock(let model): apply(model.handle(action, store: store))
            case .main(let main):
                let before = main.model.form.message
                let transition = main.handle(action)
                // A dialog opening clears the status line's older text, which would speak beside it of something past.
                if case .show(let overlay) = transition, overlay.isDialog, main.model.form.message == before {
                    main.model.form.message = .empty
                }
                apply(transition)
            }
        }
        showClipboardEvents()
        if case .main(let main) = current { main.preview.sync() }
    }

    /// The timer step: background work's store calls and results, idle
    /// lock, clipboard auto-clear, refresh when another process changed the
    /// vault, expiry texts. Not input: it does not reset
    /// the idle timer.
    public func tick() {
        let now = clock.now
        // Background work waiting for the store, also while the screen is locked.
        mailbox.drain()
        finishDeferredStoreLock()
        clipboard.tick()
        if idleLock.isDue(now) { lockForIdleness() }
        if case .main(let main) = current {
            if let wipe = main.logout.retryPendingWipe() { apply(wipe) }
        }
        // A lock done elsewhere (`fob lock`, the agent's timeout) reaches the
        // store; an agent that went away without locking is not such a lock.
        if case .main = current, store.isLocked {
            let stopped = store.agentState == .stopped
            lockNow(
                message: stopped
                    ? .warning("The agent stopped (without a lock); unlock to go on") : .info("Locked elsewhere"),
                everywhere: false, keepEdits: false)
        }
        if let until = startupKeysUntil, clock.now >= until { endStartupWindow() }
        if case .unlock(let model) = current {
            unlockRequests = unlockRequests ?? UnlockRequestFeed(store: store)
            unlockRequests?.tick(model, now: now)
        } else {
            unlockRequests = nil
        }
        if case .main(let main) = current {
            main.tick(now: now)
            // A question answered in another UI, or timed out, closes its dialog here.
            if overlay == .consent, main.model.consent.dialog == nil { overlay = nil }
        }
        showClipboardEvents()
    }

    /// Before exit: clears the clipboard if it holds our value (waiting up to
    /// `timeout` seconds for the helper), locks the store and wipes memory.
    ///
    /// A refresh still waiting for its provider gets up to `timeout` seconds
    /// more to save what it receives; past that its answer is lost.
    public func shutdown(timeout: TimeInterval = 3) {
        if case .main(let main) = current, let job = main.unfinishedStoreWork, refreshBeforeStoreLock == nil {
            refreshBeforeStoreLock = job
        }
        if let job = refreshBeforeStoreLock {
            let deadline = Date().addingTimeInterval(timeout)
            while job.finished == nil && Date() < deadline {
                mailbox.drain()
                DetachedThread.sleep(seconds: 0.02)
            }
            mailbox.drain()
            refreshBeforeStoreLock = nil
        }
        clipboard.shutdown(timeout: timeout)
        store.lock()
        wipeScreen()
    }

    /// Locks the store once a refresh that outlived the screen's lock has
    /// ended, unless the screen was unlocked again meanwhile.
    private func finishDeferredStoreLock() {
        guard let job = refreshBeforeStoreLock, job.finished != nil else { return }
        refreshBeforeStoreLock = nil
        if case .main = current { return }
        store.lock()
    }

    /// Whether the store is held open after a screen lock for a refresh that
    /// is still waiting (for tests).
    var storeLockDeferred: Bool { refreshBeforeStoreLock != nil }

    // MARK: - Routing

    /// Does what a screen's intent asked for.
    private func apply(_ transition: Transition) {
        switch transition {
        case .stay: break
        case .show(let overlay):
            if case .help = overlay { help.reset() }
            self.overlay = overlay
        case .lock(let message): lockNow(message: message, everywhere: true)
        case .lockWiping(let message): lockNow(message: message, everywhere: true, keepEdits: false)
        case .openVault:
            let main = MainScreen(
                store: store, clipboard: clipboard, clock: clock, transport: oauthTransport,
                generatorSettings: carryOver.generatorSettings, mailbox: mailbox, sync: sync)
            carryOver.restore(into: main, now: clock.now)
            if let notice = AccessDefaultNotice.take(store, notices) { main.model.form.message = notice }
            current = .main(main)
        case .quit: shouldQuit = true
        case .lockAndQuit:
            lockNow(message: .info("Locked"), everywhere: true, keepEdits: false)
            shouldQuit = true
        }
    }

    /// An overlay that takes its own keys on the main screen (`handle`
    /// says whether it took this one): it stays open while it takes them,
    /// and closes at the first it does not (Enter or Esc).
    private func keepsOverlay(_ handle: (MainScreen) -> Bool) -> Transition {
        guard case .main(let main) = current, handle(main) else {
            overlay = nil
            return .stay
        }
        return .stay
    }

    /// An action while `overlay` shows: the message history closes on any
    /// key, the help on any key it does not take (`q` too: it does not
    /// quit); a confirmation takes yes, no or quit; the generator dialog
    /// takes its own keys until Enter or Esc closes it.
    private func answer(_ overlay: Overlay, _ action: Action) -> Transition {
        switch overlay {
        case .generator: return keepsOverlay { main in main.generator.handleGenerator(action) }
        case .logoutReview:
            guard case .main(let main) = current else {
                self.overlay = nil
                return .stay
            }
            let (transition, open) = main.logout.handleLogoutReview(action)
            if !open { self.overlay = nil }
            return transition
        case .help:
            // The help turns pages and searches; other keys, q and Esc among them, close it (never quit).
            if !help.handle(action) { self.overlay = nil }
            return .stay
        case .messages:
            self.overlay = nil
            return .stay
        case .accessLog: return keepsOverlay { main in main.accessLog.handle(action) }
        case .consent: return keepsOverlay { main in main.consent.handle(action) }
        case .confirm(let dialog):
            switch action {
            case .confirm:
                self.overlay = nil
                guard case .main(let main) = current else { return .stay }
                return main.perform(dialog.purpose)
            case .discardEdits, .keepOtherVersion:
                guard case .main(let main) = current,
                    let transition = main.performAlternative(dialog.purpose, action)
                else { return .stay }
                self.overlay = nil
                return transition
            case .dismiss, .cancel:
                self.overlay = nil
                if case .main(let main) = current { main.dismissed(dialog.purpose) }
                return .stay
            case .toggleReveal:
                if case .main(let main) = current { main.toggleReveal(in: dialog.purpose) }
                return .stay
            case .quit:
                return .quit
            case .lockAndQuit:
                self.overlay = nil
                return .lockAndQuit
            default:
                return .stay
            }
        }
    }

    // MARK: - Lock

    /// The idle time ran out: locks the main screen; on the setup screens,
    /// closes any overlay and wipes what was typed.
    private func lockForIdleness() {
        idleLock.noteInput(clock.now)
        switch current {
        case .main:
            lockNow(message: .info("Locked after \(Int(idleLock.lockAfter)) s without input"), everywhere: true)
        case .unlock(let model):
            overlay = nil
            model.wipe()
        case .createVault(let model):
            overlay = nil
            model.wipe()
            model.message = .empty
        }
    }

    /// Locks: closes any dialog, clears the clipboard if it holds our value,
    /// locks the store (`everywhere`: for every process of the session, as
    /// `fob lock` does), wipes every field and value, undo data among them,
    /// and shows the unlock screen with `message`.
    private func lockNow(message: StatusLine, everywhere: Bool, keepEdits: Bool = true) {
        var message = message
        if everywhere, let refused = store.lockSession() {
            // Never "Locked" for a lock that did not happen: this process
            // locks, the agent still holds the keys; its answer names the
            // way out (an agent of an older version: 'fob unlock' replaces it).
            message = .warning("Locked here only: the agent did not lock and still holds the keys: \(refused)")
        }
        if case .main(let main) = current {
            carryOver.capture(from: main, keepEdits: keepEdits)
            if let name = carryOver.keptEdits {
                message = StatusLine(
                    message.tone, message.text + "; your unsaved edits of \(name) are kept for the unlock")
            }
        }
        overlay = nil
        clipboard.clearNow()
        if case .main(let main) = current, let job = main.unfinishedStoreWork {
            refreshBeforeStoreLock = job
        } else {
            store.lock()
        }
        wipeScreen()
        current = .unlock(UnlockModel(message: message))
    }

    /// What a lock carries over to the next main screen.
    private var carryOver = LockCarryOver()

    /// The message history's first line after a lock wiped the earlier ones.
    public static let messagesWipedNote = LockCarryOver.messagesWipedNote

    private func wipeScreen() {
        switch current {
        case .main(let main): main.wipe()
        case .unlock(let model): model.wipe()
        case .createVault(let model): model.wipe()
        }
    }

    /// Shows the clipboard's reports on the main screen's Message line.
    private func showClipboardEvents() {
        let events = clipboard.takeEvents()
        if case .main(let main) = current { main.actions.show(events) }
    }
}

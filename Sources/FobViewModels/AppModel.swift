import Foundation
import FobStore
import FobSessions
import FobClipboard
import FobSystem

/// The screen on show. Each case carries its view model.
public enum Screen {
    /// No vault yet: `New master password` and `Confirm`.
    case createVault(CreateVaultModel)
    /// The vault is locked: `Master password`.
    case unlock(UnlockModel)
    /// Unlocked: the item list and the Home form.
    case main(MainModel)
}

/// A confirmation dialog: a title, a question, and what `y` does.
public struct ConfirmDialog: Sendable, Equatable {
    /// What confirming does.
    public enum Purpose: Sendable, Equatable {
        /// Delete this item.
        case deleteItem(ItemKey)
        /// Delete `count` token and OAuth items (of `service`, or all), then lock.
        case logoutWipe(service: String?, count: Int)
    }
    /// The dialog's title.
    public var title: String
    /// The question, ending with "(y/n)".
    public var message: String
    /// What `y` does.
    public var purpose: ConfirmDialog.Purpose
}

/// Something drawn over the current screen.
public enum Overlay: Sendable, Equatable {
    /// A yes/no question; ``Action/confirm`` or ``Action/dismiss`` answers it.
    case confirm(ConfirmDialog)
    /// The key help; any action closes it.
    case help
}

/// The application's root view model: the current screen, an overlay, the
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
    public private(set) var screen: Screen
    /// The overlay on top of the screen, if any.
    public private(set) var overlay: Overlay?
    /// Set by ``Action/quit``: the front end should call ``shutdown()`` and exit.
    public private(set) var shouldQuit = false
    /// The clipboard with auto-clear.
    public let clipboard: ClipboardController
    /// Seconds without input before the idle lock; 0 = never.
    public let lockAfter: TimeInterval
    /// When the last input arrived.
    public private(set) var lastInput: Date

    /// How often ``tick()`` asks the store whether another process changed
    /// it, in seconds.
    public static let pollInterval: TimeInterval = 0.5

    private let store: any KeychainStore
    private let clock: any WallClock
    private let kdfOverride: KDFParameters?
    private var lastPoll: Date?
    private var knownVersion: Int64?
    private var expiryCache: [ItemKey: (modified: Date, expires: Date?)] = [:]

    /// - Parameters:
    ///   - store: the item store (locked or without a vault).
    ///   - clipboard: the clipboard with its auto-clear delay.
    ///   - clock: the time source.
    ///   - lockAfter: idle seconds before locking (default 300; 0 = never).
    ///   - kdfOverride: KDF costs for a new vault instead of the chosen preset (tests).
    public init(store: any KeychainStore, clipboard: ClipboardController, clock: any WallClock,
                lockAfter: TimeInterval = 300, kdfOverride: KDFParameters? = nil) {
        self.store = store
        self.clipboard = clipboard
        self.clock = clock
        self.lockAfter = lockAfter
        self.kdfOverride = kdfOverride
        lastInput = clock.now
        if !store.vaultExists {
            screen = .createVault(CreateVaultModel())
        } else if store.isLocked {
            screen = .unlock(UnlockModel())
        } else {
            screen = .main(MainModel())
            enterMain()
        }
    }

    /// The create-vault model when that screen shows.
    public var createVaultModel: CreateVaultModel? {
        if case .createVault(let model) = screen { return model }
        return nil
    }

    /// The unlock model when that screen shows.
    public var unlockModel: UnlockModel? {
        if case .unlock(let model) = screen { return model }
        return nil
    }

    /// The main model when that screen shows.
    public var mainModel: MainModel? {
        if case .main(let model) = screen { return model }
        return nil
    }

    /// The current time from the clock.
    public var now: Date { clock.now }

    /// When the idle lock will fire if no input comes, or `nil` when it is off.
    public var idleLockDeadline: Date? { lockAfter > 0 ? lastInput.addingTimeInterval(lockAfter) : nil }

    /// The help overlay's lines: key, then what it does.
    public static let helpLines: [(key: String, action: String)] = [
        ("Up/Down, j/k", "move in the list"),
        ("/", "filter as you type (Enter keeps, Esc clears)"),
        ("Enter", "put the selected item in the form; press a button"),
        ("n", "new item"),
        ("c", "copy the selected secret (cleared automatically)"),
        ("d", "delete the selected item (asks first)"),
        ("l", "lock now"),
        ("W", "logout: delete every token and OAuth item, then lock (asks first)"),
        ("Tab, Shift-Tab", "move between the form's fields and buttons"),
        ("Ctrl-R", "reveal or hide the Retrieved Password; in the Password field while it holds text, that field instead"),
        ("Esc", "back to the list; close a dialog"),
        ("?", "this help"),
        ("q", "quit"),
    ]

    // MARK: - Input

    /// Counts as input for the idle lock without doing anything else (a key
    /// that maps to no action).
    public func noteInput() { lastInput = clock.now }

    /// Performs a user intent; counts as input for the idle lock.
    public func send(_ action: Action) {
        noteInput()
        if let overlay {
            handleOverlay(overlay, action)
        } else {
            switch screen {
            case .createVault(let model): handleCreate(model, action)
            case .unlock(let model): handleUnlock(model, action)
            case .main(let model): handleMain(model, action)
            }
        }
        drainClipboardEvents()
    }

    /// The timer step: idle lock, clipboard auto-clear, refresh when another
    /// process changed the vault, expiry texts. Not input: it does not reset
    /// the idle timer.
    public func tick() {
        let now = clock.now
        clipboard.tick()
        if lockAfter > 0, now.timeIntervalSince(lastInput) >= lockAfter {
            idleLock()
        }
        if case .main(let main) = screen {
            if lastPoll.map({ now.timeIntervalSince($0) >= AppModel.pollInterval }) ?? true {
                lastPoll = now
                if let version = try? store.dataVersion(), version != knownVersion {
                    let shown = main.form.retrievedKey
                    if reloadItems(), let shown {
                        main.form.message = "Deleted elsewhere: \(AppModel.describe(service: shown.service, account: shown.account))"
                            + AppModel.retrievedClearedNote
                    }
                }
            }
            main.list.updateExpiryTexts(now: now)
        }
        drainClipboardEvents()
    }

    /// Before exit: clears the clipboard if it holds our value (waiting up to
    /// `timeout` seconds for the helper), locks the store and wipes memory.
    public func shutdown(timeout: TimeInterval = 3) {
        clipboard.shutdown(timeout: timeout)
        store.lock()
        wipeScreens()
    }

    // MARK: - Lock

    private func idleLock() {
        lastInput = clock.now
        switch screen {
        case .main:
            lockNow(message: "Locked after \(Int(lockAfter)) s without input")
        case .unlock(let model):
            overlay = nil
            model.wipe()
        case .createVault(let model):
            overlay = nil
            model.wipe()
            model.message = ""
        }
    }

    /// Locks: closes any dialog, clears the clipboard if it holds our value,
    /// locks the store, wipes every field and value, and shows the unlock
    /// screen with `message`.
    private func lockNow(message: String) {
        overlay = nil
        clipboard.clearNow()
        store.lock()
        wipeScreens()
        expiryCache = [:]
        knownVersion = nil
        screen = .unlock(UnlockModel(message: message))
    }

    private func wipeScreens() {
        switch screen {
        case .main(let model): model.wipe()
        case .unlock(let model): model.wipe()
        case .createVault(let model): model.wipe()
        }
    }

    // MARK: - Overlays

    private func handleOverlay(_ overlay: Overlay, _ action: Action) {
        switch overlay {
        case .help:
            self.overlay = nil
            if action == .quit { shouldQuit = true }
        case .confirm(let dialog):
            switch action {
            case .confirm:
                self.overlay = nil
                perform(dialog.purpose)
            case .dismiss, .cancel:
                self.overlay = nil
                if case .main(let main) = screen { main.form.message = "Cancelled" }
            case .quit:
                shouldQuit = true
            default:
                break
            }
        }
    }

    private func perform(_ purpose: ConfirmDialog.Purpose) {
        guard case .main(let main) = screen else { return }
        switch purpose {
        case .deleteItem(let key):
            let name = AppModel.describe(service: key.service, account: key.account)
            do {
                try store.delete(matching: key.query)
            } catch .itemNotFound {
                main.form.message = "No item for \(name)"
                reloadItems()
                return
            } catch {
                main.form.message = error.description
                return
            }
            let cleared = reloadItems()
            main.form.message = "Deleted" + (cleared ? AppModel.retrievedClearedNote : "")
        case .logoutWipe(let service, _):
            let report: LogoutWipe.Report
            do { report = try LogoutWipe.run(in: store, service: service) } catch {
                main.form.message = "Logout failed: \(error)"
                return
            }
            if report.succeeded {
                lockNow(message: report.summary)
            } else {
                clipboard.clearNow()
                let cleared = reloadItems()
                main.form.message = report.summary + (cleared ? AppModel.retrievedClearedNote : "")
            }
        }
    }

    // MARK: - Create vault

    private func handleCreate(_ model: CreateVaultModel, _ action: Action) {
        if edit(model.focusedField, action) { return }
        switch action {
        case .focusNext, .focusPrevious:
            model.focus = model.focus == .newPassword ? .confirm : .newPassword
        case .setKDFPreset(let preset):
            model.kdfPreset = preset
        case .submit:
            if model.focus == .newPassword {
                if model.newPassword.isEmpty {
                    model.message = CreateVaultModel.emptyMessage
                } else {
                    model.focus = .confirm
                }
                return
            }
            guard let password = model.validate() else { return }
            let kdf = kdfOverride ?? KDFParameters(model.kdfPreset)
            do {
                try store.create(password: password, kdf: kdf)
            } catch {
                model.message = error.description
                return
            }
            model.wipe()
            screen = .main(MainModel())
            enterMain()
        case .quit:
            shouldQuit = true
        default:
            break
        }
    }

    // MARK: - Unlock

    private func handleUnlock(_ model: UnlockModel, _ action: Action) {
        if edit(model.password, action) { return }
        switch action {
        case .submit:
            guard !model.password.isEmpty else {
                model.message = "Enter the master password"
                return
            }
            let password = model.password.secret()
            model.wipe()
            do {
                try store.unlock(password: password)
            } catch .authFailed {
                model.failedAttempts += 1
                model.message = "\(UnlockModel.wrongPasswordMessage) (\(model.failedAttempts) failed attempt\(model.failedAttempts == 1 ? "" : "s"))"
                return
            } catch {
                model.message = error.description
                return
            }
            screen = .main(MainModel())
            enterMain()
        case .quit:
            shouldQuit = true
        default:
            break
        }
    }

    // MARK: - Main screen

    private func enterMain() {
        lastPoll = nil
        knownVersion = nil
        reloadItems()
    }

    private func handleMain(_ main: MainModel, _ action: Action) {
        let form = main.form
        // Ctrl-R: the Retrieved Password, except in a Password field holding text.
        if case .toggleReveal = action, main.focus != .password || form.password.isEmpty {
            if form.retrievedPassword != nil {
                form.isRetrievedPasswordRevealed.toggle()
            } else if main.focus == .password {
                form.password.toggleReveal()
            }
            return
        }
        if let field = main.focusedField, edit(field, action) {
            if main.focus == .filter { main.list.applyFilter() }
            return
        }
        switch action {
        case .focusNext, .focusPrevious:
            let order = MainFocus.tabOrder
            let current = order.firstIndex(of: main.focus == .filter ? .list : main.focus) ?? 0
            let step = action == .focusNext ? 1 : order.count - 1
            main.focus = order[(current + step) % order.count]
        case .focus(let focus):
            main.focus = focus
        case .submit:
            switch main.focus {
            case .list: openSelected(main)
            case .filter: main.focus = .list
            case .service: main.focus = .userID
            case .userID: main.focus = .password
            case .password: main.focus = .saveButton
            case .saveButton: save(main)
            case .retrieveButton: retrieve(main)
            case .deleteButton: deleteFromForm(main)
            }
        case .cancel:
            if main.focus == .filter || (main.focus == .list && !main.list.filter.isEmpty) {
                main.list.filter.clear()
                main.list.applyFilter()
            }
            main.focus = .list
        case .moveSelection(let delta):
            main.list.moveSelection(by: delta)
        case .startFilter:
            main.focus = .filter
        case .openSelected:
            openSelected(main)
        case .newItem:
            form.wipe()
            form.message = "New item"
            main.focus = .service
        case .copySelected:
            copySelected(main)
        case .deleteSelected:
            guard let row = main.list.selectedRow else { form.message = "No item selected"; return }
            overlay = .confirm(ConfirmDialog(
                title: "Delete item",
                message: "Delete \(AppModel.describe(service: row.service, account: row.account))? (y/n)",
                purpose: .deleteItem(row.key)))
        case .lock:
            lockNow(message: "Locked")
        case .logoutWipe(let service):
            askLogout(main, service: service)
        case .showHelp:
            overlay = .help
        case .quit:
            shouldQuit = true
        case .save:
            save(main)
        case .retrieve:
            retrieve(main)
        case .delete:
            deleteFromForm(main)
        case .insert, .deleteBackward, .deleteForward, .moveCursor, .clearField, .toggleReveal,
             .setKDFPreset, .confirm, .dismiss:
            break
        }
    }

    /// Applies an editing action to `field`; returns whether it was one.
    private func edit(_ field: TextFieldState, _ action: Action) -> Bool {
        switch action {
        case .insert(let text): field.insert(text)
        case .deleteBackward: field.deleteBackward()
        case .deleteForward: field.deleteForward()
        case .moveCursor(let move): field.moveCursor(move)
        case .clearField: field.clear()
        case .toggleReveal: field.toggleReveal()
        default: return false
        }
        return true
    }

    static func describe(service: String, account: String) -> String {
        "service \"\(service)\", user ID \"\(account)\""
    }

    private func formKey(_ form: HomeFormModel) -> ItemKey {
        ItemKey(service: form.service.text, account: form.userID.text)
    }

    private func save(_ main: MainModel) {
        let form = main.form
        guard !form.userID.isEmpty else {
            form.message = "User ID cannot be empty"
            main.focus = .userID
            return
        }
        let key = formKey(form)
        let outcome: Vault.SaveOutcome
        do {
            outcome = try store.save(service: key.service, account: key.account, secret: form.password.secret())
        } catch {
            form.message = error.description
            return
        }
        form.password.clear()
        switch outcome {
        case .added:
            form.message = "Saved (new item)"
        case .updated:
            form.message = "Saved (replaced the password of \(AppModel.describe(service: key.service, account: key.account)))"
        }
        reloadItems()
        main.list.select(key)
    }

    private func retrieve(_ main: MainModel) {
        let form = main.form
        let key = formKey(form)
        form.clearRetrieved()
        do {
            let item = try store.item(key)
            form.retrievedKey = ItemKey(item)
            form.retrievedID = item.account
            form.retrievedPassword = item.secret
            form.message = "Retrieved"
        } catch .itemNotFound {
            form.message = "No item for \(AppModel.describe(service: key.service, account: key.account))"
        } catch {
            form.message = error.description
        }
    }

    /// The Delete button: asks first, like `d` in the list.
    private func deleteFromForm(_ main: MainModel) {
        let form = main.form
        let key = formKey(form)
        do {
            _ = try store.items(matching: key.query, withSecrets: false)
            overlay = .confirm(ConfirmDialog(
                title: "Delete item",
                message: "Delete \(AppModel.describe(service: key.service, account: key.account))? (y/n)",
                purpose: .deleteItem(key)))
        } catch .itemNotFound {
            form.message = "No item for \(AppModel.describe(service: key.service, account: key.account))"
        } catch {
            form.message = error.description
        }
    }

    private func openSelected(_ main: MainModel) {
        guard let row = main.list.selectedRow else { main.form.message = "No item selected"; return }
        main.form.wipe()
        main.form.service.setText(row.service)
        main.form.userID.setText(row.account)
        do {
            let item = try store.item(row.key)
            main.form.retrievedKey = row.key
            main.form.retrievedID = item.account
            main.form.retrievedPassword = item.secret
            main.form.message = "Retrieved"
        } catch {
            main.form.message = error.description
        }
        main.focus = .password
    }

    private func copySelected(_ main: MainModel) {
        guard let row = main.list.selectedRow else { main.form.message = "No item selected"; return }
        do {
            let item = try store.item(row.key)
            guard let secret = item.secret else { return }
            main.form.message = "Copying \(AppModel.describe(service: row.service, account: row.account))…"
            clipboard.copy(secret)
        } catch {
            main.form.message = error.description
        }
    }

    private func askLogout(_ main: MainModel, service: String?) {
        let items: [Item]
        do { items = try LogoutWipe.sessionItems(in: store, service: service) } catch {
            main.form.message = error.description
            return
        }
        let scope = service.map { " of service \"\($0)\"" } ?? ""
        guard !items.isEmpty else {
            main.form.message = "No token or OAuth items\(scope) to delete"
            return
        }
        let count = items.count
        let shown = items.prefix(AppModel.logoutNamesShown).map { AppModel.describe(service: $0.service, account: $0.account) }
        let more = count > shown.count ? "; and \(count - shown.count) more" : ""
        overlay = .confirm(ConfirmDialog(
            title: "Logout",
            message: "Delete \(count) token/OAuth item\(count == 1 ? "" : "s")\(scope) (\(shown.joined(separator: "; "))\(more)), "
                + "clear the clipboard and lock? (y/n)",
            purpose: .logoutWipe(service: service, count: count)))
    }

    /// How many items the logout confirmation names before "and N more".
    static let logoutNamesShown = 3

    /// Appended to a message when the form's retrieved values were dropped.
    static let retrievedClearedNote = "; Retrieved ID and Password cleared"

    /// Reloads the list from the store, keeping selection and filter. When
    /// the item the form's retrieved values came from is gone, clears them.
    /// - Returns: whether the retrieved values were cleared.
    @discardableResult
    private func reloadItems() -> Bool {
        guard case .main(let main) = screen else { return false }
        knownVersion = try? store.dataVersion()
        let items: [Item]
        do { items = try store.allItems() } catch {
            main.form.message = error.description
            return false
        }
        var seen = Set<ItemKey>()
        let rows = items.map { item -> ItemRow in
            let key = ItemKey(item)
            seen.insert(key)
            return ItemRow(key: key, label: item.label ?? "", kind: item.kind, modified: item.modified,
                           expires: expiry(of: item, key: key), expiryText: nil)
        }
        expiryCache = expiryCache.filter { seen.contains($0.key) }
        main.list.replace(with: rows)
        main.list.updateExpiryTexts(now: clock.now)
        if let shown = main.form.retrievedKey, !seen.contains(shown) {
            main.form.clearRetrieved()
            return true
        }
        return false
    }

    private func expiry(of item: Item, key: ItemKey) -> Date? {
        guard item.kind.isSessionToken else { return nil }
        if let cached = expiryCache[key], cached.modified == item.modified { return cached.expires }
        let expires = (try? store.item(key)).flatMap(TokenExpiry.expiry(of:))
        expiryCache[key] = (item.modified, expires)
        return expires
    }

    // MARK: - Clipboard events

    private func drainClipboardEvents() {
        let events = clipboard.takeEvents()
        guard case .main(let main) = screen else { return }
        for event in events {
            switch event {
            case .copied(let after):
                main.form.message = after > 0 ? "Copied to the clipboard (\(clipboard.clipboard.name)); clears in \(Int(after)) s"
                                              : "Copied to the clipboard (\(clipboard.clipboard.name))"
            case .copyFailed(let error):
                main.form.message = "Copy failed: \(error)"
            case .cleared(.cleared), .cleared(.clearedUnchecked):
                main.form.message = "Clipboard cleared"
            case .cleared(.leftAlone):
                main.form.message = "Clipboard left alone: it holds other text now"
            case .cleared(.failed(let error)):
                main.form.message = "Could not clear the clipboard: \(error)"
            }
        }
    }
}

import FobAccess
import FobStore
import FobSystem
import FoundationEssentials

/// Sync conflicts on the main screen: F6 on an item with conflicting
/// versions asks which to keep, as `fob resolve` does, and the choice is
/// written in the background (``pendingResolve``).
final class ConflictDesk: ScreenPart {
    let screen: ScreenContext
    /// Where sync's conflicts are read and settled, or `nil` without sync.
    let sync: (any SyncConflictSource)?
    /// The preview, read again once a conflict is settled.
    let preview: PreviewSource
    /// The resolve running in the background and the item it settles;
    /// its message is shown at the tick after it ends.
    private(set) var pendingResolve: (key: ItemKey, job: BackgroundJob<StatusLine>)?

    init(_ screen: ScreenContext, sync: (any SyncConflictSource)?, preview: PreviewSource) {
        self.screen = screen
        self.sync = sync
        self.preview = preview
    }

    /// F6: the resolve dialog for the selected item, when it has a conflict.
    func askResolveSelected() -> Transition {
        guard let row = model.list.selectedRow else {
            model.form.message = StatusLine.noSelection
            return .stay
        }
        guard sync != nil, row.versions > 1 else {
            model.form.message = .info("No sync conflict on \(row.key.shortName)")
            return .stay
        }
        // Who wrote each version and when: the vault's may be the other device's edit.
        var local = ""
        var other = ""
        var differ = ""
        if let sources = model.sync?.sources[row.key] {
            let named = sources.described
            local = " " + named.local
            other = " " + named.other
            // What differs, never the values: Ctrl-R in the preview shows this vault's.
            if !sources.differences.isEmpty {
                differ = "They differ in: \(sources.differences.joined(separator: ", ")). "
            }
        }
        model.conflictVersions = (row.key, nil)
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Sync conflict",
                    message: "\(row.key.shortName) has \(row.versions) versions. \(differ)"
                        + "Keep this vault's\(local), or the other device's\(other)?",
                    purpose: .resolveConflict(row.key))))
    }

    /// Ctrl-R in the resolve dialog of `key`: reads and reveals the two
    /// versions' secrets, or hides (and drops) them again; a failed read
    /// is said on the status line and nothing shows.
    func toggleReveal(_ key: ItemKey) {
        guard let sync, model.conflictVersions?.key == key else { return }
        if model.conflictVersions?.secrets != nil {
            model.conflictVersions = (key, nil)
            return
        }
        do {
            model.conflictVersions = (key, try sync.secrets(of: key, store: store))
        } catch {
            model.form.message = .error("Cannot read the versions of \(key.shortName): \(error)")
        }
    }

    /// The resolve dialog closed: the versions' secrets are dropped.
    func closed() { model.conflictVersions = nil }

    /// Keeps this vault's version of `key` or the other one's conflicting
    /// parts, in the background (``BackgroundJob``; its store calls through
    /// a ``UIThreadStore``): the vault write and the local commit never hold
    /// up the UI. Its outcome is shown at the tick after it ends
    /// (``finishResolve()``); the next sync carries the choice to the other devices.
    @discardableResult
    func resolve(_ key: ItemKey, keepRemote: Bool) -> Transition {
        guard let sync else { return .stay }
        if let pending = pendingResolve {
            model.form.message = .info("Still settling \(pending.key.shortName)…")
            return .stay
        }
        let store = UIThreadStore(self.store, mailbox: mailbox)
        let which = keepRemote ? "the other device's version" : "this vault's version"
        let job = BackgroundJob<StatusLine> {
            do {
                try sync.resolve(key, keepRemote: keepRemote, store: store)
                return .success("Kept \(which) of \(key.shortName); the next sync carries it")
            } catch {
                return .error("Resolve failed: \(error)")
            }
        }
        pendingResolve = (key, job)
        model.form.message = .info("Keeping \(which) of \(key.shortName)…")
        return .stay
    }

    /// The timer step of a background resolve: once it has ended, its
    /// outcome on the Message line; settled, the item's mark goes at once
    /// (not when the overview is read again) and the list is reloaded.
    func finishResolve() {
        guard let pending = pendingResolve, let message = pending.job.finished else { return }
        pendingResolve = nil
        if message.tone != .error {
            model.sync?.versions[pending.key] = nil
            refresh.reload(model, now: clock.now)
            preview.sync()
        }
        model.form.message = message
    }
}

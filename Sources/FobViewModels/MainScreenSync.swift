import FobStore

/// Sync conflicts on the main screen: `V` on an item with conflicting
/// versions asks which to keep, as `fob resolve` does.
extension MainScreen {
    /// `V`: the resolve dialog for the selected item, when it has a conflict.
    func askResolveSelected() -> Transition {
        guard let row = model.list.selectedRow else {
            model.form.message = MainScreen.noSelection
            return .stay
        }
        guard sync != nil, row.versions > 1 else {
            model.form.message = .info("No sync conflict on \(row.key.described)")
            return .stay
        }
        // Who wrote each version and when: the vault's may be the other device's edit.
        var local = ""
        var other = ""
        if let sources = model.sync?.sources[row.key] {
            local = " " + sources.local.described
            other = " " + sources.other.described
        }
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Sync conflict",
                    message: "\(row.key.described) has \(row.versions) versions. "
                        + "Keep this vault's\(local) (y), the other device's\(other) (r), or neither (n)?",
                    purpose: .resolveConflict(row.key))))
    }

    /// Keeps this vault's version of `key` or the other one's conflicting
    /// parts, in the background (``BackgroundJob``; its store calls through
    /// a ``UIThreadStore``): the vault write and the local commit never hold
    /// up the UI. Its outcome is shown at the tick after it ends
    /// (``finishResolve()``); the next sync carries the choice to the other devices.
    @discardableResult
    func resolve(_ key: ItemKey, keepRemote: Bool) -> Transition {
        guard let sync else { return .stay }
        if let pending = pendingResolve {
            model.form.message = .info("Still settling \(pending.key.described)…")
            return .stay
        }
        let store = UIThreadStore(self.store, mailbox: mailbox)
        let which = keepRemote ? "the other device's version" : "this vault's version"
        let job = BackgroundJob<StatusLine> {
            do {
                try sync.resolve(key, keepRemote: keepRemote, store: store)
                return .success("Kept \(which) of \(key.described); the next sync carries it")
            } catch {
                return .error("Resolve failed: \(error)")
            }
        }
        pendingResolve = (key, job)
        model.form.message = .info("Keeping \(which) of \(key.described)…")
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
            reloadItems()
            syncPreview()
        }
        model.form.message = message
    }

    /// Background work that writes the store and has not ended: an `r`
    /// refresh, else a `V` resolve. A screen lock keeps the store open for
    /// it until it ends.
    var unfinishedStoreWork: BackgroundJob<StatusLine>? {
        if let job = pendingRefresh?.job, job.finished == nil { return job }
        if let job = pendingResolve?.job, job.finished == nil { return job }
        return nil
    }
}

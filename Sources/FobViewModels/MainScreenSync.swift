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
        return .show(
            .confirm(
                ConfirmDialog(
                    title: "Sync conflict",
                    message: "\(row.key.described) has \(row.versions) versions. "
                        + "Keep this vault's (y), the other device's (r), or neither (n)?",
                    purpose: .resolveConflict(row.key))))
    }

    /// Keeps this vault's version of `key` or the other one; the next sync
    /// carries the choice to the other devices.
    @discardableResult
    func resolve(_ key: ItemKey, keepRemote: Bool) -> Transition {
        guard let sync else { return .stay }
        do {
            try sync.resolve(key, keepRemote: keepRemote)
        } catch {
            model.form.message = .error("Resolve failed: \(error)")
            return .stay
        }
        // Settled: its mark goes now, not when the overview is read again.
        model.sync?.versions[key] = nil
        reloadItems()
        syncPreview()
        let which = keepRemote ? "the other device's version" : "this vault's version"
        model.form.message = .success("Kept \(which) of \(key.described); the next sync carries it")
        return .stay
    }
}

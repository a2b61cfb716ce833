import FobAccess
import FobStore
import FobSystem
import FoundationEssentials

/// Reads the highlighted item for its preview (``MainModel/preview``):
/// again when the selection moves, the item changes or its one-time code
/// rolls over; Ctrl-R reads its secret only to show it.
final class PreviewSource {
    let model: MainModel
    let store: any KeychainStore
    let clock: any WallClock

    init(model: MainModel, store: any KeychainStore, clock: any WallClock) {
        self.model = model
        self.store = store
        self.clock = clock
    }

    /// Brings the preview in step with the highlighted row: read again when
    /// the selection moved, the item changed, or its one-time code did.
    /// Moving to another item hides what Ctrl-R revealed.
    func sync() {
        // The preview shows only while browsing: the editor takes its place.
        guard model.focus == .list || model.focus == .filter else { return }
        let row = model.list.selectedRow
        let now = clock.now
        // A write moves the revision on even within one tick of the clock.
        if let preview = model.preview, let row, preview.key == row.key, preview.modified == row.modified,
            preview.revision == row.revision, !preview.isStale(at: now)
        {
            return
        }
        let revealed = model.preview?.key == row?.key && (model.preview?.revealed ?? false)
        loadPreview(revealed: revealed)
    }

    /// Ctrl-R on the list: shows or hides the secret and hidden fields of
    /// the preview, reading them from the store only to show them.
    func toggleReveal() {
        guard model.list.selectedRow != nil else {
            model.form.message = StatusLine.noSelection
            return
        }
        loadPreview(revealed: !(model.preview?.revealed ?? false))
    }

    /// Reads the highlighted item and builds its preview.
    private func loadPreview(revealed: Bool) {
        guard let row = model.list.selectedRow else {
            model.preview = nil
            return
        }
        do {
            model.preview = ItemPreview(item: try store.item(row.key), now: clock.now, revealed: revealed)
        } catch {
            model.preview = nil
        }
    }
}

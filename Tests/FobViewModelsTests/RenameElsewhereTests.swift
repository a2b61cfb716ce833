import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// Another process renames the item the list highlights or the editor has
/// open: the UI follows it to its new name instead of saying it was deleted.
@Suite struct RenameElsewhereTests {
    static let old = ItemKey(service: "mail", account: "ana")
    static let new = ItemKey(service: "post", account: "ana")

    /// A harness on three items with `mail / ana` highlighted.
    static func start() throws -> Harness {
        let h = try Harness.unlocked(items: [item("aaa", "x"), item("mail", "ana", "hunter2"), item("zzz", "y")])
        h.send(.moveSelection(1))
        #expect(h.list.selectedRow?.key == Self.old)
        return h
    }

    /// The highlight stays on the renamed item, under its new name.
    @Test func theHighlightFollowsARenameElsewhere() throws {
        let h = try Self.start()
        // Past `zzz`: the row under the highlight's old place is another item.
        let last = ItemKey(service: "zzzz", account: "ana")
        h.store.externalRename(Self.old, to: last)
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.list.selectedRow?.key == last)
    }

    /// The editor open on the item, nothing typed: it shows the item under
    /// its new name, its secret kept, and says it was renamed.
    @Test func anUntouchedEditorFollowsARenameElsewhere() throws {
        let h = try Self.start()
        h.send(.openSelected)
        h.store.externalRename(Self.old, to: Self.new)
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.form.openedKey == Self.new)
        #expect(h.form.service.text == "post")
        #expect(h.form.retrievedPassword?.unsafeString == "hunter2")
        #expect(!h.message.contains("Deleted"), "\(h.message)")
        #expect(h.message.hasPrefix("Renamed elsewhere: mail / ana is now post / ana"), "\(h.message)")
        #expect(h.list.selectedRow?.key == Self.new)
        #expect(!h.form.hasUnsavedEdits)
    }

    /// With unsaved edits the edits stay, the name follows, and Save asks
    /// before writing over the renamed item (it never adds a second one).
    @Test func anEditedEditorKeepsItsEditsAndSaveAsks() throws {
        let h = try Self.start()
        h.send(.openSelected, .focus(.label), .insert("work"))
        h.store.externalRename(Self.old, to: Self.new)
        h.clock.advance(by: 1)
        h.app.tick()
        #expect(h.form.openedKey == Self.new)
        #expect(h.form.service.text == "post")
        #expect(h.form.label.text == "work")
        #expect(h.form.message.tone == .warning)
        #expect(h.message.hasPrefix("Renamed elsewhere: mail / ana is now post / ana"), "\(h.message)")
        h.send(.save)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question: \(h.message)")
            return
        }
        #expect(dialog.purpose == .saveOverChanges)
        #expect(
            dialog.message.hasPrefix("Another process changed the service / user ID (it was mail / ana) of post / ana"),
            "\(dialog.message)")
        h.send(.confirm)
        #expect(h.store.storedItems.count == 3)
        #expect(h.store.storedItems[Self.new]?.label == "work")
        #expect(h.store.storedItems[Self.old] == nil)
    }
}

import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// Another process deletes or changes the item the editor opened: the
/// editor never says Editing an item that is gone, keeps what was typed,
/// and a message speaks of the editor only while it is open.
@Suite struct EditorDeletedElsewhereTests {
    static let zoom = ItemKey(service: "zoom.us", account: "dan")

    /// A harness with the editor open on `zoom.us / dan`.
    static func editingZoom() throws -> Harness {
        let h = try Harness.unlocked(items: [item("github.com", "ana"), item("zoom.us", "dan", "pw")])
        h.send(.moveSelection(1))
        #expect(h.list.selectedRow?.key == Self.zoom)
        h.send(.openSelected)
        #expect(h.form.editorTitle == "Editing zoom.us / dan")
        return h
    }

    /// Another process's change, seen at the next tick.
    static func elsewhere(_ h: Harness, _ change: () -> Void) {
        change()
        h.clock.advance(by: 1)
        h.app.tick()
    }

    /// Deleted elsewhere with nothing typed: the form is emptied, and the
    /// title no longer names the item.
    @Test func anUntouchedEditorIsEmptied() throws {
        let h = try Self.editingZoom()
        Self.elsewhere(h) { h.store.externalRemove(Self.zoom) }
        #expect(h.form.editorTitle == "New item")
        #expect([h.form.service.text, h.form.userID.text, h.form.label.text] == ["", "", ""])
        #expect(h.form.baseline == nil)
        #expect(h.form.message == .warning("Deleted elsewhere: zoom.us / dan; the form is emptied"))
    }

    /// Deleted elsewhere with edits typed: nothing typed is lost; they stay
    /// as a new item's draft, titled so, and Save adds it.
    @Test func anEditedEditorKeepsItsEditsAsANewItem() throws {
        let h = try Self.editingZoom()
        h.send(.focus(.label), .insert("work"))
        Self.elsewhere(h) { h.store.externalRemove(Self.zoom) }
        #expect(h.form.editorTitle == "● New item (from deleted zoom.us / dan)")
        #expect([h.form.service.text, h.form.userID.text, h.form.label.text] == ["zoom.us", "dan", "work"])
        #expect(h.form.baseline == nil)
        #expect(
            h.form.message
                == .warning(
                    "Deleted elsewhere: zoom.us / dan; your edits are kept, Save adds them as a new item (no password yet)"
                ))
        h.send(.focus(.password), .insert("fresh"), .save)
        #expect(h.form.message == .success("Saved (new item)"))
        #expect(h.store.storedItems[Self.zoom]?.label == "work")
        #expect(h.store.storedItems[Self.zoom]?.secret?.unsafeString == "fresh")
        #expect(h.form.editorTitle == "Editing zoom.us / dan")
    }

    /// Save finds the item gone before the list did: the same draft, the
    /// same title and message.
    @Test func saveOnAnItemDeletedElsewhereKeepsTheEditsAsANewItem() throws {
        let h = try Self.editingZoom()
        h.send(.focus(.label), .insert("work"), .focus(.password), .insert("fresh"))
        h.store.externalRemove(Self.zoom)
        h.send(.save)
        #expect(h.store.storedItems[Self.zoom] == nil)
        #expect(h.form.editorTitle == "● New item (from deleted zoom.us / dan)")
        #expect(
            h.form.message
                == .warning("Deleted elsewhere: zoom.us / dan; your edits are kept, Save adds them as a new item"))
        h.send(.save)
        #expect(h.store.storedItems[Self.zoom]?.label == "work")
        #expect(h.form.editorTitle == "Editing zoom.us / dan")
    }

    /// With the editor closed (focus back in the list), a change elsewhere
    /// is not said to be shown by the editor; opened again, it shows it.
    @Test func aClosedEditorIsNotSaidToShowAChange() throws {
        let h = try Self.editingZoom()
        h.send(.cancel)
        #expect(h.main.focus == .list)
        let before = h.form.message
        Self.elsewhere(h) { h.store.externalPut(item("zoom.us", "dan", "new", label: "moved")) }
        #expect(h.form.message == before)
        h.send(.openSelected)
        #expect(h.form.label.text == "moved")
    }

    /// With the editor closed, a rename elsewhere is told without saying
    /// the editor shows it.
    @Test func aClosedEditorIsNotSaidToShowARename() throws {
        let h = try Self.editingZoom()
        h.send(.cancel)
        let moved = ItemKey(service: "zoom.com", account: "dan")
        Self.elsewhere(h) { h.store.externalRename(Self.zoom, to: moved) }
        #expect(h.form.message == .info("Renamed elsewhere: zoom.us / dan is now zoom.com / dan"))
    }

    /// With the editor closed and nothing typed, a delete elsewhere empties
    /// the form and the line says what the list's reload found.
    @Test func aClosedEditorIsNotSaidToBeEmptied() throws {
        let h = try Self.editingZoom()
        h.send(.cancel)
        Self.elsewhere(h) { h.store.externalRemove(Self.zoom) }
        #expect(h.form.baseline == nil)
        #expect(h.form.message == .warning("Deleted elsewhere: zoom.us / dan; Retrieved ID and Password cleared"))
    }

    /// With the editor open, a change elsewhere is said to be shown by it.
    @Test func anOpenEditorSaysItShowsARename() throws {
        let h = try Self.editingZoom()
        let moved = ItemKey(service: "zoom.com", account: "dan")
        Self.elsewhere(h) { h.store.externalRename(Self.zoom, to: moved) }
        #expect(h.form.message == .info("Renamed elsewhere: zoom.us / dan is now zoom.com / dan; the editor shows it"))
    }
}

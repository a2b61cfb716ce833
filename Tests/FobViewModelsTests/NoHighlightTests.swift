import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

/// With no highlighted item (a query with no match) no key opens or acts on
/// an item, though the form still holds the item edited before: the
/// highlighted item is the one acted on, and the editor never opens on
/// another.
@Suite struct NoHighlightTests {
    static let github = ItemKey(service: "github.com", account: "ana-dev")

    /// Four items; github.com edited, Esc back to the list, then `zzzq`
    /// typed so that nothing matches.
    static func noMatchAfterAnEdit() throws -> Harness {
        let h = try Harness.unlocked(items: [
            item("dropbox.com", "ana@example.com"), item("github.com", "ana-dev", "gh-pass"),
            item("netflix.com", "family@example.com"), item("zoom.us", "ana"),
        ])
        h.send(.moveSelection(1), .editSelected)
        #expect(h.form.editorTitle == "Editing github.com / ana-dev")
        h.send(.cancel, .insert("zzzq"))
        #expect(h.main.focus == .list)
        #expect(h.list.rows.isEmpty && h.list.selectedRow == nil)
        return h
    }

    /// Nothing changed: focus on `focus`, no dialog, the store as it was,
    /// the status line saying nothing is selected.
    static func expectNothingActedOn(_ h: Harness, focus: MainFocus = .list) {
        #expect(h.main.focus == focus)
        #expect(h.app.overlay == nil)
        #expect(h.form.message == .warning("No item selected"))
        #expect(Set(h.store.storedItems.keys).contains(Self.github))
        #expect(h.store.storedItems.count == 4)
    }

    /// The sequence that renamed github.com: Tab, a new Service, Ctrl-S.
    /// Tab opens nothing, so the typing goes to the query and Save renames nothing.
    @Test func tabOpensNothingAndSaveRenamesNothing() throws {
        let h = try Self.noMatchAfterAnEdit()
        h.send(.editSelected)
        Self.expectNothingActedOn(h)
        h.send(.focusNext)
        Self.expectNothingActedOn(h)
        h.send(.insert("gitlab.com"))
        #expect(h.list.filter.text == "zzzqgitlab.com")
        h.send(.save)
        #expect(h.main.focus == .list)
        #expect(h.store.storedItems[Self.github]?.service == "github.com")
        #expect(h.store.storedItems.count == 4)
    }

    /// With no item opened before, Tab with no match goes to an empty
    /// editor, as on an empty list: it acts on no item.
    @Test func tabWithNoMatchAndNoItemOpenedGoesToAnEmptyEditor() throws {
        let h = try Harness.unlocked(items: [item("github.com", "ana-dev")])
        h.send(.insert("zzzq"), .focusNext)
        #expect(h.main.focus == .service)
        #expect(h.form.editorTitle == "New item")
        #expect(h.form.service.text.isEmpty)
    }

    /// Shift-Tab, and Tab from the query selected by Ctrl-F, open nothing either.
    @Test func shiftTabAndTabFromTheQueryOpenNothing() throws {
        let h = try Self.noMatchAfterAnEdit()
        h.send(.focusPrevious)
        Self.expectNothingActedOn(h)
        h.send(.startFilter)
        #expect(h.main.focus == .filter)
        h.send(.focusNext)
        Self.expectNothingActedOn(h, focus: .filter)
        h.send(.focusPrevious)
        Self.expectNothingActedOn(h, focus: .filter)
    }

    /// Every list key that acts on the highlighted item: nothing opened,
    /// copied, deleted, refreshed or resolved.
    @Test(arguments: [
        Action.submit, .openSelected, .editSelected, .copySelected, .copyUserID, .copyOneTimeCode, .askDeleteSelected,
        .deleteSelected, .refreshSelected, .resolveSelected, .toggleReveal,
    ])
    func listKeysActOnNothing(action: Action) throws {
        let h = try Self.noMatchAfterAnEdit()
        h.send(action)
        Self.expectNothingActedOn(h)
        #expect(h.clipboard.calls.isEmpty)
    }

    /// A click where no row is drawn selects nothing and opens nothing.
    @Test func aClickOpensNothing() throws {
        let h = try Self.noMatchAfterAnEdit()
        h.send(.selectRow(0))
        #expect(h.main.focus == .list)
        #expect(h.list.selectedRow == nil)
        #expect(h.app.overlay == nil)
    }

    /// The generator dialog opened from the list keeps its settings on
    /// Enter but fills no Password and opens no editor.
    @Test func generatorFromTheListOpensNothing() throws {
        let h = try Self.noMatchAfterAnEdit()
        h.send(.openGenerator)
        #expect(h.app.overlay == .generator)
        h.send(.submit)
        #expect(h.app.overlay == nil)
        #expect(h.main.focus == .list)
        #expect(h.form.password.isEmpty)
        #expect(
            h.form.message == .info("Generator settings kept; Ctrl-G in an item's Password field uses them"))
    }
}

import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobViewModels

/// Ctrl-Y in the editor undid the newest change of any item: after a delete
/// of zoom.us and mail opened in the editor, it brought zoom.us back, the
/// list highlighting zoom.us while the editor stayed on mail. In the editor
/// it undoes only a Save of the item the editor shows.
@Suite struct EditorUndoTests {
    private let mail = ItemKey(service: "mail", account: "ana")
    private let zoom = ItemKey(service: "zoom.us", account: "bo")

    @Test func anotherItemsDeleteIsLeftForTheList() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        h.send(.selectRow(1), .deleteSelected)
        #expect(h.store.storedItems[zoom] == nil)
        h.send(.selectRow(0), .editSelected)
        #expect(h.form.editorTitle == "Editing mail / ana")
        h.send(.undo)
        #expect(
            h.message
                == "Nothing undone here: the last change is the delete of zoom.us / bo; Esc, then Ctrl-Y undoes it")
        #expect(h.store.storedItems[zoom] == nil)
        #expect(h.main.list.selectedRow?.key == mail)
        #expect(h.form.editorTitle == "Editing mail / ana")
        #expect(h.main.focus == .service)
        // The delete stays undoable from the list.
        h.send(.cancel, .undo)
        #expect(h.message == "Restored zoom.us / bo")
        #expect(h.store.storedItems[zoom] != nil)
    }

    @Test func anotherItemsSaveIsLeftForTheList() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        h.send(.selectRow(1), .editSelected, .focus(.password), .insert("new"), .save)
        h.send(.cancel, .selectRow(0), .editSelected, .undo)
        #expect(
            h.message
                == "Nothing undone here: the last change is the Save of zoom.us / bo; Esc, then Ctrl-Y undoes it")
        #expect(h.store.storedItems[zoom]?.secret == SecretBytes(utf8: "new"))
        #expect(h.main.list.selectedRow?.key == mail)
        #expect(h.form.editorTitle == "Editing mail / ana")
    }

    @Test func aNewItemsEditorUndoesNothing() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw")])
        h.send(.deleteSelected, .newItem, .undo)
        #expect(
            h.message
                == "Nothing undone here: the last change is the delete of mail / ana; Esc, then Ctrl-Y undoes it")
        #expect(h.store.storedItems.isEmpty)
    }

    @Test func theSaveOfTheItemShownIsUndoneThere() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "old"), item("zoom.us", "bo", "z")])
        h.send(.selectRow(0), .editSelected, .focus(.password), .insert("new"), .save, .undo)
        #expect(h.message == "Undid the Save of mail / ana")
        #expect(h.store.storedItems[mail]?.secret == SecretBytes(utf8: "old"))
        #expect(h.main.list.selectedRow?.key == mail)
        #expect(h.form.editorTitle == "Editing mail / ana")
        #expect(h.main.focus == .password)
    }

    @Test func aRenameIsUndoneThereAndTheListFollows() throws {
        let h = try Harness.unlocked(items: [item("mail", "ana", "pw"), item("zoom.us", "bo", "z")])
        h.send(.selectRow(0), .editSelected, .clearField, .insert("post"), .save)
        let post = ItemKey(service: "post", account: "ana")
        #expect(h.main.list.selectedRow?.key == post)
        h.send(.undo)
        #expect(h.message == "Undid the rename: mail / ana again")
        #expect(h.store.storedItems[post] == nil)
        #expect(h.main.list.selectedRow?.key == mail)
        #expect(h.form.editorTitle == "Editing mail / ana")
    }
}

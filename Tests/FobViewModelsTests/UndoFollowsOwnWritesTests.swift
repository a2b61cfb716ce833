import FobStore
import FobTestSupport
import Foundation
import Testing

@testable import FobViewModels

/// Two Saves of one item and two undos: the second undo asked about a
/// change "elsewhere" that was this editor's own undo. An undo that puts
/// back exactly the state an earlier Save left moves that Save's entry on
/// to the revision it wrote; a write by another process still asks.
@Suite struct UndoFollowsOwnWritesTests {
    static let netflix = ItemKey(service: "netflix.com", account: "family@example.com")

    /// netflix.com opened; Label set and saved (Save 1), URL set and saved (Save 2).
    static func twoSaves() throws -> Harness {
        let h = try Harness.unlocked(items: [item("netflix.com", "family@example.com", "pw")])
        h.send(.editSelected, .focus(.label), .insert("Family"), .save)
        h.send(.focus(.url), .insert("https://netflix.com"), .save)
        let stored = try #require(h.store.storedItems[Self.netflix])
        #expect(stored.label == "Family" && stored.url == "https://netflix.com")
        return h
    }

    @Test func twoUndosOfTwoSavesAskNothing() throws {
        let h = try Self.twoSaves()
        h.send(.undo)
        #expect(h.message == "Undid the Save of netflix.com / family@example.com")
        #expect(h.store.storedItems[Self.netflix]?.url == nil)
        h.send(.undo)
        #expect(h.app.overlay == nil)
        #expect(h.message == "Undid the Save of netflix.com / family@example.com")
        let stored = try #require(h.store.storedItems[Self.netflix])
        #expect(stored.label == nil && stored.url == nil)
        #expect(stored.secret == SecretBytes(utf8: "pw"))
    }

    @Test func anotherProcessesWriteBetweenStillAsks() throws {
        let h = try Self.twoSaves()
        h.send(.undo)
        var changed = try #require(h.store.storedItems[Self.netflix])
        changed.notes = "shared"
        h.store.externalPut(changed)
        h.send(.undo)
        guard case .confirm(let dialog) = h.app.overlay else {
            Issue.record("no question")
            return
        }
        #expect(dialog.purpose == .undoOverChanges)
        #expect(h.store.storedItems[Self.netflix]?.label == "Family")
    }

    /// An undone delete puts the item back at the next revision: the Save
    /// before it stays undoable without a question.
    @Test func anUndoneDeleteKeepsTheSaveBeforeItUndoable() throws {
        let h = try Harness.unlocked(items: [item("netflix.com", "family@example.com", "pw")])
        h.send(.editSelected, .focus(.label), .insert("Family"), .save, .cancel, .deleteSelected)
        #expect(h.store.storedItems[Self.netflix] == nil)
        h.send(.undo)
        #expect(h.store.storedItems[Self.netflix]?.label == "Family")
        h.send(.undo)
        #expect(h.app.overlay == nil)
        #expect(h.message == "Undid the Save of netflix.com / family@example.com")
        #expect(h.store.storedItems[Self.netflix]?.label == nil)
    }
}

import FobClipboard
import FobStore
import FobTestSupport
import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// Every button of every confirmation dialog shows whole at 80 × 24 and at
/// 40 × 12, however long the question: a cut button (`[ Esc Keep editi…`)
/// hides the key that answers it.
@Suite struct DialogFitTests {
    static let sizes = [(rows: 24, columns: 80), (rows: 12, columns: 40)]
    static let key = ItemKey(service: "mail.example.com", account: "ana@example.com")

    /// One dialog of each purpose, with a question as long as the app asks.
    static let dialogs: [ConfirmDialog.Purpose] = [
        .deleteItem(key), .saveEmptySecret, .saveOverChanges, .leaveEditor(then: .list),
        .leaveEditor(then: .quit), .resolveConflict(key), .lock, .quitLeavingUnlocked, .undoOverChanges,
    ]

    static let longQuestion =
        "Another process changed the password, the label and the notes of mail.example.com / ana@example.com "
        + "since you opened it. Write your edits over it, reload it as stored now, or keep editing?"

    @Test(arguments: dialogs)
    func everyButtonShowsWhole(purpose: ConfirmDialog.Purpose) throws {
        try #require(unicodeLocale)
        for question in ["Sure?", Self.longQuestion] {
            let dialog = ConfirmDialog(title: "Changed elsewhere", message: question, purpose: purpose)
            let versions = (local: ItemPreview.mask, other: ItemPreview.mask)
            for (rows, columns) in Self.sizes {
                var canvas = Canvas(rows: rows, columns: columns, glyphs: .unicodeSet)
                let renderer = Renderer(vaultDescription: "~/vault.db")
                renderer.drawConfirm(&canvas, dialog, versions: versions)
                for answer in dialog.answers {
                    #expect(
                        canvas.text.contains("[ \(answer) ]"),
                        "\(columns)x\(rows): [ \(answer) ] cut or missing\n\(canvas.text)")
                }
                // The question starts on screen, in the box.
                #expect(canvas.text.contains(String(question.prefix(12))), "\(columns)x\(rows)\n\(canvas.text)")
            }
        }
    }

    /// The dialog a Save over another process's change opens, drawn by the
    /// whole renderer as the app shows it (the header and legend around it).
    @Test func changedElsewhereKeepsItsButtonsAtEverySize() throws {
        try #require(unicodeLocale)
        let (app, store, _) = makeTestApp(items: [("github.com", "ana", "old")])
        app.send(.editSelected)
        app.send(.focus(.password))
        app.send(.insert("x"))
        store.externalPut(Item(service: "github.com", account: "ana", secret: SecretBytes(utf8: "theirs")))
        app.send(.save)
        guard case .confirm(let dialog) = app.overlay else {
            Issue.record("no question: \(String(describing: app.overlay))")
            return
        }
        #expect(dialog.purpose == .saveOverChanges)
        for (rows, columns) in Self.sizes {
            let text = draw(app, rows: rows, columns: columns).text
            for answer in ["[ Enter Write over ]", "[ Ctrl-D Reload ]", "[ Esc Keep editing ]"] {
                #expect(text.contains(answer), "\(columns)x\(rows): \(answer)\n\(text)")
            }
        }
    }
}

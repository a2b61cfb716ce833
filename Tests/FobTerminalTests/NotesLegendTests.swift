import FobViewModels
import Foundation
import Testing

@testable import FobTerminal

/// The legend in Notes said "Enter next … Ctrl-G generate", though Enter
/// breaks the line there and Ctrl-G only says to Tab to Password: it says
/// what the keys do in Notes, and the other fields keep theirs.
@Suite struct NotesLegendTests {
    private func press(_ key: Key, _ app: AppModel) {
        if let action = KeyMap.action(for: key, in: app) { app.send(action) }
    }

    @Test func notesSaysEnterBreaksTheLineAndTabLeaves() throws {
        let (app, _, _) = makeTestApp(items: [("dropbox", "ana", "Dr0p-pass")])
        press(.control("e"), app)
        app.send(.focus(.notes))
        #expect(
            KeyBindings.legend(for: app)
                == "Tab/S-Tab leave  Enter new line  Ctrl-S save  Ctrl-R reveal retrieved  Ctrl-U clear  Esc list  "
                + "F1 help  Ctrl-Q quit")
        app.send(.focus(.label))
        #expect(
            KeyBindings.legend(for: app)
                == "Tab/S-Tab move  Enter next  Ctrl-S save  Ctrl-R reveal retrieved  Ctrl-U clear  "
                + "Esc list  F1 help  Ctrl-Q quit")
        // Ctrl-G is offered only where it fills something: the Password field.
        app.send(.focus(.password))
        #expect(
            KeyBindings.legend(for: app)
                == "Tab/S-Tab move  Enter next  Ctrl-S save  Ctrl-G generate  Ctrl-R reveal retrieved  Ctrl-U clear  "
                + "Esc list  F1 help  Ctrl-Q quit")
    }
}

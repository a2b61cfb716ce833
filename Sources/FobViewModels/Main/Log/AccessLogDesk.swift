import FobAccess
import FobStore
import FoundationEssentials

/// The access log view as the screen shows it (``Overlay/accessLog``):
/// the entries (``AccessLogView``), the query typed to narrow them, and
/// whether the selected entry's details (its program's parents, terminal,
/// unit, the rule that settled it) show.
public final class AccessLogScreen {
    /// The entries, newest first, filtered by ``query``.
    public internal(set) var view: AccessLogView
    /// The query: every printable key goes here, as in the item list.
    public let query = TextFieldState(maxBytes: 1024)
    /// Whether the selected entry's details show (Enter).
    public internal(set) var showsDetails = false

    init(view: AccessLogView) { self.view = view }

    /// The selected entry's details, one fact a line, or empty with none selected.
    public var details: [String] { view.selected.map { AccessLogView.details($0) } ?? [] }
}

/// Opens the vault's access log through the store (the agent's
/// ``FobAgent/AgentRequest/accessLog(_:)`` while it holds the vault) and
/// takes the log view's keys: typing narrows, Up/Down and the page keys
/// move, Enter shows or hides the selected entry's details, Esc clears the
/// query and then closes, F4 closes.
final class AccessLogDesk {
    let model: MainModel
    let store: any KeychainStore

    init(model: MainModel, store: any KeychainStore) {
        self.model = model
        self.store = store
    }

    /// F4: reads the log and shows it; a store that cannot says why on the status line.
    func open() -> Transition {
        do {
            let answer = try store.accessLog(AccessLogFilter())
            model.accessLog = AccessLogScreen(view: AccessLogView(answer: answer))
            return .show(.accessLog)
        } catch {
            model.form.message = .error("Access log: \(error.description)")
            return .stay
        }
    }

    /// One action while the log shows.
    /// - Returns: whether the log stays open.
    func handle(_ action: Action) -> Bool {
        guard let screen = model.accessLog else { return false }
        switch action {
        case .insert, .deleteBackward, .deleteForward, .moveCursor, .clearField:
            if screen.query.apply(action) { screen.view.filter.text = screen.query.text }
        case .moveSelection(let step): screen.view.move(by: step)
        case .submit: screen.showsDetails.toggle()
        case .cancel where !screen.query.isEmpty:
            screen.query.clear()
            screen.view.filter.text = ""
        case .cancel, .dismiss, .showAccessLog:
            close()
            return false
        default: break
        }
        return true
    }

    /// Drops the entries read.
    func close() { model.accessLog = nil }
}

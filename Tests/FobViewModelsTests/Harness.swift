import Foundation
import FobStore
import FobTestSupport
import FobTokens
import FobViewModels
import Testing

/// An app model over a fake store, a fake clipboard and a test clock.
final class Harness {
    let store: InMemoryStore
    let clipboard: FakeClipboard
    let clock: TestClock
    let controller: ClipboardController
    let app: AppModel

    static let password = "correct horse"

    /// - Parameters:
    ///   - vault: whether a vault exists (with ``password``).
    ///   - items: items stored before start.
    init(vault: Bool = true, items: [Item] = [], lockAfter: TimeInterval = 300, clearAfter: TimeInterval = 45,
         canReadBack: Bool = true) {
        clock = TestClock()
        let clock = self.clock
        store = InMemoryStore(password: vault ? Harness.password : nil, now: { clock.now })
        for item in items { store.externalPut(item) }
        clipboard = FakeClipboard(canReadBack: canReadBack)
        controller = ClipboardController(clipboard: clipboard, clearAfter: clearAfter, clock: clock, runner: InlineRunner())
        app = AppModel(store: store, clipboard: controller, clock: clock, lockAfter: lockAfter)
    }

    /// Types the master password and presses Enter.
    func unlock(_ password: String = Harness.password) {
        app.send(.insert(password))
        app.send(.submit)
    }

    /// A harness already on the main screen.
    static func unlocked(items: [Item] = [], lockAfter: TimeInterval = 300, clearAfter: TimeInterval = 45,
                         canReadBack: Bool = true) throws -> Harness {
        let h = Harness(items: items, lockAfter: lockAfter, clearAfter: clearAfter, canReadBack: canReadBack)
        h.unlock()
        _ = try #require(h.app.mainModel)
        return h
    }

    var main: MainModel { app.mainModel! }
    var form: HomeFormModel { main.form }
    var list: ItemListModel { main.list }
    var message: String { form.message }

    /// Sends each action in order.
    func send(_ actions: Action...) { for a in actions { app.send(a) } }
}

/// A password item.
func item(_ service: String, _ account: String, _ secret: String = "s3cret", kind: ItemKind = .password,
          label: String? = nil, modified: Date = Date(timeIntervalSince1970: 1_767_000_000)) -> Item {
    Item(service: service, account: account, label: label, kind: kind, created: modified, modified: modified,
         secret: SecretBytes(utf8: secret))
}

/// An `oauth` item holding a token set that expires at `expiresAt` (seconds since 1970).
func oauthItem(_ service: String, _ account: String, expiresAt: TimeInterval) -> Item {
    let set = OAuthTokenSet(accessToken: "opaque", refreshToken: "rt", expiresAt: Date(timeIntervalSince1970: expiresAt),
                            tokenEndpoint: URL(string: "https://idp.example/token")!, clientID: "fob")
    return Item(service: service, account: account, kind: .oauth, secret: SecretBytes(set.encoded()))
}

/// A compact JWT with the given `exp` (unsigned; the signature part is arbitrary).
func jwt(exp: Any) -> String {
    func b64(_ s: String) -> String {
        Data(s.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
    let expJSON: String
    if let text = exp as? String { expJSON = "\"\(text)\"" } else { expJSON = "\(exp)" }
    return b64(#"{"alg":"HS256","typ":"JWT"}"#) + "." + b64(#"{"sub":"ana","exp":\#(expJSON)}"#) + ".c2ln"
}

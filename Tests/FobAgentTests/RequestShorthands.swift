import FobAgent
import FobStore

extension AgentRequest {
    /// `fob get`'s request: the generic password with this service and account, with its secret.
    static func get(service: String, account: String) -> AgentRequest {
        .get(.key(service: service, account: account), limitOne: true, detail: .secret)
    }
}

extension AgentResponse {
    /// The one item of a `.get` answer.
    var onlyItem: Item? {
        guard case .items(let items) = self, items.count == 1 else { return nil }
        return items[0]
    }
}

import FobAgent
import FobStore
import FobTestSupport
import Testing

/// The `agent-request` fuzz corpus through what the fuzz target calls: no
/// input traps, and the seed of each verb of this version (`v4-NAME`, a
/// frame's payload) decodes as that verb.
@Suite struct AgentFuzzCorpusTests {
    @Test func corpusInputs() {
        let inputs = Dictionary(FuzzCorpus.inputs("agent-request").map { ($0.name, $0.bytes) }) { a, _ in a }
        for bytes in inputs.values {
            _ = try? bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            _ = try? bytes.withUnsafeBytes { try AgentResponse.decode($0, withSecrets: true) }
        }
        for verb in ["status", "lock", "subscribe", "get", "list", "add", "save", "update", "delete", "import"] {
            let bytes = inputs["v4-" + verb] ?? []
            let request = try? bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            #expect(request.map { "\($0)".hasPrefix(verb == "import" ? "applyImport" : verb) } == true, "v4-\(verb)")
        }
        let event = try? (inputs["v4-event"] ?? []).withUnsafeBytes { try AgentResponse.decode($0) }
        guard case .event(let decoded)? = event else {
            Issue.record("v4-event")
            return
        }
        #expect(decoded == AgentEvent(kind: .changed, key: ItemKey(service: "s", account: "a"), revision: 7))
    }
}

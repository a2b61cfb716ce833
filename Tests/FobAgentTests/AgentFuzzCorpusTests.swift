import FobAgent
import FobStore
import FobTestSupport
import Foundation
import Testing

/// The `agent-request` fuzz corpus through what the fuzz target calls: no
/// input traps, and the seed of each verb of this version (`v5-NAME`, a
/// frame's payload) decodes as that verb; the answers of this version
/// (events of each shape, a write's answer) decode as what they hold.
@Suite struct AgentFuzzCorpusTests {
    private let inputs = Dictionary(FuzzCorpus.inputs("agent-request").map { ($0.name, $0.bytes) }) { a, _ in a }

    private func response(_ name: String) -> AgentResponse? {
        try? (inputs[name] ?? []).withUnsafeBytes { try AgentResponse.decode($0) }
    }

    @Test func corpusInputs() {
        for bytes in inputs.values {
            _ = try? bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            _ = try? bytes.withUnsafeBytes { try AgentResponse.decode($0, withSecrets: true) }
        }
        let verbs = [
            "status", "lock", "subscribe", "get", "list", "add", "save", "update", "delete", "import", "get-items",
        ]
        for verb in verbs {
            let bytes = inputs["v5-" + verb] ?? []
            let request = try? bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            let name = ["import": "applyImport", "get-items": "getItems"][verb] ?? verb
            #expect(request.map { "\($0)".hasPrefix(name) } == true, "v5-\(verb)")
        }
    }

    /// A seed of the last version is refused as another version, by name.
    @Test func aSeedOfVersion4IsAVersionMismatch() {
        let bytes = inputs["v4-get"] ?? []
        #expect(throws: AgentProtocolError.versionMismatch(4)) {
            try bytes.withUnsafeBytes { try AgentRequest.decode($0) }
        }
    }

    @Test func eventSeedsDecode() throws {
        let id = try #require(UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF"))
        guard case .event(let renamed)? = response("v5-event") else {
            Issue.record("v5-event")
            return
        }
        #expect(
            renamed
                == AgentEvent(
                    kind: .renamed, key: ItemKey(service: "s", account: "a"), revision: 7, id: id,
                    oldKey: ItemKey(service: "s", account: "old")))
        guard case .event(let added)? = response("v5-event-added") else {
            Issue.record("v5-event-added")
            return
        }
        #expect(added.kind == .added && added.id == id && added.summary != nil && added.summary?.secret == nil)
        guard case .event(let locked)? = response("v5-event-locked") else {
            Issue.record("v5-event-locked")
            return
        }
        #expect(locked == AgentEvent(kind: .locked, key: nil))
        guard case .written(let count, let changes)? = response("v5-written") else {
            Issue.record("v5-written")
            return
        }
        #expect(count == 2)
        #expect(changes == [added, renamed])
    }
}

import FobAgent
import FobTestSupport
import Foundation
import Testing

@testable import FobStore

/// The `agent-request` fuzz corpus through what the fuzz target calls: no
/// input traps; the corpus holds this version's seeds (``AgentFuzzSeeds``,
/// `v6-NAME`, a frame's payload), each request seed decodes as its verb and
/// each answer seed as what it holds (events of each kind, the question and
/// settled events with their prompt, a write's answer, the access log's
/// answer); a seed of an older version is refused as that version.
@Suite struct AgentFuzzCorpusTests {
    private let inputs = Dictionary(FuzzCorpus.inputs("agent-request").map { ($0.name, $0.bytes) }) { a, _ in a }

    private func response(_ name: String) -> AgentResponse? {
        try? (inputs[AgentFuzzSeeds.prefix + name] ?? []).withUnsafeBytes { try AgentResponse.decode($0) }
    }

    @Test func corpusInputs() {
        for bytes in inputs.values {
            _ = try? bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            _ = try? bytes.withUnsafeBytes { try AgentResponse.decode($0, withSecrets: true) }
        }
    }

    /// The corpus holds every seed of this version, byte for byte; with
    /// `FOB_WRITE_FUZZ_SEEDS=1` they are written first.
    @Test func theCorpusHoldsThisVersionsSeeds() throws {
        if ProcessInfo.processInfo.environment["FOB_WRITE_FUZZ_SEEDS"] == "1" { try AgentFuzzSeeds.write() }
        let onDisk = Dictionary(FuzzCorpus.inputs("agent-request").map { ($0.name, $0.bytes) }) { a, _ in a }
        for seed in AgentFuzzSeeds.all {
            #expect(onDisk[seed.name] == seed.bytes, "\(seed.name): write the seeds again (FOB_WRITE_FUZZ_SEEDS=1)")
        }
        #expect(AgentFuzzSeeds.prefix == "v6-")
    }

    @Test func eachRequestSeedDecodesAsItsRequest() throws {
        for (name, request) in AgentFuzzSeeds.requests {
            let bytes = try #require(inputs[AgentFuzzSeeds.prefix + name], "\(name)")
            let decoded = try bytes.withUnsafeBytes { try AgentRequest.decode($0) }
            #expect(decoded.encoded() == request.encoded(), "\(name)")
        }
        guard
            case .answer(7, .lease(900))? = try? (inputs["v6-answer-lease"] ?? []).withUnsafeBytes({
                try AgentRequest.decode($0)
            })
        else {
            Issue.record("v6-answer-lease")
            return
        }
        guard
            case .accessLog(let filter)? = try? (inputs["v6-access-log"] ?? []).withUnsafeBytes({
                try AgentRequest.decode($0)
            })
        else {
            Issue.record("v6-access-log")
            return
        }
        #expect(filter.program == "/usr/bin/git" && filter.item?.account == "a" && filter.text == "read")
    }

    /// A seed of an older version is refused as another version, by name.
    @Test(arguments: [("v5-get", UInt8(5)), ("v4-get", UInt8(4))])
    func aSeedOfAnOlderVersionIsAVersionMismatch(_ name: String, _ version: UInt8) {
        let bytes = inputs[name] ?? []
        #expect(!bytes.isEmpty, "\(name)")
        #expect(throws: AgentProtocolError.versionMismatch(version)) {
            try bytes.withUnsafeBytes { try AgentRequest.decode($0) }
        }
        #expect(throws: AgentProtocolError.versionMismatch(version)) {
            try bytes.withUnsafeBytes { try AgentResponse.decode($0) }
        }
    }

    @Test func eventSeedsDecode() throws {
        let id = AgentFuzzSeeds.id
        guard case .event(let renamed)? = response("event") else {
            Issue.record("event")
            return
        }
        #expect(
            renamed
                == AgentEvent(
                    kind: .renamed, key: ItemKey(service: "s", account: "a"), revision: 7, id: id,
                    oldKey: ItemKey(service: "s", account: "old")))
        guard case .event(let added)? = response("event-added") else {
            Issue.record("event-added")
            return
        }
        #expect(added.kind == .added && added.id == id && added.summary != nil && added.summary?.secret == nil)
        guard case .event(let locked)? = response("event-locked") else {
            Issue.record("event-locked")
            return
        }
        #expect(locked == AgentEvent(kind: .locked, key: nil))
        guard case .written(let count, let changes)? = response("written") else {
            Issue.record("written")
            return
        }
        #expect(count == 2)
        #expect(changes == [added, renamed])
    }

    /// The terminal UI's consent question and its settling carry the whole prompt.
    @Test func questionAndSettledSeedsDecodeWithTheirPrompt() {
        for (name, kind) in [("event-question", AgentEvent.Kind.question), ("event-settled", .settled)] {
            guard case .event(let event)? = response(name) else {
                Issue.record("\(name)")
                continue
            }
            #expect(event.kind == kind)
            #expect(event.prompt == AgentFuzzSeeds.prompt)
            #expect(event.key == nil)
        }
    }

    @Test func theAccessLogAnswerSeedDecodes() {
        guard case .accessLog(let records, let problems)? = response("access-log-answer") else {
            Issue.record("access-log-answer")
            return
        }
        #expect(records == [AccessLogRecord(index: 12, entry: AgentFuzzSeeds.logEntry)])
        #expect(records.first?.entry.decision == .timedOut)
        #expect(problems == ["entry 11 was removed"])
    }
}

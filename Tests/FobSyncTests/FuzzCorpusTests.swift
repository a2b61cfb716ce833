@_spi(Fuzz) import FobSync
import FobTestSupport
import Testing

/// The `sync-tree` fuzz corpus through the fuzz target's entry point: the
/// seeds parse, and nothing traps. `crash-state-count`: a state whose item
/// count asked for gigabytes before its bytes were read.
@Suite struct SyncFuzzCorpusTests {
    @Test func syncTreeInputs() {
        let inputs = FuzzCorpus.inputs("sync-tree")
        #expect(inputs.count >= 5)
        for (name, bytes) in inputs {
            let parsed = bytes.withUnsafeBytes { SyncFuzzEntryPoints.parse($0) }
            // Seeds parse; former crashers (crash-…) are refused without a trap.
            #expect(parsed == !name.hasPrefix("crash-"), "\(name)")
            // Every prefix is refused or parsed, never a trap.
            for cut in 0..<bytes.count { _ = Array(bytes[..<cut]).withUnsafeBytes { SyncFuzzEntryPoints.parse($0) } }
        }
    }
}

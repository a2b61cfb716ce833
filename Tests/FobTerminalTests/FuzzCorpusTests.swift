@_spi(Fuzz) import FobTerminal
import FobTestSupport
import Testing

/// The `terminal-keys` fuzz corpus through the fuzz target's entry point.
@Suite struct TerminalFuzzCorpusTests {
    @Test func keyInputs() {
        let inputs = FuzzCorpus.inputs("terminal-keys")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            let keys = bytes.withUnsafeBytes { TerminalFuzzEntryPoints.decodeKeys($0) }
            if name == "arrows" { #expect(!keys.isEmpty) }
        }
    }
}

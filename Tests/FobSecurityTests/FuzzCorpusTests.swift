@_spi(Fuzz) import FobSecurity
import FobTestSupport
import Testing

/// The `secitem-query` fuzz corpus through the fuzz target's entry point.
@Suite struct SecurityFuzzCorpusTests {
    @Test func queryInputs() {
        let inputs = FuzzCorpus.inputs("secitem-query")
        #expect(!inputs.isEmpty)
        for (_, bytes) in inputs { _ = bytes.withUnsafeBytes { SecurityFuzzEntryPoints.decodeQuery($0) } }
    }
}

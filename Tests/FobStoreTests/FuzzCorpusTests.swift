@_spi(Fuzz) import FobStore
import FobTestSupport
import Foundation
import Testing

/// The `record` and `vault-open` fuzz corpora (seeds and former crashers)
/// through the same entry points as the fuzz targets: a typed result, never a trap.
@Suite struct StoreFuzzCorpusTests {
    @Test func recordInputs() {
        for (_, bytes) in FuzzCorpus.inputs("record") {
            _ = bytes.withUnsafeBytes { StoreFuzzEntryPoints.decodeRecord($0) }
        }
    }

    @Test func vaultInputs() throws {
        let inputs = FuzzCorpus.inputs("vault-open")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            let result = bytes.withUnsafeBytes { StoreFuzzEntryPoints.openVault($0) }
            if name == "one-item.db" { #expect(try result.get() == 1) }
        }
        let garbage: [UInt8] = Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0xFF, count: 600)
        #expect(throws: KeychainError.decode("file is not a database")) {
            try garbage.withUnsafeBytes { StoreFuzzEntryPoints.openVault($0) }.get()
        }
    }
}

import FobSystem
import FobTestSupport
import FoundationEssentials
import Testing

@_spi(Fuzz) @testable import FobSecretService

@Suite struct LockedIndexTests {
    static let index: [UUID: Set<[UInt8]>] = [
        UUID(): [[UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 16)],
        UUID(): [],
    ]

    @Test func anIndexReadsBackOnlyUnderItsKeyAndUnchanged() {
        let key = SecretBytes.random(count: 32)
        let bytes = LockedIndex.encode(Self.index, key: key)
        #expect(LockedIndex.decode(bytes, key: key) == Self.index)
        #expect(LockedIndex.decode(bytes, key: SecretBytes.random(count: 32)) == nil, "another key")
        for i in [0, 16, bytes.count - 1] {
            var changed = bytes
            changed[i] ^= 1
            #expect(LockedIndex.decode(changed, key: key) == nil, "byte \(i) changed")
        }
        #expect(LockedIndex.decode(Array(bytes.dropFirst(18 + 32)), key: key) == nil, "an entry removed")
    }

    @Test func theFileIsPrivateAndTheKeyNamesTheVault() throws {
        let runtime = TemporaryDirectory(prefix: "fob-ss-index")
        let vault = runtime.file("vault.db").path
        let stored = try #require(LockedIndex(vaultPath: vault, environment: ["XDG_RUNTIME_DIR": runtime.url.path]))
        #expect(LockedIndex(vaultPath: vault, environment: [:]) == nil, "no runtime directory, nothing kept")
        #expect(stored.keyDescription == "fob:secret-service-index:" + LockedIndex.vaultID(vault))
        #expect(LockedIndex.vaultID(vault) != LockedIndex.vaultID(vault + "2"))
        let key = SecretBytes.random(count: 32)
        stored.save(Self.index, key: key)
        #expect(stored.load(key: key) == Self.index)
        let attributes = try FileManager.default.attributesOfItem(atPath: stored.file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func theFuzzCorpusParsesOrIsRefused() {
        let inputs = Dictionary(
            FuzzCorpus.inputs("secret-service-index").map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        #expect(SecretServiceFuzzEntryPoints.parseLockedIndex(inputs["two-items"] ?? []) == 2)
        #expect(SecretServiceFuzzEntryPoints.parseLockedIndex(inputs["short-count"] ?? [1]) == nil)
        #expect(SecretServiceFuzzEntryPoints.parseLockedIndex(inputs["empty"] ?? [1]) == 0)
    }
}

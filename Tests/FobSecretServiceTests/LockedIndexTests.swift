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

    /// The packed body the provider keeps finds the items holding every
    /// wanted hash, reads back as the same index, and is saved and loaded
    /// only under its key.
    @Test func aPackedBodyMatchesAndSavesAsTheIndex() throws {
        let (a, b, c) = (
            [UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 16), [UInt8](repeating: 3, count: 16)
        )
        let (first, second, third) = (UUID(), UUID(), UUID())
        var body: [UInt8] = []
        LockedIndex.append(first, hashes: [b, a], to: &body)
        LockedIndex.append(second, hashes: [a, c], to: &body)
        LockedIndex.append(third, hashes: [], to: &body)
        #expect(body.count == 3 * 18 + 4 * 16)
        #expect(LockedIndex.matches(body, [a]) == [first, second])
        #expect(LockedIndex.matches(body, [a, b]) == [first])
        #expect(LockedIndex.matches(body, [c, b]) == [])
        #expect(LockedIndex.matches(body, []) == [first, second, third])
        #expect(LockedIndex.parse(body) == [first: [a, b], second: [a, c], third: []])

        let runtime = TemporaryDirectory(prefix: "fob-ss-index")
        let stored = try #require(
            LockedIndex(vaultPath: runtime.file("vault.db").path, environment: ["XDG_RUNTIME_DIR": runtime.url.path]))
        let key = SecretBytes.random(count: 32)
        stored.save(body: body, key: key)
        #expect(stored.loadBody(key: key) == body)
        #expect(stored.loadBody(key: SecretBytes.random(count: 32)) == nil, "another key")
        #expect(stored.load(key: key) == LockedIndex.parse(body))
    }

    @Test func theFuzzCorpusParsesOrIsRefused() {
        let inputs = Dictionary(
            FuzzCorpus.inputs("secret-service-index").map { ($0.name, $0.bytes) }, uniquingKeysWith: { a, _ in a })
        #expect(SecretServiceFuzzEntryPoints.parseLockedIndex(inputs["two-items"] ?? []) == 2)
        #expect(SecretServiceFuzzEntryPoints.parseLockedIndex(inputs["short-count"] ?? [1]) == nil)
        #expect(SecretServiceFuzzEntryPoints.parseLockedIndex(inputs["empty"] ?? [1]) == 0)
    }
}

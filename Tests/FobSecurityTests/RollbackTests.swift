import FobSecurity
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

extension SecItemTests {
    /// The library refuses an old copy of the vault put back (errSecDecode),
    /// as the agent and the commands do (``VaultWatermarks``).
    @Test func anOldCopyPutBackIsRefusedByTheLibrary() throws {
        let files = try VaultFiles()
        let state = TemporaryDirectory(prefix: "fob-state")
        var environment = files.environment
        environment["XDG_STATE_HOME"] = state.url.path
        environment["FOB_AGENT"] = "0"
        let path = files.test.vault.url.path
        let copy = files.test.directory.file("copy.db").path
        // Each step opens the vault afresh, as a new process would.
        func add(_ account: String) {
            Self.withEnvironment(environment) {
                #expect(SecItemAdd(Self.genericPassword("s", account, "1") as CFDictionary, nil) == errSecSuccess)
            }
        }
        add("a")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        add("b")
        add("c")
        for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
        #expect(rename(copy, path) == 0)
        Self.withEnvironment(environment) {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "s",
                kSecAttrAccount as String: "a", kSecReturnData as String: true,
            ]
            var result: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &result) == errSecDecode)
            #expect(result == nil)
        }
    }
}

import FobTestSupport
import Foundation
import Testing

@testable import FobCLI

/// The terminal UI's one-time notices kept across runs, per vault, in the
/// state directory.
@Suite struct StateNoticeMemoryTests {
    @Test func aNoticeShownIsRememberedForItsVaultOnly() throws {
        let dir = TemporaryDirectory(prefix: "fob-notices")
        let environment = ["XDG_STATE_HOME": dir.url.path, "HOME": "/nonexistent"]
        let memory = StateNoticeMemory(environment: environment, vaultPath: "/v/one.db")
        #expect(!memory.hasShown("access-default-ask"))
        memory.remember("access-default-ask")
        memory.remember("access-default-ask")
        #expect(memory.hasShown("access-default-ask"))
        // A later run reads it back; another vault has not seen it.
        #expect(StateNoticeMemory(environment: environment, vaultPath: "/v/one.db").hasShown("access-default-ask"))
        #expect(!StateNoticeMemory(environment: environment, vaultPath: "/v/two.db").hasShown("access-default-ask"))
        #expect(memory.path == dir.url.path + "/fob/notices")
        let text = try String(contentsOfFile: memory.path, encoding: .utf8)
        #expect(text == "access-default-ask\t/v/one.db\n")
        let mode = try FileManager.default.attributesOfItem(atPath: memory.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func anUnwritableDirectoryShowsItAgainAndNothingWorse() {
        let memory = StateNoticeMemory(environment: ["XDG_STATE_HOME": "/proc/fob-none"], vaultPath: "/v/one.db")
        memory.remember("access-default-ask")
        #expect(!memory.hasShown("access-default-ask"))
    }
}

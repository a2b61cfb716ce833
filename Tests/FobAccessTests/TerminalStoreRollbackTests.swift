import FobAccess
import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// The terminal UI's store refuses an old copy of the vault put back
/// (exit 93's errSecDecode), as the agent and the commands do.
@Suite struct TerminalStoreRollbackTests {
    @Test func anUnlockInTheUIRefusesAnOldCopyPutBack() throws {
        let v = try TestVault()
        v.vault.lock()
        let state = TemporaryDirectory(prefix: "fob-state")
        let settings = AccessSettings(
            environment: ["XDG_STATE_HOME": state.url.path], vaultPath: v.vault.url.path, agentOff: true)
        let path = v.vault.url.path
        let copy = v.directory.file("copy.db").path
        func session(_ body: (ItemAccess) throws -> Void) throws {
            let store = ItemAccess(settings: settings, password: .none("locked"))
            try store.unlock(password: v.password)
            try body(store)
            store.lock()
        }
        try session {
            _ = try $0.save(service: "mail", account: "ana", secret: .text("old"), attributes: ItemChanges())
        }
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try session {
            _ = try $0.save(service: "mail", account: "ana", secret: .text("new"), attributes: ItemChanges())
        }
        for suffix in ["-wal", "-shm"] { unlink(path + suffix) }
        #expect(rename(copy, path) == 0)
        let store = ItemAccess(settings: settings, password: .none("locked"))
        do {
            try store.unlock(password: v.password)
            Issue.record("the old copy was accepted")
        } catch {
            #expect(error.statusName == "errSecDecode", "\(error)")
        }
        #expect(store.isLocked)
    }
}

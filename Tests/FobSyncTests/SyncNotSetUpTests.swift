import FobStore
import FobSync
import FobTestSupport
import Foundation
import Testing

/// A sync command on a vault where sync was never set up.
@Suite(.serialized) struct SyncNotSetUpTests {
    /// Whether sync is set up is kept in the encrypted vault: `fob sync`,
    /// `fob sync status`, `fob devices`, `fob conflicts` and `fob resolve`
    /// ask the master password to tell, then refuse (exit 2), and leave no
    /// agent started or unlocked for it.
    @Test func aRefusalForNoSyncLeavesNoAgentUnlocked() throws {
        let lab = try SyncLab()
        let device = try lab.device("n")
        let runtime = lab.directory.url.path + "/runtime"
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let environment = lab.gitEnvironment.merging([
            "XDG_DATA_HOME": device.data, "XDG_RUNTIME_DIR": runtime, "FOB_AGENT": "1",
        ]) { $1 }
        func status() throws -> ProcessResult {
            try FobProcess.run(["--vault", device.vault, "status", "--json"], environment: environment)
        }
        defer {
            if let shown = try? status(),
                let pid = (try? JSONDecoder().decode(AgentStatus.self, from: Data(shown.stdout)))?.pid
            {
                kill(pid_t(pid), SIGTERM)
            }
        }
        for command in [
            ["sync"], ["sync", "status"], ["devices"], ["conflicts"], ["resolve", "mail", "ana", "--keep", "local"],
        ] {
            let session = try FobProcess.startInTerminal(["--vault", device.vault] + command, environment: environment)
            #expect(session.waitFor("Master password: "), "\(command): \(session.outputText)")
            session.send(Array("pw\r".utf8))
            #expect(session.wait(timeout: 60) == 2, "\(command): \(session.outputText)")
            #expect(
                session.outputText.hasSuffix(
                    "\r\nfob: sync is not set up for this vault;\r\n"
                        + "     run `fob sync init REMOTE` or `fob sync join REMOTE`\r\n"),
                "\(command): \(session.outputText)")
            let shown = try status()
            let agent = try JSONDecoder().decode(AgentStatus.self, from: Data(shown.stdout))
            #expect(agent.state == "stopped" && agent.pid == nil, "\(command): \(shown.stdoutText)")
        }
    }
}

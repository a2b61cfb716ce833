import Testing

@testable import FobCLI

@Suite struct SSHAgentInstallTests {
    @Test func aSocketUnderTheRuntimeDirectoryIsNamedThroughTheVariable() {
        let line = SSHAgentCommand.environmentLine(
            socket: "/run/user/1000/fob/agent-ssh.sock", runtimeDirectory: "/run/user/1000")
        #expect(line == "SSH_AUTH_SOCK=${XDG_RUNTIME_DIR}/fob/agent-ssh.sock")
    }

    @Test func anotherSocketIsNamedByItsPath() {
        #expect(
            SSHAgentCommand.environmentLine(socket: "/tmp/fob-7/agent-ssh.sock", runtimeDirectory: "/run/user/7")
                == "SSH_AUTH_SOCK=/tmp/fob-7/agent-ssh.sock")
        #expect(
            SSHAgentCommand.environmentLine(socket: "/tmp/fob-7/agent-ssh.sock", runtimeDirectory: nil)
                == "SSH_AUTH_SOCK=/tmp/fob-7/agent-ssh.sock")
        // A directory whose name only begins like the runtime directory's is not inside it.
        #expect(
            SSHAgentCommand.environmentLine(socket: "/run/user/10000/fob/a.sock", runtimeDirectory: "/run/user/1000")
                == "SSH_AUTH_SOCK=/run/user/10000/fob/a.sock")
    }
}

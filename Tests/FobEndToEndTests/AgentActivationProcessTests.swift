import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// `fob agent` started as systemd's fob-agent.socket starts it: a program
/// binds and listens on the socket, then becomes `fob agent` (the same pid)
/// with the socket as descriptor 3, `LISTEN_FDS=1` and `LISTEN_PID` its pid.
@Suite(.serialized) struct AgentActivationProcessTests {
    /// Listens on argv[1], then execs argv[2...] with the socket passed as
    /// sd_listen_fds(3) describes.
    static let activator = """
        import os, socket, sys
        os.umask(0o177)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[1])
        s.listen(16)
        if s.fileno() != 3:
            os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ["LISTEN_PID"] = str(os.getpid())
        os.environ["LISTEN_FDS"] = "1"
        os.execv(sys.argv[2], sys.argv[2:])
        """

    /// Listens on each path of argv[1] (separated by ':'), passes them as
    /// descriptors 3, 4 … in that order, then execs argv[2...].
    static let activatorOfMany = """
        import os, socket, sys
        os.umask(0o177)
        paths = sys.argv[1].split(":")
        sockets = []
        for path in paths:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(16)
            sockets.append(s)
        for index, s in enumerate(sockets):
            os.dup2(s.fileno(), 100 + index)
        for index in range(len(sockets)):
            os.dup2(100 + index, 3 + index)
            os.set_inheritable(3 + index, True)
        os.environ["LISTEN_PID"] = str(os.getpid())
        os.environ["LISTEN_FDS"] = str(len(sockets))
        os.execv(sys.argv[2], sys.argv[2:])
        """

    /// A home of its own: the default vault under XDG_DATA_HOME, sockets under XDG_RUNTIME_DIR.
    final class Home: @unchecked Sendable {
        let data = TemporaryDirectory(prefix: "fob-data")
        let runtime = TemporaryDirectory(prefix: "fob-runtime")
        let passwordFile: String
        var environment: [String: String] {
            ["XDG_DATA_HOME": data.url.path, "XDG_RUNTIME_DIR": runtime.url.path, "FOB_AGENT": "1"]
        }
        var socket: String { runtime.url.path + "/fob/" + AgentEndpoint.defaultVaultSocketName }

        init() throws {
            chmod(runtime.url.path, 0o700)
            mkdir(runtime.url.path + "/fob", 0o700)
            passwordFile = data.url.path + "/password"
            try Data("pw\n".utf8).write(to: URL(fileURLWithPath: passwordFile))
        }

        /// `fob ARGUMENTS` in this home; with the password file when `password`.
        func fob(_ arguments: [String], input: String = "", password: Bool = false) throws -> ProcessResult {
            var environment = self.environment
            if password { environment["FOB_PASSWORD_FILE"] = passwordFile }
            return try FobProcess.run(arguments, environment: environment, input: input)
        }

        /// `fob ARGUMENTS` started with the socket passed, as by the service manager.
        func activated(_ arguments: [String]) throws -> ChildProcess {
            try ChildProcess(
                executable: "/usr/bin/python3",
                arguments: ["-c", activator, socket, FobProcess.binaryURL.path] + arguments,
                environment: FobProcess.baseEnvironment.merging(environment) { $1 })
        }

        func state() throws -> String {
            let text = try fob(["status"]).stdoutText
            return text.split(separator: "\n").first.map(String.init) ?? ""
        }
    }

    @Test func theDefaultVaultsAgentTakesThePassedSocketAndLeavesItInPlace() throws {
        let home = try Home()
        #expect(
            AgentEndpoint(vaultURL: Vault.defaultURL(environment: home.environment), environment: home.environment)
                .socket == home.socket)
        // Started before the vault exists, as a unit enabled before `fob init` is.
        let agent = try home.activated(["agent"])
        defer {
            agent.send(signal: SIGKILL)
            _ = agent.wait(timeout: 5)
        }
        // The service manager made the socket before any client came: wait for the stand-in to make it.
        var st = stat()
        for _ in 0..<500 where lstat(home.socket, &st) != 0 { usleep(10_000) }
        #expect(try home.state() == "state: locked")
        #expect(try home.fob(["status", "--json"]).stdoutText.contains("\"pid\":\(agent.pid)"))
        #expect(try home.fob(["init", "--kdf", "interactive"], password: true).status == 0)
        // A new vault asks every requester; this test's `get` has no terminal to be asked on.
        #expect(try home.fob(["access", "default", "any"], password: true).status == 0)
        #expect(try home.fob(["unlock"], password: true).status == 0)
        #expect(try home.state() == "state: unlocked")
        // No password file from here on: the agent answers.
        #expect(try home.fob(["add", "mail", "ana"], input: "s3cret\n").status == 0)
        let get = try home.fob(["get", "mail", "ana"])
        #expect(get.status == 0)
        #expect(get.stdoutText == "s3cret\n")
        agent.send(signal: SIGTERM)
        let result = agent.wait(timeout: 10)
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(lstat(home.socket, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK, "the service manager's socket stays")
        #expect(try home.state() == "state: stopped")
    }

    @Test func theSSHSocketPassedFirstIsServedAsTheSSHAgentsAndStaysInPlace() throws {
        let home = try Home()
        #expect(try home.fob(["init", "--kdf", "interactive"], password: true).status == 0)
        #expect(try home.fob(["access", "default", "any"], password: true).status == 0)
        let ssh = home.runtime.url.path + "/fob/agent-ssh.sock"
        // fob-ssh-agent.socket's descriptor before fob-agent.socket's: told apart by path, not order.
        let agent = try ChildProcess(
            executable: "/usr/bin/python3",
            arguments: ["-c", AgentActivationProcessTests.activatorOfMany, ssh + ":" + home.socket]
                + [FobProcess.binaryURL.path, "agent"],
            environment: FobProcess.baseEnvironment.merging(home.environment) { $1 })
        defer {
            agent.send(signal: SIGKILL)
            _ = agent.wait(timeout: 5)
        }
        var before = stat()
        for _ in 0..<500 where lstat(home.socket, &before) != 0 { usleep(10_000) }
        #expect(lstat(ssh, &before) == 0)
        #expect(try home.fob(["unlock"], password: true).status == 0)
        #expect(try home.fob(["status", "--json"]).stdoutText.contains("\"pid\":\(agent.pid)"))
        let made = try home.fob(["ssh", "keygen", "k"])
        #expect(made.status == 0, "\(made.stderrText)")
        let listed = try ChildProcess.run(
            executable: "/usr/bin/ssh-add", arguments: ["-L"], environment: ["SSH_AUTH_SOCK": ssh], timeout: 20)
        #expect(listed.status == 0 && listed.stdoutText == made.stdoutText, "\(listed.stderrText)")
        agent.send(signal: SIGTERM)
        #expect(agent.wait(timeout: 10).status == 0)
        var after = stat()
        #expect(lstat(ssh, &after) == 0 && after.st_ino == before.st_ino, "the service manager's SSH socket stays")
    }

    @Test func anotherVaultsAgentRefusesTheDefaultVaultsSocket() throws {
        let home = try Home()
        let other = home.data.url.path + "/other.db"
        #expect(try home.fob(["--vault", other, "init", "--kdf", "interactive"], password: true).status == 0)
        let result = try home.activated(["--vault", other, "agent"]).wait(timeout: 20)
        #expect(result.status == 2, "\(result.stderrText)")
        #expect(result.stderrText.contains("serves the default vault only"))
        #expect(try home.fob(["--vault", other, "status"]).stdoutText.hasPrefix("state: stopped"))
    }
}

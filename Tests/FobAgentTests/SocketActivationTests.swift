import FobAgent
import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@Suite struct SocketActivationTests {
    @Test func socketsArePassedOnlyToTheProcessNamed() {
        let me = getpid()
        func count(_ environment: [String: String]) -> Int {
            SocketActivation.passedCount(environment: environment, pid: me)
        }
        #expect(count(["LISTEN_PID": "\(me)", "LISTEN_FDS": "1"]) == 1)
        #expect(count(["LISTEN_PID": "\(me)", "LISTEN_FDS": "2"]) == 2)
        // Inherited by a child: another pid.
        #expect(count(["LISTEN_PID": "\(me + 1)", "LISTEN_FDS": "1"]) == 0)
        #expect(count(["LISTEN_FDS": "1"]) == 0)
        #expect(count(["LISTEN_PID": "\(me)"]) == 0)
        for bad in ["0", "-1", "one", "", " 1"] {
            #expect(count(["LISTEN_PID": "\(me)", "LISTEN_FDS": bad]) == 0, "LISTEN_FDS=\(bad)")
        }
        #expect(count(["LISTEN_PID": " \(me)", "LISTEN_FDS": "1"]) == 0)
        #expect(count([:]) == 0)
    }

    @Test func theDefaultVaultsSocketHasAFixedName() throws {
        let home = TemporaryDirectory(prefix: "fob-default")
        let environment = ["XDG_DATA_HOME": home.url.path, "XDG_RUNTIME_DIR": "/run/user/7"]
        let vault = Vault.defaultURL(environment: environment)
        #expect(AgentEndpoint(vaultURL: vault, environment: environment).socket == "/run/user/7/fob/agent.sock")
        // The same file through a symbolic link is the same vault: the same socket.
        try FileManager.default.createDirectory(
            at: vault.deletingLastPathComponent(), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: vault.path, contents: Data()))
        let link = home.file("link.db")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: vault)
        #expect(AgentEndpoint(vaultURL: link, environment: environment).socket == "/run/user/7/fob/agent.sock")
        // Any other vault: its hash.
        let other = AgentEndpoint(vaultURL: home.file("other.db"), environment: environment)
        let hash = Sodium.hex(Sodium.genericHash(Array(other.vault.utf8), length: 16))
        #expect(other.socket == "/run/user/7/fob/agent-\(hash).sock")
        // Another environment's default vault is not this one.
        let elsewhere = ["XDG_DATA_HOME": home.url.path + "/elsewhere", "XDG_RUNTIME_DIR": "/run/user/7"]
        #expect(AgentEndpoint(vaultURL: vault, environment: elsewhere).socket != "/run/user/7/fob/agent.sock")
    }

    /// A listening socket at `path` (or only bound, when not `listening`).
    private func listener(at path: String, listening: Bool = true) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, b) in path.utf8.enumerated() { raw[i] = b }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(rc == 0)
        if listening { #expect(listen(fd, 4) == 0) }
        return fd
    }

    @Test func theAgentAdoptsOnlyItsOwnListeningSocket() throws {
        let runtime = TemporaryDirectory(prefix: "fob-runtime")
        chmod(runtime.url.path, 0o700)
        let environment = ["XDG_RUNTIME_DIR": runtime.url.path]
        let vault = runtime.file("vault.db")
        let endpoint = AgentEndpoint(vaultURL: vault, environment: environment)
        #expect(mkdir(endpoint.directory, 0o700) == 0)
        func server() -> AgentServer { AgentServer(endpoint: endpoint, core: AgentCore(vaultURL: vault)) }

        let elsewhere = listener(at: endpoint.directory + "/agent.sock")
        defer { close(elsewhere) }
        #expect(
            throws: KeychainError.param(
                "the service manager's socket \(endpoint.directory)/agent.sock is not this vault's, \(endpoint.socket):"
                    + " its unit serves the default vault only")
        ) { try server().adopt(listener: elsewhere) }

        let bound = listener(at: endpoint.socket, listening: false)
        #expect(
            throws: KeychainError.param(
                "descriptor \(bound) from the service manager is not a listening stream socket")
        ) { try server().adopt(listener: bound) }
        close(bound)
        unlink(endpoint.socket)

        let own = listener(at: endpoint.socket)
        defer { close(own) }
        try server().adopt(listener: own)
        #expect(fcntl(own, F_GETFD) & FD_CLOEXEC != 0)

        // A directory others may enter is refused, as for a socket the agent binds.
        chmod(endpoint.directory, 0o755)
        #expect(
            throws: KeychainError.interactionNotAllowed(
                "the agent directory \(endpoint.directory) has mode 755, not 700; fix it with chmod 700")
        ) { try server().adopt(listener: own) }
    }
}

import FobAgent
import FobSecurity
import FobStore
import FobTestSupport
import FobTokens
import Foundation
@preconcurrency import Glibc
import Testing

/// A vault, a private runtime directory, and the agents started for it;
/// ``stop()`` ends every agent by its pid.
final class AgentFixture: @unchecked Sendable {
    let vault: ProcessTestVault
    let runtime: TemporaryDirectory
    var endpoint: AgentEndpoint {
        AgentEndpoint(vaultURL: URL(fileURLWithPath: vault.path), environment: ["XDG_RUNTIME_DIR": runtime.url.path])
    }

    init() throws {
        vault = try ProcessTestVault()
        runtime = TemporaryDirectory(prefix: "fob-runtime")
        chmod(runtime.url.path, 0o700)
    }

    /// Added to ``environment`` (a value replaces the fixture's).
    var extraEnvironment: [String: String] = [:]

    /// The environment of a command that uses the agent and has no password file.
    var environment: [String: String] {
        ["FOB_VAULT": vault.path, "XDG_RUNTIME_DIR": runtime.url.path, "FOB_AGENT": "1"].merging(extraEnvironment) {
            $1
        }
    }

    func run(_ arguments: [String], input: String = "", password: Bool = false, timeout: Double = 60) throws
        -> ProcessResult
    {
        var environment = self.environment
        if password { environment["FOB_PASSWORD_FILE"] = vault.passwordFile }
        return try FobProcess.run(arguments, environment: environment, input: input, timeout: timeout)
    }

    func unlock(_ extra: [String] = []) throws -> ProcessResult {
        try run(["unlock"] + extra, password: true)
    }

    /// `fob status --json` as a dictionary.
    func status() throws -> [String: Any] {
        let result = try run(["status", "--json"])
        return (try? JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]) ?? [:]
    }

    var agentPid: pid_t? {
        guard let status = try? status(), let pid = status["pid"] as? Int else { return nil }
        return pid_t(pid)
    }

    /// Stops the agent (by its pid) and waits until it is gone.
    func stop() {
        guard let pid = agentPid else { return }
        kill(pid, SIGTERM)
        for _ in 0..<200 where AgentFixture.isRunning(pid) { usleep(10_000) }
        if kill(pid, 0) == 0 { kill(pid, SIGKILL) }
    }

    deinit { stop() }

    /// Whether `pid` runs (a zombie, not reaped by its new parent, does not).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
        return !stat.contains(") Z ")
    }

    /// Polls `condition` every 100 ms up to `timeout` seconds.
    func eventually(timeout: Double = 10, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(timeout)
        while Date() < end {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    /// A raw connection to the agent's socket past the hello: the next frame is the request.
    func connectPastHello() -> Int32 {
        let fd = connect()
        let hello = AgentHello.encoded(vault: endpoint.vault)
        let n = UInt32(hello.count)
        let frame = [UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + hello
        _ = frame.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var answer = [UInt8](repeating: 0, count: 10)
        #expect(recv(fd, &answer, answer.count, Int32(MSG_WAITALL)) == 10, "the hello's answer: a frame of 6 bytes")
        #expect(answer[4..<10] == ArraySlice(AgentProtocol.magic + [AgentProtocol.version, 0]))
        return fd
    }

    /// A raw connection to the agent's socket.
    func connect() -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(endpoint.socket.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(rc == 0)
        return fd
    }
}

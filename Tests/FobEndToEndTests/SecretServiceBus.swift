import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// A private session bus (`dbus-run-session` with a configuration whose only
/// service directory is the test's, so only Fob's provider can be
/// activated), an agent holding a vault unlocked, and the activation file
/// `fob secret-service install` wrote there.
final class SecretServiceBus: @unchecked Sendable {
    let agent: AgentFixture
    let directory = TemporaryDirectory(prefix: "fob-secret-service")
    var dataHome: String { directory.file("data").path }
    var serviceDirectory: String { dataHome + "/dbus-1/services" }

    /// - Parameters:
    ///   - agentEnvironment: added to the agent's environment (its pinentry), before it starts.
    ///   - prepare: run on the vault before the agent unlocks it (with the password file).
    init(agentEnvironment: [String: String] = [:], prepare: (AgentFixture) throws -> Void = { _ in }) throws {
        agent = try AgentFixture()
        agent.extraEnvironment = agentEnvironment
        try prepare(agent)
        let unlocked = try agent.unlock()
        #expect(unlocked.status == 0, "\(unlocked.stderrText)")
        try FileManager.default.createDirectory(atPath: serviceDirectory, withIntermediateDirectories: true)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:dir=\(directory.url.path)</listen>
              <servicedir>\(serviceDirectory)</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try Data(config.utf8).write(to: directory.file("session.conf"))
    }

    /// Added to ``environment`` (the bus, the provider it starts, and the clients).
    var extraEnvironment: [String: String] = [:]

    /// The environment of `fob` and of the clients: the agent's, and the data home.
    var environment: [String: String] {
        FobProcess.baseEnvironment.merging(agent.environment) { $1 }.merging([
            "XDG_DATA_HOME": dataHome, "HOME": directory.url.path, "FOB": FobProcess.binaryURL.path,
        ]) { $1 }.merging(extraEnvironment) { $1 }
    }

    /// Writes the activation file with `fob secret-service install`.
    func install() throws {
        let result = try FobProcess.run(["secret-service", "install"], environment: environment)
        #expect(result.status == 0, "\(result.stderrText)")
    }

    /// Runs `script` (sh) inside the private bus; `$FOB` is the built `fob`.
    func run(_ script: String, timeout: Double = 120) throws -> ProcessResult {
        try ChildProcess.run(
            executable: "/usr/bin/dbus-run-session",
            arguments: ["--config-file=\(directory.file("session.conf").path)", "--", "/bin/sh", "-c", script],
            environment: environment, stdin: [], timeout: timeout)
    }

    /// Runs a Python program under `/usr/bin/python3` inside the private bus.
    func python(_ program: String) throws -> ProcessResult {
        try Data(program.utf8).write(to: directory.file("client.py"))
        return try run("/usr/bin/python3 \(directory.file("client.py").path)")
    }
}

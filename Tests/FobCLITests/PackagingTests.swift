import FobAgent
import FobCLI
import FobTestSupport
import Foundation
import Testing

/// The Debian package's files in `Assets/` agree with the code: the
/// changelog's version with `fob --version`, the socket unit with the
/// default vault's socket, the service with the installed path.
@Suite struct PackagingTests {
    static func asset(_ path: String) -> String {
        let url = FobProcess.packageRoot.appendingPathComponent("Assets/" + path)
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    /// The `KEY=value` lines of a unit file, in order.
    static func settings(_ unit: String) -> [(String, String)] {
        unit.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    /// Issue 35: `scripts/package-deb DIR` with a DIR that does not exist
    /// yet makes it and writes the package there (it failed before).
    @Test func packageDebMakesAMissingOutputDirectory() throws {
        let scratch = TemporaryDirectory(prefix: "fob-deb")
        let output = scratch.url.path + "/not/yet"
        var environment = FobProcess.baseEnvironment
        environment["FOB_DEB_BINARIES"] = FobProcess.binaryURL.deletingLastPathComponent().path
        environment["FOB_DEB_LINTIAN"] = "0"
        environment["FOB_DEB_COMPRESSION"] = "gzip:1"
        let result = try ChildProcess.run(
            executable: "/bin/bash",
            arguments: [FobProcess.packageRoot.appendingPathComponent("scripts/package-deb").path, output],
            environment: environment, timeout: 300)
        #expect(result.status == 0, "\(result.stderrText)")
        let made = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
        #expect(made.count == 1 && made[0].hasPrefix("fob_") && made[0].hasSuffix(".deb"), "\(made)")
    }

    @Test func theChangelogsLatestVersionIsFobs() {
        let changelog = Self.asset("debian/changelog")
        let first = changelog.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first == "fob (\(FobCLI.version)) unstable; urgency=medium")
    }

    @Test func theManPageNamesFobsVersion() {
        let header = Self.asset("fob.1").split(separator: "\n").first.map(String.init) ?? ""
        #expect(header == ".TH FOB 1 \"2026\" \"fob \(FobCLI.version)\" \"User Commands\"")
    }

    @Test func theSocketUnitListensOnTheDefaultVaultsSocket() {
        let socket = Self.settings(Self.asset("systemd/fob-agent.socket"))
        #expect(socket.filter { $0.0 == "ListenStream" }.map(\.1) == ["%t/fob/" + AgentEndpoint.defaultVaultSocketName])
        // The agent refuses a directory others may enter, and the socket is this user's alone.
        #expect(socket.contains { $0 == ("DirectoryMode", "0700") })
        #expect(socket.contains { $0 == ("SocketMode", "0600") })
        // `%t` is the user manager's runtime directory, $XDG_RUNTIME_DIR, where the agent's sockets are.
        let endpoint = AgentEndpoint(
            vaultURL: URL(fileURLWithPath: "/home/ana/.local/share/fob/vault.db"),
            environment: ["HOME": "/home/ana", "XDG_RUNTIME_DIR": "/run/user/1000"])
        #expect(endpoint.socket == "/run/user/1000/fob/agent.sock")
    }

    @Test func theServiceRunsTheInstalledAgentOnlyThroughTheSocket() {
        let service = Self.settings(Self.asset("systemd/fob-agent.service"))
        #expect(service.filter { $0.0 == "ExecStart" }.map(\.1) == ["/usr/bin/fob agent"])
        #expect(service.contains { $0 == ("Requires", "fob-agent.socket") })
        // Started only through the socket: no [Install] section of its own.
        #expect(!Self.asset("systemd/fob-agent.service").contains("[Install]"))
    }
}

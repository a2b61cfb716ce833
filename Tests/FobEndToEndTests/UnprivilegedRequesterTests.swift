import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Fob run by a user without privileges, as people run it. The suite itself
/// runs as root, whose `CAP_SYS_PTRACE` reads every process's `/proc` files
/// and so hid that a `fob` command that turned off `PR_SET_DUMPABLE` could
/// not be named by its own agent (an empty executable, the `secitem`
/// channel, its caller lost). Here the commands run as uid 65534 through
/// `setpriv`: the agent names the program that ran `fob get` and the
/// command's channel, while the agent itself stays closed to the user's
/// other processes.
@Suite struct UnprivilegedRequesterTests {
    static let canDropPrivileges = getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0
    static let nobody: uid_t = 65534

    /// Hands `path` and everything under it to ``nobody``.
    static func giveAway(_ path: String) throws {
        let result = try ChildProcess.run(
            executable: "/bin/chown", arguments: ["-R", "\(nobody):\(nobody)", path],
            environment: FobProcess.baseEnvironment, stdin: [], timeout: 30)
        #expect(result.status == 0, "\(result.stderrText)")
    }

    @Test(.enabled(if: canDropPrivileges)) func theAgentNamesWhoRanFobGetAndHidesItself() throws {
        let vault = try ProcessTestVault()
        let directory = vault.directory.url.path
        // A copy of `fob` that uid 65534 can run wherever the build lives.
        try FileManager.default.copyItem(atPath: FobProcess.binaryURL.path, toPath: directory + "/fob")
        try FileManager.default.createDirectory(atPath: directory + "/run", withIntermediateDirectories: false)
        chmod(directory + "/run", 0o700)
        let script = """
            F="$DIR/fob"
            printf s3cret | FOB_AGENT=0 FOB_PASSWORD_FILE="$DIR/password" "$F" add svc ana >/dev/null || echo add-failed
            FOB_PASSWORD_FILE="$DIR/password" "$F" unlock >/dev/null 2>&1 || echo unlock-failed
            echo "get $("$F" get svc ana)"
            pid=$("$F" status --json | sed -n 's/.*"pid" *: *\\([0-9]*\\).*/\\1/p')
            echo "agent $pid $(readlink /proc/$pid/exe 2>/dev/null || echo hidden)"
            "$F" log --json > "$DIR/log.json"
            """
        try Data(script.utf8).write(to: URL(fileURLWithPath: directory + "/script.sh"))
        try Self.giveAway(directory)
        let result = try ChildProcess.run(
            executable: "/usr/bin/setpriv",
            arguments: [
                "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", "/bin/sh",
                directory + "/script.sh",
            ],
            environment: FobProcess.baseEnvironment.merging([
                "DIR": directory, "HOME": directory, "FOB_VAULT": vault.path, "XDG_RUNTIME_DIR": directory + "/run",
                "FOB_AGENT": "1",
            ]) { $1 }, stdin: [], timeout: 120)
        let out = result.stdoutText
        let agent = out.split(separator: "\n").first { $0.hasPrefix("agent ") }?.split(separator: " ")
        if let pid = agent.flatMap({ $0.count > 1 ? Int32($0[1]) : nil }) { kill(pid, SIGTERM) }
        #expect(out.contains("get s3cret\n"), "\(out) \(result.stderrText)")
        #expect(agent?.last == "hidden", "\(out)")
        let log = try Data(contentsOf: URL(fileURLWithPath: directory + "/log.json"))
        let entries = try #require(try JSONSerialization.jsonObject(with: log) as? [[String: Any]])
        let read = try #require(entries.last { $0["event"] as? String == "read" })
        let requester = try #require(read["requester"] as? [String: Any])
        #expect(read["channel"] as? String == "get", "\(read)")
        let shell = try #require(
            realpath("/bin/sh", nil).map { p in
                defer { free(p) }
                return String(cString: p)
            })
        #expect(requester["executable"] as? String == shell, "\(requester)")
    }
}

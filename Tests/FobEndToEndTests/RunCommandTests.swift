import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// `fob run`: the command gets the secrets in its environment, fob itself
/// never holds them in argv or environment, and fob becomes the command.
@Suite struct RunCommandTests {
    static func randomSecret() -> String { "sekrit-" + UUID().uuidString }

    @Test func theCommandSeesTheSecretsAndItsStatusPassesThrough() throws {
        let v = try ProcessTestVault()
        let secret = Self.randomSecret()
        #expect(try v.run(["add", "github.com", "ci"], input: secret).status == 0)
        #expect(try v.run(["add", "api/v2", "svc/reader"], input: "two").status == 0)
        let envFile = v.directory.file("env").path
        try Data("# comment\nAPI_KEY=api\\/v2/svc/reader\n".utf8).write(to: URL(fileURLWithPath: envFile))
        let r = try v.run([
            "run", "--env", "TOKEN=github.com/ci", "--env-file", envFile, "--",
            "sh", "-c", "printf '%s|%s' \"$TOKEN\" \"$API_KEY\"; exit 7",
        ])
        #expect(r.status == 7)
        #expect(r.stdoutText == "\(secret)|two")
        #expect(r.stderr.isEmpty)
    }

    @Test func aSignalPassesThrough() throws {
        let v = try ProcessTestVault()
        #expect(try v.run(["add", "s", "a"], input: "x").status == 0)
        let r = try v.run(["run", "--env", "X=s/a", "--", "sh", "-c", "kill -TERM $$"])
        #expect(r.signal == SIGTERM)
        #expect(r.status == 128 + SIGTERM)
    }

    @Test func fobBecomesTheCommandAndNeverHoldsTheSecret() throws {
        let v = try ProcessTestVault()
        let secret = Self.randomSecret()
        #expect(try v.run(["add", "svc", "acct"], input: secret).status == 0)
        let pidFile = v.directory.file("pid").path
        // `read` is a shell builtin: no other process starts, and the command waits for stdin.
        let child = try FobProcess.start(
            ["run", "--env", "SECRET_VALUE=svc/acct", "--", "sh", "-c", "echo $$ > '\(pidFile)'; read x; exit 0"],
            environment: v.environment, holdStdinOpen: true)
        var written: pid_t?
        for _ in 0..<500 {
            if let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                written = pid
                break
            }
            usleep(10_000)
        }
        #expect(written == child.pid, "the command runs in fob's own process")
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.pid)/exe")) ?? ""
        #expect(!exe.hasSuffix("/fob"))
        // Scan every process: no argv holds the secret, and only the command's environment does.
        let needle = Array(secret.utf8)
        var holders: [pid_t] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry) else { continue }
            let cmdline = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))).map(Array.init) ?? []
            #expect(VaultFile.firstIndex(of: needle, in: cmdline) == nil, "argv of \(pid)")
            let environ = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))).map(Array.init) ?? []
            if VaultFile.firstIndex(of: needle, in: environ) != nil { holders.append(pid) }
        }
        #expect(holders == [child.pid])
        child.closeStdin()
        let result = child.wait(timeout: 20)
        #expect(result.status == 0)
    }

    @Test func mistakesStopBeforeTheCommandRuns() throws {
        let v = try ProcessTestVault()
        let marker = v.directory.file("ran").path
        let touch = ["--", "sh", "-c", "touch '\(marker)'"]
        #expect(try v.run(["run", "--env", "1BAD=s/a"] + touch).status == 2)
        #expect(try v.run(["run", "--env", "A=noslash"] + touch).status == 2)
        #expect(try v.run(["run", "--env", "A=s/a", "--env", "A=t/b"] + touch).status == 2)
        let missing = try v.run(["run", "--env", "A=nothing/here"] + touch)
        #expect(missing.status == 44)
        #expect(!FileManager.default.fileExists(atPath: marker))
        let notFound = try v.run(["run", "--", "no-such-command-fob"])
        #expect(notFound.status == 127)
        #expect(try v.run(["run"]).status == 2)
        // No secrets asked for: the command runs without unlocking.
        #expect(try FobProcess.run(["run", "--", "sh", "-c", "exit 3"]).status == 3)
    }
}

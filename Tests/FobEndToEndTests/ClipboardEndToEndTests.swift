import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// `fob copy` and `fob logout` as separate processes, against a private tmux
/// server and a private X server.
@Suite struct ClipboardEndToEndTests {
    /// A vault with a token and a password, and a password file for it.
    struct Fixture {
        let vault: TestVault
        let passwordFile: URL
        init() throws {
            vault = try TestVault()
            passwordFile = vault.directory.file("password")
            try "correct horse\n".write(to: passwordFile, atomically: true, encoding: .utf8)
            try vault.vault.add(Item(service: "api", account: "ana", kind: .token, secret: .text("tok-SECRET-1")))
            try vault.vault.add(
                Item(service: "idp", account: "bob", kind: .oauth, secret: .text("{\"access_token\":\"oa-SECRET-2\"}")))
            try vault.vault.add(Item(service: "mail", account: "ana", secret: .text("pw-SECRET-3")))
        }
        var vaultPath: String { vault.vault.url.path }
        var stateFile: String { vaultPath + ".clearer" }
        func arguments(_ clipboard: String, clearAfter: Int, _ command: [String]) -> [String] {
            [
                "--vault", vaultPath, "--password-file", passwordFile.path, "--clipboard", clipboard,
                "--clear-after", String(clearAfter),
            ] + command
        }
        /// Whether a clearer process is still running (its pid in the state file).
        var clearerRunning: Bool {
            guard let text = try? String(contentsOfFile: stateFile, encoding: .utf8),
                let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
            else { return false }
            return kill(pid, 0) == 0 && FileManager.default.fileExists(atPath: "/proc/\(pid)/cmdline")
        }
    }

    @Test func copyInTmuxReturnsAtOnceAndTheDetachedProcessClears() throws {
        let f = try Fixture()
        let tmux = try TmuxServer()
        let started = Date()
        let result = try FobProcess.run(
            f.arguments("tmux", clearAfter: 3, ["copy", "api", "ana"]),
            environment: ["TMUX": tmux.tmuxVariable], timeout: 30)
        #expect(result.status == 0, "\(result.stderrText)")
        // Returned before the clear: the detached clearer holds none of its pipes.
        #expect(Date().timeIntervalSince(started) < 2.5)
        #expect(
            result.stderrText.contains(
                "copied service \"api\", account \"ana\" to the clipboard (tmux); clearing in 3 s"))
        #expect(!result.stdoutText.contains("SECRET") && !result.stderrText.contains("SECRET"))
        #expect(try tmux.buffers()["fob"] == "tok-SECRET-1")
        // The clearer got the secret on stdin, not in argv or its environment.
        #expect(eventually { f.clearerRunning })
        if let pid = try? String(contentsOfFile: f.stateFile, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        {
            let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
            #expect(!String(decoding: cmdline, as: UTF8.self).contains("SECRET"))
            let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
            #expect(!String(decoding: environ, as: UTF8.self).contains("SECRET"))
        }
        try tmux.run(["set-buffer", "-b", "mine", "user text"])
        #expect(try eventually(timeout: 15) { try tmux.buffers().values.allSatisfy { !$0.contains("SECRET") } })
        #expect(try tmux.buffers()["mine"] == "user text")
        #expect(eventually { !f.clearerRunning && !FileManager.default.fileExists(atPath: f.stateFile) })
    }

    @Test func copyWithXclipLeavesALaterUnrelatedCopyAlone() throws {
        let f = try Fixture()
        let x = try XvfbServer()
        let env = ["DISPLAY": x.display]
        let result = try FobProcess.run(
            f.arguments("xclip", clearAfter: 2, ["copy", "mail", "ana"]), environment: env, timeout: 30)
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(try eventually { try x.clipboardText() == "pw-SECRET-3" })
        #expect(eventually { f.clearerRunning })
        try x.userCopies("copied later by the user")
        #expect(try eventually { try x.clipboardText() == "copied later by the user" })
        #expect(eventually(timeout: 15) { !f.clearerRunning })
        #expect(try x.clipboardText() == "copied later by the user")

        // Without a later copy, the clipboard is emptied.
        let again = try FobProcess.run(
            f.arguments("xclip", clearAfter: 2, ["copy", "mail", "ana"]), environment: env, timeout: 30)
        #expect(again.status == 0)
        #expect(try eventually { try x.clipboardText() == "pw-SECRET-3" })
        #expect(try eventually(timeout: 15) { try x.clipboardText() == nil })
    }

    @Test func aSecondCopyRestartsTheTimer() throws {
        let f = try Fixture()
        let tmux = try TmuxServer()
        let env = ["TMUX": tmux.tmuxVariable]
        let first = Date()
        #expect(
            try FobProcess.run(f.arguments("tmux", clearAfter: 6, ["copy", "api", "ana"]), environment: env).status == 0
        )
        Thread.sleep(forTimeInterval: 3)
        #expect(
            try FobProcess.run(f.arguments("tmux", clearAfter: 6, ["copy", "api", "ana"]), environment: env).status == 0
        )
        // Past the first copy's deadline, the value is still there…
        Thread.sleep(until: first.addingTimeInterval(7.5))
        #expect(try tmux.buffers()["fob"] == "tok-SECRET-1")
        // …and the second copy's clearer removes it.
        #expect(try eventually(timeout: 15) { try tmux.buffers()["fob"] == nil })
    }

    @Test func logoutDeletesTokensPrintsTheCountAndClearsTheClipboard() throws {
        let f = try Fixture()
        let tmux = try TmuxServer()
        let env = ["TMUX": tmux.tmuxVariable]
        #expect(
            try FobProcess.run(f.arguments("tmux", clearAfter: 300, ["copy", "api", "ana"]), environment: env).status
                == 0)
        #expect(eventually { f.clearerRunning })
        // Without --yes and without a terminal it refuses and deletes nothing.
        let refused = try FobProcess.run(f.arguments("tmux", clearAfter: 300, ["logout"]), environment: env)
        #expect(refused.status == 36)
        #expect(try tmux.buffers()["fob"] == "tok-SECRET-1")

        let result = try FobProcess.run(
            f.arguments("tmux", clearAfter: 300, ["logout", "--include-long-lived", "--yes"]), environment: env)
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText == "Logged out: deleted 2 token/OAuth items\n")
        #expect(try tmux.buffers()["fob"] == nil)
        #expect(eventually { !f.clearerRunning })
        let list = try FobProcess.run(["--vault", f.vaultPath, "--password-file", f.passwordFile.path, "ls"])
        #expect(list.stdoutText.contains("mail"))
        #expect(!list.stdoutText.contains("api") && !list.stdoutText.contains("idp"))
    }

    @Test func theClearerClearsWhenTerminated() throws {
        let f = try Fixture()
        let tmux = try TmuxServer()
        let env = ["TMUX": tmux.tmuxVariable]
        #expect(
            try FobProcess.run(f.arguments("tmux", clearAfter: 300, ["copy", "api", "ana"]), environment: env).status
                == 0)
        #expect(eventually { f.clearerRunning })
        let pid = try #require(
            pid_t(
                try String(contentsOfFile: f.stateFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            ))
        #expect(try tmux.buffers()["fob"] == "tok-SECRET-1")
        kill(pid, SIGTERM)
        #expect(try eventually { try tmux.buffers()["fob"] == nil })
        #expect(eventually { !f.clearerRunning })
    }

    @Test func logoutOfOneService() throws {
        let f = try Fixture()
        let result = try FobProcess.run(f.arguments("none", clearAfter: 45, ["logout", "--service", "idp", "--yes"]))
        #expect(result.status == 0, "\(result.stderrText)")
        #expect(result.stdoutText == "Logged out: deleted 1 token/OAuth item\n")
        let list = try FobProcess.run(["--vault", f.vaultPath, "--password-file", f.passwordFile.path, "ls"])
        #expect(list.stdoutText.contains("api"))
        #expect(!list.stdoutText.contains("idp"))
    }

    @Test func copyWithoutAClipboardFailsClearly() throws {
        let f = try Fixture()
        let result = try FobProcess.run(f.arguments("none", clearAfter: 45, ["copy", "api", "ana"]))
        #expect(result.status == 1)
        #expect(result.stderrText.contains("no clipboard"))
        let missing = try FobProcess.run(f.arguments("none", clearAfter: 45, ["copy", "api", "nobody"]))
        #expect(missing.status == 44)
    }
}

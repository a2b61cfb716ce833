import FobAgent
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// SSH approval as a person sees it: OpenSSH's `ssh`, run in a tmux pane
/// (80×24) against an sshd of the test's own on loopback, through the
/// vault's SSH agent, with the key under an `ask` rule and no pinentry. The
/// question comes to the terminal UI when one is open, else to ssh's own
/// terminal; a locked vault asks its master password there first.
@Suite(.serialized, .enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/sshd")))
final class SSHApprovalTerminalTests {
    let agent: SSHAgentFixture
    let server: LoopbackSSHD
    let shell: TmuxSession
    let fob = FobProcess.binaryURL.path

    init() throws {
        agent = try SSHAgentFixture()
        #expect(try agent.fixture.run(["access", "default", "ask"], password: true).status == 0)
        let key = try agent.fob(["ssh", "keygen", "k"]).stdoutText
        server = try LoopbackSSHD(authorizedKeys: key)
        try (server.knownHostsLine + "\n").write(toFile: agent.knownHosts, atomically: true, encoding: .utf8)
        let script = """
            #!/bin/sh
            ssh -F /dev/null -o IdentityAgent=\(agent.socket) -o UserKnownHostsFile=\(agent.knownHosts) \\
              -o BatchMode=yes -o IdentitiesOnly=no -p \(server.port) root@127.0.0.1 echo logged-in
            echo "$1=$?"

            """
        try script.write(toFile: agent.home.url.path + "/login", atomically: true, encoding: .utf8)
        chmod(agent.home.url.path + "/login", 0o755)
        shell = try TmuxSession(width: 80, height: 24, environment: agent.fixture.environment)
    }

    /// Runs the login script in the shell pane; its status line is `tag=STATUS`.
    func startLogin() throws -> String {
        let tag = "login" + UUID().uuidString.prefix(6)
        try shell.type("clear; \(agent.home.url.path)/login \(tag)")
        try shell.press("Enter")
        return tag
    }

    /// The status the login marked `tag` ended with, and the pane then.
    func finish(_ tag: String) throws -> (status: Int, screen: String) {
        let screen = try shell.waitUntil(timeout: 70, "the login's status") { screen in
            screen.components(separatedBy: "\n").contains { $0.hasPrefix("\(tag)=") }
        }
        let line = screen.components(separatedBy: "\n").first { $0.hasPrefix("\(tag)=") } ?? ""
        return (Int(line.dropFirst(tag.count + 1).trimmingCharacters(in: .whitespaces)) ?? -1, screen)
    }

    @Test func sshsOwnTerminalIsAskedAndALoginFollowsItsAnswer() throws {
        let allowed = try startLogin()
        let asked = try shell.waitFor("Allow? [t]")
        #expect(asked.contains("fob: ssh["))
        #expect(asked.contains("SSH key k"))
        try shell.type("o")
        try shell.press("Enter")
        let login = try finish(allowed)
        #expect(login.status == 0, "\(login.screen)")
        #expect(login.screen.contains("logged-in"))

        let denied = try startLogin()
        _ = try shell.waitFor("Allow? [t]")
        try shell.type("d")
        try shell.press("Enter")
        let refused = try finish(denied)
        #expect(refused.status == 255, "\(refused.screen)")
        #expect(refused.screen.contains("Permission denied (publickey"))
        #expect(!refused.screen.contains("logged-in"))
    }

    @Test func theOpenTerminalUIIsAskedAndALoginFollowsItsAnswer() throws {
        let ui = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", fob],
            environment: agent.fixture.environment)
        try ui.waitFor("Items ")
        for (key, status) in [("o", 0), ("d", 255)] {
            let tag = try startLogin()
            // The request bar: "? ssh[PID] asks for SSH key k (…) … · F3 answer".
            try ui.waitFor("asks for SSH key k", timeout: 20)
            // Keys in the UI's first instants after an unlock by the agent
            // are ignored (typed-ahead passwords): press until the dialog shows.
            var shown = false
            for _ in 0..<10 where !shown {
                try ui.press("F3")
                shown = (try? ui.waitFor("t  this program until the vault locks", timeout: 2)) != nil
            }
            #expect(shown)
            try ui.type(key)
            _ = try ui.waitForAbsence(of: "asks for SSH key k")
            let login = try finish(tag)
            #expect(login.status == status, "\(key): \(login.screen)")
            #expect(login.screen.contains("logged-in") == (status == 0))
            // The question went to the terminal UI, never to ssh's terminal.
            #expect(!login.screen.contains("Allow? [t]"))
        }
    }

    @Test func aLockedVaultAsksItsMasterPasswordOnSSHsTerminalThenTheSignature() throws {
        // The agent lists the public keys it saw while the vault was unlocked.
        let listed = try sshTool("ssh-add", ["-l"], environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(listed.stdoutText.contains(" k (ED25519)"))
        #expect(try agent.fob(["lock"]).status == 0)
        let tag = try startLogin()
        let asked = try shell.waitFor("master password")
        #expect(asked.contains("The vault is locked"))
        let password = try String(contentsOfFile: agent.fixture.vault.passwordFile, encoding: .utf8)
        try shell.type(password.trimmingCharacters(in: .newlines))
        try shell.press("Enter")
        let question = try shell.waitFor("Allow? [t]")
        #expect(!question.contains(password.trimmingCharacters(in: .newlines)))
        try shell.type("o")
        try shell.press("Enter")
        let login = try finish(tag)
        #expect(login.status == 0, "\(login.screen)")
        #expect(try agent.fixture.status()["state"] as? String == "unlocked")
    }

    @Test func aLockedVaultIsUnlockedInTheOpenTerminalUIWhichThenAsksForTheSignature() throws {
        let listed = try sshTool("ssh-add", ["-l"], environment: ["SSH_AUTH_SOCK": agent.socket])
        #expect(listed.stdoutText.contains(" k (ED25519)"))
        let ui = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", fob],
            environment: agent.fixture.environment)
        try ui.waitFor("Items ")
        #expect(try agent.fob(["lock"]).status == 0)
        try ui.waitFor("Master password")
        let tag = try startLogin()
        // The lock screen names who waits for what; the master password typed there answers it.
        try ui.waitFor("waits for SSH key k", timeout: 20)
        let password = try String(contentsOfFile: agent.fixture.vault.passwordFile, encoding: .utf8)
        try ui.type(password.trimmingCharacters(in: .newlines))
        try ui.press("Enter")
        // Unlocked, the UI is asked the signature's consent in its request bar.
        try ui.waitFor("asks for SSH key k", timeout: 20)
        var shown = false
        for _ in 0..<10 where !shown {
            try ui.press("F3")
            shown = (try? ui.waitFor("t  this program until the vault locks", timeout: 2)) != nil
        }
        #expect(shown)
        try ui.type("o")
        let login = try finish(tag)
        #expect(login.status == 0, "\(login.screen)")
        #expect(login.screen.contains("logged-in"))
        // Nothing was asked on ssh's own terminal.
        #expect(!login.screen.contains("master password") && !login.screen.contains("Allow? [t]"))
    }

    @Test func aTerminalUILeftLockedWhileTheVaultIsUnlockedElsewhereDoesNotHoldTheQuestion() throws {
        let ui = try TmuxSession(
            width: 80, height: 24, command: ["/bin/sh", "-c", "\"$@\"; sleep 60", "sh", fob],
            environment: agent.fixture.environment)
        try ui.waitFor("Items ")
        #expect(try agent.fob(["lock"]).status == 0)
        try ui.waitFor("Master password")
        #expect(try agent.fixture.unlock().status == 0)
        // The locked UI cannot answer a consent question: ssh's terminal is asked at once, not after 60 s.
        let tag = try startLogin()
        _ = try shell.waitFor("Allow? [t]", timeout: 15)
        try shell.type("o")
        try shell.press("Enter")
        let login = try finish(tag)
        #expect(login.status == 0, "\(login.screen)")
        #expect(!(try ui.capture()).contains("waits for"))
    }
}

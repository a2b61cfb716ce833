import FobStore
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Defects found by review and black-box runs of the built `fob`, each
/// checked as a process on a pseudo-terminal (no tmux, no X).
@Suite struct HardeningProcessTests {
    /// With OSC 52 (what `auto` picks without tmux, X or Wayland, as over
    /// plain SSH) `fob copy` sets the clipboard, returns 0, and its detached
    /// clearer (in a new session, so without a controlling terminal) clears
    /// it later through the terminal it was handed.
    @Test func copyWithOSC52OnAPlainTerminalCopiesAndClearsLater() throws {
        let v = try ProcessTestVault(password: "pw")
        #expect(try v.run(["add", "mail", "ana"], input: "s3cret").status == 0)
        let session = try FobProcess.startInTerminal([
            "--vault", v.path, "--password-file", v.passwordFile,
            "--clear-after", "1", "copy", "mail", "ana",
        ])
        let set = "\u{1B}]52;c;" + Data("s3cret".utf8).base64EncodedString() + "\u{07}"
        #expect(session.wait() == 0, "\(session.outputText)")
        #expect(session.outputText.contains(set), "\(session.outputText)")
        #expect(!session.outputText.contains("cannot"), "\(session.outputText)")
        #expect(session.waitFor("\u{1B}]52;c;\u{07}", timeout: 10), "the clearer never cleared: \(session.outputText)")
    }

    /// A symbolic link planted as the clearer's state file is neither
    /// followed nor emptied; the copy still works and is still cleared.
    @Test func clearerStateFileSymlinkIsNotFollowed() throws {
        let v = try ProcessTestVault(password: "pw")
        #expect(try v.run(["add", "mail", "ana"], input: "s3cret").status == 0)
        let victim = v.directory.file("victim").path
        try Data("precious\n".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o644)
        #expect(symlink(victim, v.path + ".clearer") == 0)
        let session = try FobProcess.startInTerminal([
            "--vault", v.path, "--password-file", v.passwordFile,
            "--clear-after", "1", "copy", "mail", "ana",
        ])
        #expect(session.wait() == 0, "\(session.outputText)")
        #expect(session.waitFor("\u{1B}]52;c;\u{07}", timeout: 10), "\(session.outputText)")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious\n")
        var info = stat()
        #expect(stat(victim, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o644)
    }

    /// `fob ls` pads its columns by terminal cells: a CJK or emoji service
    /// takes two cells a character, so the next column starts where it does
    /// on the other lines.
    @Test func listPadsColumnsByDisplayCells() throws {
        let v = try ProcessTestVault(password: "pw")
        for (service, account) in [("密码", "ana"), ("🔑", "bo"), ("mail", "cy")] {
            #expect(try v.run(["add", service, account], input: "s").status == 0)
        }
        let listing = try v.run(["ls"])
        #expect(listing.status == 0)
        let lines = listing.stdoutText.split(separator: "\n").map(String.init)
        // SERVICE is the widest service: 7 cells, then two spaces.
        #expect(lines.contains { $0.hasPrefix("SERVICE  ACCOUNT") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("密码" + String(repeating: " ", count: 5) + "ana") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("🔑" + String(repeating: " ", count: 7) + "bo") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("mail" + String(repeating: " ", count: 5) + "cy") }, "\(lines)")
    }

    /// A job stopped at the masked prompt (SIGSTOP, or Ctrl-Z / SIGTSTP) and
    /// resumed after its shell put the terminal back in cooked mode gets the
    /// prompt's raw mode again: what is typed next is masked, not echoed.
    @Test(arguments: [SIGSTOP, SIGTSTP])
    func maskedPromptRestoresRawModeAfterSuspendAndResume(_ stop: Int32) throws {
        let v = try ProcessTestVault(password: "pqr")
        #expect(try v.run(["add", "mail", "ana"], input: "xyz-value").status == 0)
        let session = try FobProcess.startInTerminal(["--vault", v.path, "get", "mail", "ana"])
        #expect(session.waitFor("Master password: "))
        session.send("pq")
        #expect(session.waitFor("••"))
        kill(session.pid, stop)
        usleep(200_000)
        // What a shell does when its job stops: its own (cooked) modes back.
        session.setLocalFlags(session.localFlags | UInt32(ECHO | ICANON))
        kill(session.pid, SIGCONT)
        let deadline = Date().addingTimeInterval(5)
        while session.localFlags & UInt32(ECHO | ICANON) != 0 && Date() < deadline { usleep(10_000) }
        #expect(session.localFlags & UInt32(ECHO) == 0)
        #expect(session.localFlags & UInt32(ICANON) == 0)
        session.send("r")
        // Raw mode: the key arrives at once (no line buffering) and shows as a bullet.
        #expect(session.waitFor("•••", timeout: 5), "\(session.outputText.debugDescription)")
        session.send([0x0D])
        #expect(session.wait() == 0)
        #expect(session.outputText.contains("xyz-value"))
        #expect(!session.outputText.contains("pqr"))
        #expect(!session.outputText.contains("•r"))
    }

    /// Ctrl-C at the masked prompt ends fob with 130, as SIGINT does.
    @Test func ctrlCAtThePromptExits130() throws {
        let v = try ProcessTestVault(password: "pw")
        let session = try FobProcess.startInTerminal(["--vault", v.path, "ls"])
        #expect(session.waitFor("Master password: "))
        session.send([0x03])
        #expect(session.wait() == 130)
        #expect(session.outputText.contains("interrupted"))
    }
}

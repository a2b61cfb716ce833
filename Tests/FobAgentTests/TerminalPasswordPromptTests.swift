import FobSSH
import FobStore
import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

@testable import FobAgent

/// A pseudo-terminal standing for a requester's terminal: the test types on
/// its master side and reads what the prompt wrote.
private final class FakeTerminal {
    let master: Int32
    let slave: Int32
    let path: String

    init() throws {
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        // TIOCSPTLCK and TIOCGPTN, which unlockpt and ptsname use.
        guard master >= 0, ioctl(master, UInt(0x4004_5431), &unlock) == 0,
            ioctl(master, UInt(0x8004_5430), &number) == 0
        else { throw KeychainError.io("no pseudo-terminal") }
        path = "/dev/pts/\(number)"
        slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
    }

    /// What the prompt wrote, read until `text` appears (at most 10 s).
    func read(until text: String) -> String {
        var seen: [UInt8] = []
        let deadline = Date().addingTimeInterval(10)
        var chunk = [UInt8](repeating: 0, count: 512)
        while Date() < deadline && !String(decoding: seen, as: UTF8.self).contains(text) {
            var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 100) > 0 else { continue }
            let n = Glibc.read(master, &chunk, chunk.count)
            if n > 0 { seen += chunk[0..<n] }
        }
        return String(decoding: seen, as: UTF8.self)
    }

    func type(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { write(master, $0.baseAddress, $0.count) } }

    var echoes: Bool {
        var modes = termios()
        tcgetattr(slave, &modes)
        return modes.c_lflag & tcflag_t(ECHO) != 0
    }

    deinit {
        close(slave)
        close(master)
    }
}

private final class Box: @unchecked Sendable {
    var outcome: TerminalPasswordPrompt.Outcome?
}

@Suite(.serialized) struct TerminalPasswordPromptTests {
    /// Asks on `terminal`, types `line`, and reads what the terminal shows until `after`.
    private func ask(on terminal: FakeTerminal, typing line: String, until after: String) -> (
        TerminalPasswordPrompt.Outcome?, String
    ) {
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        let path = terminal.path
        Thread {
            box.outcome = TerminalPasswordPrompt().ask("unlock?\nfob: master password: ", terminal: path, timeout: 10)
            done.signal()
        }.start()
        let shown = terminal.read(until: "master password: ")
        terminal.type(line)
        let rest = terminal.read(until: after)
        _ = done.wait(timeout: .now() + 15)
        return (box.outcome, shown + rest)
    }

    @Test func readsTheLineWithoutEchoAndRestoresTheTerminal() throws {
        let terminal = try FakeTerminal()
        #expect(terminal.echoes)
        let (outcome, screen) = ask(on: terminal, typing: "sesame\n", until: "\n")
        #expect(outcome == .password(SecretBytes(utf8: "sesame")))
        #expect(screen.hasPrefix("unlock?"))
        #expect(!screen.contains("sesame"))
        #expect(terminal.echoes)
    }

    @Test func anEmptyLineRefusesAndNoTerminalIsUnreachable() throws {
        let terminal = try FakeTerminal()
        let (outcome, screen) = ask(on: terminal, typing: "\n", until: "fob: refused")
        #expect(outcome == .refused)
        #expect(screen.contains("fob: refused"))
        #expect(TerminalPasswordPrompt().ask("q", terminal: nil, timeout: 1) == .unreachable)
        #expect(TerminalPasswordPrompt().ask("q", terminal: "/dev/null", timeout: 1) == .unreachable)
    }

    @Test func aSignatureFromARequesterWithATerminalAsksThereNotThroughPinentry() throws {
        let terminal = try FakeTerminal()
        let key = try SSHPrivateKey.generate(.ed25519)
        let requester = Requester(
            pid: 77, uid: getuid(), executable: "/usr/bin/ssh", identity: nil, terminal: terminal.path)
        let sign = SSHSignContext(
            key: key.publicKey, comment: "c", itemName: "work", destination: .unverified, confirm: false,
            peerPID: 77, isUserAuthentication: true, requester: requester)
        // A pinentry that would answer is never run: the terminal is asked.
        let prompt = SSHUnlockPrompt(environment: ["FOB_PINENTRY": "/nonexistent/pinentry"], timeout: 10)
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        Thread {
            box.outcome = prompt.password(for: sign).map { .password($0) } ?? .refused
            done.signal()
        }.start()
        let shown = terminal.read(until: "master password")
        terminal.type("pw\n")
        _ = done.wait(timeout: .now() + 15)
        #expect(box.outcome == .password(SecretBytes(utf8: "pw")))
        #expect(shown.contains("fob: ssh (pid 77, /usr/bin/ssh) asks the SSH agent for a signature with SSH key work"))
        #expect(shown.contains("The vault is locked"))
    }
}

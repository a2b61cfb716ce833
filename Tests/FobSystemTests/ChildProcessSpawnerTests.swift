import FobSystem
import FobTestSupport
import Foundation
@preconcurrency import Glibc
import Testing

/// Runs `/bin/sh -c script` (through FobTestSupport's `runTool`, which
/// starts it with ``ChildProcessSpawner``) with `input` on its stdin.
private func runShell(
    _ script: String, input: [UInt8] = [], environment: [String: String] = ["PATH": "/usr/bin:/bin"],
    newSession: Bool = false
) throws -> (status: Int32, output: String) {
    try runTool("/bin/sh", ["-c", script], input: input, environment: environment, newSession: newSession)
}

/// The hexadecimal signal set on line `name` (`SigIgn`, `SigBlk`) of a `/proc/PID/status` text.
private func signalSet(_ name: String, in status: String) -> UInt64? {
    for line in status.split(separator: "\n") where line.hasPrefix(name + ":") {
        return UInt64(line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }
    return nil
}

@Suite("Child process spawner")
struct ChildProcessSpawnerTests {
    @Test("stdin reaches the child through the pipe; the environment is exactly the one given")
    func stdinAndEnvironment() throws {
        let result = try runShell(
            "printf '%s|' \"$FOB_TEST_VALUE\" \"${HOME-unset}\"; cat",
            input: Array("from stdin".utf8),
            environment: ["PATH": "/usr/bin:/bin", "FOB_TEST_VALUE": "given"])
        #expect(result.status == 0)
        #expect(result.output == "given|unset|from stdin")
    }

    @Test("only descriptors 0, 1 and 2 reach the child, even one not marked close-on-exec")
    func onlyStandardDescriptors() throws {
        let leaky = open("/dev/null", O_RDONLY)
        try #require(leaky > 2)
        defer { close(leaky) }
        let result = try runShell("ls /proc/$$/fd")
        #expect(result.status == 0)
        #expect(result.output.split(separator: "\n").sorted() == ["0", "1", "2"])
    }

    @Test("signals ignored or blocked here are at their defaults and unblocked in the child")
    func signalsReset() throws {
        signal(SIGPIPE, SIG_IGN)
        var block = sigset_t()
        var previous = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGUSR2)
        pthread_sigmask(SIG_BLOCK, &block, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        // The child itself reports (no shell in between, whose own signal
        // handling could show in its status).
        let result = try runTool("/bin/cat", ["/proc/self/status"], environment: [:])
        #expect(result.status == 0)
        let ignored = try #require(signalSet("SigIgn", in: result.output))
        let blocked = try #require(signalSet("SigBlk", in: result.output))
        #expect(ignored & (1 << (UInt64(SIGPIPE) - 1)) == 0)
        #expect(blocked & (1 << (UInt64(SIGUSR2) - 1)) == 0)
    }

    @Test("newSession makes the child a session leader; without it the child stays in this session")
    func newSession() throws {
        // /proc/PID/stat: "pid (comm) state ppid pgrp session …".
        func session(_ stat: String) -> pid_t? {
            guard let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 3 ? pid_t(fields[3]) : nil
        }
        let detached = try runShell("cat /proc/$$/stat", newSession: true)
        #expect(session(detached.output) == pid_t(detached.output.prefix { $0 != " " }))
        let attached = try runShell("cat /proc/$$/stat")
        #expect(session(attached.output) == getsid(0))
    }

    @Test("exit codes and deaths by signal are reported as a shell does")
    func exitCodes() throws {
        #expect(try runShell("exit 3").status == 3)
        #expect(try runShell("kill -TERM $$").status == 128 + SIGTERM)
    }

    @Test("a program that does not exist is a SpawnError with ENOENT, not a crash")
    func missingProgram() throws {
        do {
            _ = try ChildProcessSpawner.spawn(
                executable: "/nonexistent/fob-helper", arguments: [], environment: [:],
                standardInput: .null, standardOutput: .null, standardError: .null)
            Issue.record("spawning a missing program succeeded")
        } catch {
            #expect(error.code == ENOENT)
            #expect(error.description == "posix_spawn /nonexistent/fob-helper: \(String(cString: strerror(ENOENT)))")
        }
    }
}

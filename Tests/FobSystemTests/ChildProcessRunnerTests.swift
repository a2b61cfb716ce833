import FobSystem
import Foundation
@preconcurrency import Glibc
import Testing

/// Fob's one way to run a program and wait for it: input on stdin, outputs
/// read at once, a deadline and a size limit.
@Suite("Child process runner")
struct ChildProcessRunnerTests {
    private let environment = ["PATH": "/usr/bin:/bin"]

    private func shell(
        _ script: String, input: [UInt8] = [], captureError: Bool = false, maxOutput: Int = 1 << 20,
        timeout: Double = 10
    ) throws(ChildProcessFailure) -> ChildProcessResult {
        try ChildProcessRunner.run(
            "/bin/sh", arguments: ["-c", script], environment: environment, input: input,
            captureError: captureError, maxOutput: maxOutput, timeout: timeout)
    }

    @Test func theOutputIsTheStandardOutputByteForByte() throws {
        let input = Array("a secret\u{0}with a NUL".utf8)
        let result = try ChildProcessRunner.run("/bin/cat", environment: environment, input: input, timeout: 10)
        #expect(result.output == input)
        #expect(result.termination == .exited(0))
        #expect(result.errorOutput.isEmpty)
    }

    /// cat writes while it still reads: 3 MiB in and out through two 64 KiB
    /// pipes must not deadlock.
    @Test func anInputLargerThanThePipeWhileTheOutputFillsDoesNotDeadlock() throws {
        let input = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let result = try ChildProcessRunner.run(
            "/bin/cat", environment: environment, input: input, maxOutput: 4 << 20, timeout: 20)
        #expect(result.output == input)
    }

    @Test func standardErrorIsKeptApartUpToItsLimit() throws {
        let result = try ChildProcessRunner.run(
            "/bin/sh", arguments: ["-c", "printf out; printf 'err%.0s' $(seq 3000) >&2"], environment: environment,
            captureError: true, maxError: 6, timeout: 10)
        #expect(String(decoding: result.output, as: UTF8.self) == "out")
        #expect(String(decoding: result.errorOutput, as: UTF8.self) == "errerr")
    }

    @Test func theExitStatusIsReported() throws {
        let result = try shell("exit 7")
        #expect(result.termination == .exited(7))
        #expect(result.status == 7)
        #expect(!result.succeeded)
    }

    @Test func aSignalIsReportedAsTheSignal() throws {
        let result = try shell("kill -TERM $$")
        #expect(result.termination == .signaled(SIGTERM))
        #expect(result.status == 128 + SIGTERM)
    }

    @Test func theDeadlineKillsTheChildAndSaysSo() throws {
        let started = FileDescriptorIO.monotonicNow()
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("fob-runner-\(getpid())").path
        defer { unlink(marker) }
        #expect(throws: ChildProcessFailure.timedOut(seconds: 0.5)) {
            try shell("echo $$ > \(marker); exec sleep 30", timeout: 0.5)
        }
        #expect(FileDescriptorIO.monotonicNow() - started < 5)
        // The child is gone (killed and reaped), not left running.
        let pid =
            pid_t(
                (try? String(contentsOfFile: marker, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                    ?? "") ?? 0
        #expect(pid > 0)
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }

    /// A child that never reads a large input is killed at the deadline
    /// rather than blocking the writer for ever.
    @Test func aChildThatNeverReadsItsInputTimesOut() {
        let input = [UInt8](repeating: 0x61, count: 1 << 20)
        #expect(throws: ChildProcessFailure.timedOut(seconds: 0.5)) {
            try shell("exec sleep 30", input: input, timeout: 0.5)
        }
    }

    @Test func anOutputOverTheLimitIsRefused() {
        let input = [UInt8](repeating: 0x61, count: 100_000)
        #expect(throws: ChildProcessFailure.tooLarge(limit: 1_000)) {
            try ChildProcessRunner.run(
                "/bin/cat", environment: environment, input: input, maxOutput: 1_000, timeout: 10)
        }
    }

    @Test func aMissingExecutableIsNotStartedWithENOENT() {
        do {
            _ = try ChildProcessRunner.run("/nonexistent/program", environment: environment, timeout: 10)
            Issue.record("a missing program must not run")
        } catch {
            guard case .notStarted(let spawn) = error else {
                Issue.record("expected .notStarted, got \(error)")
                return
            }
            #expect(spawn.code == ENOENT)
        }
    }

    @Test func aChildThatLeavesWithoutReadingIsJudgedByItsStatus() throws {
        let input = [UInt8](repeating: 0x61, count: 1 << 20)
        let result = try shell("exit 3", input: input)
        #expect(result.termination == .exited(3))
    }

    @Test func anUncapturedOutputGoesNowhere() throws {
        let result = try ChildProcessRunner.run(
            "/bin/sh", arguments: ["-c", "echo hidden"], environment: environment, captureOutput: false,
            timeout: 10)
        #expect(result.output.isEmpty)
        #expect(result.succeeded)
    }

    @Test func wipeZeroesAndEmptiesBothOutputs() throws {
        var result = try shell("printf abc; printf def >&2", captureError: true)
        result.wipe()
        #expect(result.output.isEmpty && result.errorOutput.isEmpty)
    }

    @Test func appendWipingKeepsTheBytesInOrder() {
        var bytes: [UInt8] = []
        for index in 0..<10_000 { bytes.appendWiping([UInt8(truncatingIfNeeded: index)][...]) }
        #expect(bytes == (0..<10_000).map { UInt8(truncatingIfNeeded: $0) })
    }

    @Test func helpersAreFoundByOverrideOrPath() {
        #expect(
            ExecutableLookup.helper(
                "fob-nothing", override: "FOB_NOTHING", environment: ["FOB_NOTHING": "/nonexistent/x"])
                == nil)
        #expect(
            ExecutableLookup.helper("cat", override: "FOB_NOTHING", environment: ["PATH": "/usr/bin:/bin"])?.hasSuffix(
                "/cat") == true)
        #expect(ExecutableLookup.helper("x", override: "FOB_X", environment: ["FOB_X": "/bin/cat"]) == "/bin/cat")
    }
}

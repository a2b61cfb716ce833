import FobSystem
import Foundation
@preconcurrency import Glibc
import Testing

/// One run of a helper program: input on stdin, answer from stdout, within
/// a deadline and a size limit.
@Suite struct HelperExchangeTests {
    private let environment = ["PATH": "/usr/bin:/bin"]
    private func soon(_ seconds: Double = 10) -> Double { FileDescriptorIO.monotonicNow() + seconds }

    @Test func theAnswerIsTheHelpersStandardOutput() {
        let input = Array("a secret\u{0}with a NUL".utf8)
        guard
            case .answered(let answer) = HelperExchange.run(
                "/bin/cat", input: input, environment: environment,
                deadline: soon(), maxOutput: 1 << 20)
        else {
            Issue.record("cat must answer")
            return
        }
        #expect(answer == input)
    }

    /// cat answers while it still reads: input and answer flow at once.
    @Test func aLargeInputAndAnswerPassWhole() {
        let input = [UInt8](repeating: 0x61, count: 3 << 20)
        guard
            case .answered(let answer) = HelperExchange.run(
                "/bin/cat", input: input, environment: environment,
                deadline: soon(), maxOutput: 4 << 20)
        else {
            Issue.record("cat must answer")
            return
        }
        #expect(answer.count == input.count)
    }

    @Test func aFailingHelperIsFailedNotAnEmptyAnswer() {
        guard
            case .failed = HelperExchange.run(
                "/bin/false", input: [], environment: environment, deadline: soon(), maxOutput: 10)
        else {
            Issue.record("exit 1 must be .failed")
            return
        }
    }

    @Test func aSlowHelperTimesOutAndIsKilled() {
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("fob-slow-helper-\(getpid())")
        try? Data("#!/bin/sh\nexec sleep 30\n".utf8).write(to: script)
        chmod(script.path, 0o755)
        defer { try? FileManager.default.removeItem(at: script) }
        let started = Date()
        guard
            case .timedOut = HelperExchange.run(
                script.path, input: [], environment: ["PATH": "/usr/bin:/bin"],
                deadline: soon(0.5), maxOutput: 10)
        else {
            Issue.record("sleep must time out")
            return
        }
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func anAnswerOverTheLimitIsRefused() {
        let input = [UInt8](repeating: 0x61, count: 100_000)
        guard
            case .tooLarge = HelperExchange.run(
                "/bin/cat", input: input, environment: environment, deadline: soon(), maxOutput: 1_000)
        else {
            Issue.record("a long answer must be .tooLarge")
            return
        }
    }

    @Test func aMissingHelperIsNotStartedOrNotFound() {
        guard
            case .notStarted = HelperExchange.run(
                "/nonexistent/helper", input: [], environment: environment, deadline: soon(), maxOutput: 10)
        else {
            Issue.record("a missing program must be .notStarted")
            return
        }
        #expect(
            HelperExchange.locate(
                "fob-nothing", override: "FOB_NOTHING", environment: ["FOB_NOTHING": "/nonexistent/x"]) == nil)
        #expect(
            HelperExchange.locate("cat", override: "FOB_NOTHING", environment: ["PATH": "/usr/bin:/bin"])?.hasSuffix(
                "/cat") == true)
        #expect(HelperExchange.locate("x", override: "FOB_X", environment: ["FOB_X": "/bin/cat"]) == "/bin/cat")
    }

    @Test func wipeZeroesEveryByte() {
        var bytes: [UInt8] = [1, 2, 3, 4]
        HelperExchange.wipe(&bytes)
        #expect(bytes == [0, 0, 0, 0])
    }
}

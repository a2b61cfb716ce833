import FobSystem
import FoundationEssentials
@preconcurrency import Glibc
import Testing

@testable import FobSecretService

@Suite struct PinentryTests {
    /// Waits up to 5 s for `condition`.
    static func wait(_ condition: () -> Bool) -> Bool {
        for _ in 0..<500 {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    @Test func cancellingAPinentryThatEndedAndWasReapedSignalsNothing() throws {
        // Ends at once without a word: the conversation gives up and reaps it.
        let pinentry = try #require(PinentryUnlock.start(program: "/bin/true", environment: [:]) { _ in false })
        #expect(Self.wait { pinentry.isReaped })
        #expect(pinentry.gaveUp)
        // Its pid may name another process by now: no SIGTERM goes to it.
        #expect(pinentry.cancel() == false)
    }

    @Test func cancellingARunningPinentryEndsIt() throws {
        // Waits for input that never comes, as a pinentry waiting for its user.
        let pinentry = try #require(PinentryUnlock.start(program: "/bin/cat", environment: [:]) { _ in false })
        #expect(!pinentry.isReaped)
        #expect(pinentry.cancel() == true)
        #expect(Self.wait { pinentry.isReaped })
        #expect(pinentry.gaveUp)
        #expect(pinentry.cancel() == false)
    }
}

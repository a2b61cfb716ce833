import FobSystem
import Foundation

/// A clock that moves only when told to, for tests.
public final class TestClock: WallClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    /// Creates a clock reading `start` (default: 2026-01-01 00:00:00 UTC).
    public init(start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = start
    }

    /// The time the clock was last set to.
    public var now: Date { lock.withLock { current } }

    /// Moves the clock forward.
    /// - Parameter seconds: how far to move, in seconds (may be fractional).
    public func advance(by seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }

    /// Moves the clock forward by `seconds`; see ``advance(by:)``.
    public func advance(_ seconds: TimeInterval) { advance(by: seconds) }

    /// A closure reading this clock, for code that takes `() -> Date`.
    public var function: @Sendable () -> Date { { [self] in self.now } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        lock.withLock { current = date }
    }
}

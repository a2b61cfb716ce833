import Foundation

/// The source of the current time for the view models: idle lock, clipboard
/// auto-clear, token expiry and refresh polling all read it, so tests can
/// drive time without sleeping.
///
/// This protocol shadows the standard library's `Clock` inside code that
/// imports FobViewModels; write `FobViewModels.Clock` where both are meant.
public protocol Clock: AnyObject, Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's wall clock (`Date()`).
public final class LiveClock: Clock {
    /// Creates the wall clock.
    public init() {}
    /// The current system time.
    public var now: Date { Date() }
}

/// A clock that moves only when told to, for tests.
public final class TestClock: Clock, @unchecked Sendable {
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

    /// Sets the clock to `date`.
    public func set(_ date: Date) {
        lock.withLock { current = date }
    }
}

import FoundationEssentials

/// The source of the current time: idle lock, clipboard auto-clear, token
/// expiry and refresh polling all read it, so tests can drive time without
/// sleeping (FobTestSupport's `TestClock`).
///
/// Named apart from the standard library's `Clock`, which measures
/// instants of a monotonic clock; this one tells the date.
public protocol WallClock: AnyObject, Sendable {
    /// The current time.
    var now: Date { get }
}

/// The system's wall clock (`Date()`).
public final class LiveClock: WallClock {
    /// Creates the wall clock.
    public init() {}
    /// The current system time.
    public var now: Date { Date() }
}

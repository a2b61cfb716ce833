import FoundationEssentials

/// The idle-lock policy: the app locks after ``lockAfter`` seconds without
/// input (docs/agent.md, "Clipboard, idle lock and logout"). Holds no clock: every
/// question takes the current time, so tests drive it with any clock.
public struct IdleLock: Sendable, Equatable {
    /// Seconds without input before the lock; 0 = never.
    public let lockAfter: TimeInterval
    /// When the last input arrived.
    public private(set) var lastInput: Date

    /// - Parameters:
    ///   - lockAfter: idle seconds before locking; 0 = never.
    ///   - now: the current time, counted as the last input.
    public init(lockAfter: TimeInterval, now: Date) {
        self.lockAfter = lockAfter
        lastInput = now
    }

    /// When the lock falls due if no input comes, or `nil` when it is off.
    public var deadline: Date? { lockAfter > 0 ? lastInput.addingTimeInterval(lockAfter) : nil }

    /// Records input at `now`: the timer starts again.
    public mutating func noteInput(_ now: Date) { lastInput = now }

    /// Whether the idle time has run out at `now`.
    public func isDue(_ now: Date) -> Bool {
        lockAfter > 0 && now.timeIntervalSince(lastInput) >= lockAfter
    }
}

import Foundation

/// Values that arrive on other threads (events, notifications), each with
/// the time it arrived, for a test to wait on.
public final class ArrivalLog<Value: Equatable & Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var arrivals: [(value: Value, at: Date)] = []

    public init() {}

    /// Records `value` as arrived now.
    public func append(_ value: Value) {
        condition.lock()
        arrivals.append((value, Date()))
        condition.broadcast()
        condition.unlock()
    }

    /// When `value` first arrived, waiting at most `timeout` seconds for it; `nil` if it did not.
    public func arrival(of value: Value, timeout: TimeInterval = 2) -> Date? {
        condition.lock()
        defer { condition.unlock() }
        let until = Date(timeIntervalSinceNow: timeout)
        while true {
            if let found = arrivals.first(where: { $0.value == value }) { return found.at }
            if !condition.wait(until: until) { return arrivals.first { $0.value == value }?.at }
        }
    }
}

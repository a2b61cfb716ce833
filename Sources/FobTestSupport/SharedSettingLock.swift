import Foundation

/// Serialises tests, across suites and test targets, that change one
/// process-wide setting. Tests of all targets run in one process and in
/// parallel; those that configure the same global must take its lock.
public final class SharedSettingLock: @unchecked Sendable {
    /// For tests that call `FobKeychain.configure(…)` / `reset()` (FobSecurity's
    /// process-wide vault choice).
    public static let secItemVault = SharedSettingLock()

    private let lock = NSRecursiveLock()

    /// Runs `body` while holding the lock; nested calls on one thread are allowed.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

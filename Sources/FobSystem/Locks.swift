import FoundationEssentials
@preconcurrency import Glibc

/// A mutual-exclusion lock over a POSIX mutex (`pthread_mutex_t`), for
/// state that several members guard together with `lock()`/`unlock()`
/// pairs. Where one value is guarded, `Synchronization.Mutex` says more.
/// Not recursive: locking it twice on one thread deadlocks.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Waits for the lock and takes it.
    public func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock taken by this thread.
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` holding the lock.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws, after releasing the lock.
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A lock with a condition variable (`pthread_mutex_t` and
/// `pthread_cond_t`): threads wait, holding the lock, until another
/// changes the state it guards and broadcasts.
public final class Condition: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    /// A new, unlocked condition.
    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Waits for the lock and takes it.
    public func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock taken by this thread.
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes every thread waiting on the condition.
    public func broadcast() { pthread_cond_broadcast(cond) }

    /// Wakes one thread waiting on the condition.
    public func signal() { pthread_cond_signal(cond) }

    /// Releases the lock, waits for a broadcast or signal (or a spurious
    /// wake-up) and takes the lock again. Call it holding the lock.
    public func wait() { pthread_cond_wait(cond, mutex) }

    /// Like ``wait()``, but gives up at `deadline` (wall clock).
    /// - Returns: `false` when the deadline passed, `true` when woken.
    public func wait(until deadline: Date) -> Bool {
        let seconds = deadline.timeIntervalSince1970
        guard seconds.isFinite else {
            wait()
            return true
        }
        let whole = seconds.rounded(.down)
        var time = timespec(
            tv_sec: Int(max(0, min(whole, Double(Int32.max) * 4))),
            tv_nsec: Int(max(0, min((seconds - whole) * 1e9, 999_999_999))))
        return pthread_cond_timedwait(cond, mutex, &time) == 0
    }
}

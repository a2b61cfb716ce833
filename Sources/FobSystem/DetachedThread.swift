import FoundationEssentials
@preconcurrency import Glibc

/// Threads of their own (POSIX threads), for work that blocks for long:
/// serving one agent connection, reading a subscription, talking to a
/// pinentry child.
public enum DetachedThread {
    /// Starts `body` on a new detached thread.
    /// - Parameters:
    ///   - stackSize: the thread's stack in bytes (at least `PTHREAD_STACK_MIN`).
    ///   - body: the work; the thread ends when it returns.
    /// - Returns: whether the thread started (`pthread_create` can fail
    ///   when the process is out of threads or memory); when it did not,
    ///   `body` was not run.
    @discardableResult
    public static func start(stackSize: Int = 1 << 20, _ body: @escaping @Sendable () -> Void) -> Bool {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
        let box = Unmanaged.passRetained(Work(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, &attributes,
            { context in
                let work = Unmanaged<Work>.fromOpaque(context!).takeRetainedValue()
                work.body()
                return nil
            }, box)
        if started != 0 {
            Unmanaged<Work>.fromOpaque(box).release()
            return false
        }
        return true
    }

    /// Sleeps the calling thread for `seconds` (resuming after signals).
    /// - Parameter seconds: how long; nothing happens for 0 or less.
    public static func sleep(seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        let whole = seconds.rounded(.down)
        var request = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }

    private final class Work: @unchecked Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

import Dispatch
import FobSystem
import FoundationEssentials

/// Runs clipboard work somewhere other than the input thread.
public protocol BackgroundRunner: Sendable {
    /// Runs `work` later, in submission order.
    func run(_ work: @escaping @Sendable () -> Void)
    /// Waits until everything submitted so far has run, at most `timeout` seconds.
    /// - Returns: whether it finished in time.
    @discardableResult
    func drain(timeout: TimeInterval) -> Bool
}

/// A serial dispatch queue: the live runner.
public final class SerialQueueRunner: BackgroundRunner {
    private let queue = DispatchQueue(label: "fob.clipboard")
    /// Creates the runner with its own serial queue.
    public init() {}
    public func run(_ work: @escaping @Sendable () -> Void) { queue.async(execute: work) }
    public func drain(timeout: TimeInterval) -> Bool {
        let done = DispatchSemaphore(value: 0)
        queue.async { done.signal() }
        return done.wait(timeout: .now() + timeout) == .success
    }
}

/// Runs work at once on the caller's thread: for tests.
public struct InlineRunner: BackgroundRunner {
    /// Creates the runner.
    public init() {}
    public func run(_ work: @escaping @Sendable () -> Void) { work() }
    public func drain(timeout: TimeInterval) -> Bool { true }
}

/// Something the clipboard did, reported back to the UI.
public enum ClipboardEvent: Sendable, Equatable {
    /// The value is on the clipboard (`clearAfter` seconds, 0 = never).
    case copied(clearAfter: TimeInterval)
    /// The copy failed.
    case copyFailed(ClipboardError)
    /// A clear ran.
    case cleared(ClearOutcome)
}

/// Copies secrets with auto-clear: clears after `clearAfter` seconds (0 =
/// never) if the clipboard still holds our value, leaves text copied since
/// alone, restarts the timer on a second copy, and clears on demand (lock,
/// logout wipe, exit). Helpers run on a ``BackgroundRunner``; the UI calls
/// ``tick()`` on its timer and reads ``takeEvents()``.
public final class ClipboardController: @unchecked Sendable {
    /// The mechanism in use.
    public let clipboard: any Clipboard
    /// Seconds before a copied value is cleared; 0 = never.
    public let clearAfter: TimeInterval
    private let clock: any WallClock
    private let runner: any BackgroundRunner
    private let lock = Lock()
    private var ours: SecretBytes?
    private var deadline: Date?
    private var events: [ClipboardEvent] = []

    /// - Parameters:
    ///   - clipboard: the mechanism.
    ///   - clearAfter: seconds until the auto-clear (default 45; 0 = never).
    ///   - clock: time source for the deadline.
    ///   - runner: where helpers run (default a serial background queue).
    public init(
        clipboard: any Clipboard, clearAfter: TimeInterval = 45, clock: any WallClock = LiveClock(),
        runner: any BackgroundRunner = SerialQueueRunner()
    ) {
        self.clipboard = clipboard
        self.clearAfter = clearAfter
        self.clock = clock
        self.runner = runner
    }

    /// When the current value will be cleared, if one is pending.
    public var clearDeadline: Date? { lock.withLock { deadline } }

    /// Whether a value of ours may still be on the clipboard.
    public var holdsOurValue: Bool { lock.withLock { ours != nil } }

    /// Copies `secret` in the background and (re)starts the clear timer.
    /// - Parameters:
    ///   - secret: the bytes to copy.
    ///   - validFor: seconds the value stays valid (a one-time code until
    ///     it rolls over), or `nil`: it is cleared then if that comes before
    ///     ``clearAfter`` (or when ``clearAfter`` is 0).
    public func copy(_ secret: SecretBytes, validFor: TimeInterval? = nil) {
        let after: TimeInterval
        if let validFor, clearAfter == 0 || validFor < clearAfter {
            after = max(validFor, 0.001)
        } else {
            after = clearAfter
        }
        lock.withLock {
            ours = secret
            deadline = after > 0 ? clock.now.addingTimeInterval(after) : nil
        }
        let clipboard = self.clipboard
        schedule { [weak self] in
            do throws(ClipboardError) {
                try clipboard.copy(secret)
                self?.post(.copied(clearAfter: after))
            } catch {
                self?.forget(secret)
                self?.post(.copyFailed(error))
            }
        }
    }

    /// Clears when the deadline has passed. Call on every UI tick.
    public func tick() {
        let due: SecretBytes? = lock.withLock {
            guard let deadline, clock.now >= deadline, let value = ours else { return nil }
            self.deadline = nil
            ours = nil
            return value
        }
        if let due { clearInBackground(due, reportAll: true) }
    }

    /// Clears now if the clipboard holds our value (lock, logout wipe); posts
    /// an event only if clearing fails.
    public func clearNow() {
        let value: SecretBytes? = lock.withLock {
            defer {
                ours = nil
                deadline = nil
            }
            return ours
        }
        if let value { clearInBackground(value, reportAll: false) }
    }

    /// Clears if ours and waits for pending helper work (program exit).
    /// - Parameter timeout: the longest wait, in seconds.
    public func shutdown(timeout: TimeInterval = 3) {
        clearNow()
        runner.drain(timeout: timeout)
    }

    /// Events since the last call, oldest first.
    public func takeEvents() -> [ClipboardEvent] {
        lock.withLock {
            defer { events.removeAll() }
            return events
        }
    }

    /// - Parameter reportAll: post every outcome (timed clear); otherwise
    ///   only failures (a clear on lock or logout keeps that message).
    private func clearInBackground(_ value: SecretBytes, reportAll: Bool) {
        let clipboard = self.clipboard
        schedule { [weak self] in
            let outcome = clipboard.clearIfHolds(value)
            if case .failed = outcome {
                self?.post(.cleared(outcome))
            } else if reportAll {
                self?.post(.cleared(outcome))
            }
        }
    }

    /// Runs clipboard work on the runner, or at once for mechanisms that
    /// must stay on the caller's thread (OSC 52).
    private func schedule(_ work: @escaping @Sendable () -> Void) {
        if clipboard.runsOnCallerThread { work() } else { runner.run(work) }
    }

    private func forget(_ secret: SecretBytes) {
        lock.withLock {
            if let ours, ours === secret {
                self.ours = nil
                deadline = nil
            }
        }
    }

    private func post(_ event: ClipboardEvent) {
        lock.withLock { events.append(event) }
    }
}

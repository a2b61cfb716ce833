import FobStore
import FobSystem
import FoundationEssentials

/// The subscribers of one agent (``AgentRequest/subscribe``): one queue of
/// ``AgentEvent``s each, filled by ``publish(_:)`` and drained by the
/// connection that serves it. Thread-safe.
final class AgentSubscribers: @unchecked Sendable {
    private let condition = Condition()
    private var queues: [Int: [AgentEvent]] = [:]
    private var nextID = 0
    private var work = false

    /// The most subscribers at once; a later subscription is refused.
    static let limit = 64

    /// Whether nobody listens.
    var isEmpty: Bool {
        condition.lock()
        defer { condition.unlock() }
        return queues.isEmpty
    }

    /// A new subscriber's id, or `nil` past ``limit``.
    func add() -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard queues.count < AgentSubscribers.limit else { return nil }
        nextID += 1
        queues[nextID] = []
        return nextID
    }

    /// Forgets a subscriber.
    func remove(_ id: Int) {
        condition.lock()
        queues[id] = nil
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `events` for every subscriber.
    func publish(_ events: [AgentEvent]) {
        guard !events.isEmpty else { return }
        condition.lock()
        for id in queues.keys { queues[id]?.append(contentsOf: events) }
        condition.broadcast()
        condition.unlock()
    }

    /// The events queued for `id`, waiting at most `timeout` seconds for
    /// one; empty after the timeout; `nil` when `id` is gone.
    func next(_ id: Int, timeout: Double) -> [AgentEvent]? {
        condition.lock()
        defer { condition.unlock() }
        let until = Date(timeIntervalSinceNow: timeout)
        while queues[id]?.isEmpty == true {
            if !condition.wait(until: until) { break }
        }
        guard let events = queues[id] else { return nil }
        queues[id] = []
        return events
    }

    /// Wakes the watcher at once (after a write of the agent's own).
    func wake() {
        condition.lock()
        work = true
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until ``wake()`` or `timeout` seconds pass; `false` once
    /// nobody listens any more (the watcher then stops).
    func waitForWork(timeout: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let until = Date(timeIntervalSinceNow: timeout)
        while !work && !queues.isEmpty {
            if !condition.wait(until: until) { break }
        }
        work = false
        return !queues.isEmpty
    }
}

/// What a subscriber saw of the vault last: each item's key and its
/// ``Item/revision``, which every write of the item increments. A new
/// listing is compared with it to tell what was added, changed and deleted,
/// whoever wrote (the agent or another process).
struct VaultSnapshot {
    var items: [ItemKey: UInt64] = [:]

    init(_ items: [Item]) {
        for item in items { self.items[ItemKey(item)] = item.revision }
    }

    /// The events that lead from `self` to `next`, deletions last; an
    /// addition or a change carries the item's revision after it.
    func events(to next: VaultSnapshot) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for (key, revision) in next.items {
            switch items[key] {
            case nil: events.append(AgentEvent(kind: .added, key: key, revision: revision))
            case let before? where before != revision:
                events.append(AgentEvent(kind: .changed, key: key, revision: revision))
            default: break
            }
        }
        for key in items.keys where next.items[key] == nil { events.append(AgentEvent(kind: .deleted, key: key)) }
        return events
    }
}

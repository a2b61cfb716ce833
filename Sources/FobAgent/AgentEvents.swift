import FobStore
import FobSystem
import FoundationEssentials

/// The subscribers of one agent (``AgentRequest/subscribe``): one queue of
/// ``AgentEvent``s each, filled by ``publish(_:)`` and drained by the
/// connection that serves it. Thread-safe.
final class AgentSubscribers: @unchecked Sendable {
    private let condition = Condition()
    private var queues: [Int: [AgentEvent]] = [:]
    private var terminalUIs: Set<Int> = []
    private var nextID = 0
    /// Called (outside the lock) when a subscriber goes away.
    var onRemove: @Sendable () -> Void = {}
    private var work = false

    /// The most subscribers at once; a later subscription is refused.
    static let limit = 64

    /// Whether nobody listens.
    var isEmpty: Bool {
        condition.lock()
        defer { condition.unlock() }
        return queues.isEmpty
    }

    /// Whether a subscriber is Fob's own terminal UI (``AccessContext/isTerminalUI``).
    var hasTerminalUI: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !terminalUIs.isEmpty
    }

    /// A new subscriber's id, or `nil` past ``limit``.
    /// - Parameter terminalUI: whether the peer is Fob's own terminal UI,
    ///   which also hears consent questions.
    func add(terminalUI: Bool = false) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard queues.count < AgentSubscribers.limit else { return nil }
        nextID += 1
        queues[nextID] = []
        if terminalUI { terminalUIs.insert(nextID) }
        return nextID
    }

    /// Forgets a subscriber.
    func remove(_ id: Int) {
        condition.lock()
        queues[id] = nil
        terminalUIs.remove(id)
        condition.broadcast()
        condition.unlock()
        onRemove()
    }

    /// Queues `events` for every subscriber, or only for the terminal UIs.
    func publish(_ events: [AgentEvent], toTerminalUIsOnly: Bool = false) {
        guard !events.isEmpty else { return }
        condition.lock()
        for id in toTerminalUIsOnly ? Array(terminalUIs) : Array(queues.keys) {
            queues[id]?.append(contentsOf: events)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Queues `events` for subscriber `id` alone.
    func publish(_ events: [AgentEvent], to id: Int) {
        guard !events.isEmpty else { return }
        condition.lock()
        queues[id]?.append(contentsOf: events)
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

/// The items of the vault as the agent knows them (``VaultSnapshot``), and
/// when it read them: the vault's ``Vault/contentGeneration`` and write counter.
struct KnownItems {
    var generation: UInt64
    var counter: UInt64?
    var snapshot: VaultSnapshot
}

/// Every item of the vault at ``ItemDetail/listing`` (its summary), by
/// persistent ID. A new reading is compared with it to tell what was added,
/// changed, renamed and deleted, whoever wrote (the agent or another
/// process); the ``Item/revision``, which every write of an item
/// increments, tells a change.
struct VaultSnapshot {
    private(set) var items: [UUID: Item] = [:]

    init(_ items: [Item]) {
        self.items.reserveCapacity(items.count)
        for item in items { self.items[item.persistentID] = ItemOperations.listed(item) }
    }

    /// The events that lead from `self` to `next`, deletions last; each
    /// carries the item's summary (as it was, for a deletion).
    func events(to next: VaultSnapshot) -> [AgentEvent] {
        var events: [AgentEvent] = []
        for (id, item) in next.items {
            guard let before = items[id] else {
                events.append(AgentEvent(kind: .added, summary: item))
                continue
            }
            let oldKey = ItemKey(before)
            if oldKey != ItemKey(item) || before.internetKeyParts != item.internetKeyParts {
                events.append(AgentEvent(kind: .renamed, summary: item, oldKey: oldKey))
            } else if before.revision != item.revision {
                events.append(AgentEvent(kind: .changed, summary: item))
            }
        }
        for (id, item) in items where next.items[id] == nil { events.append(AgentEvent(kind: .deleted, summary: item)) }
        return events
    }

    /// Applies item events (of a write whose changes are known) in order.
    mutating func apply(_ events: [AgentEvent]) {
        for event in events {
            guard let id = event.id else { continue }
            switch event.kind {
            case .deleted: items[id] = nil
            case .added, .changed, .renamed: items[id] = event.summary
            case .locked, .unlocked, .question, .settled: continue
            }
        }
    }

    /// The summaries in the order people read (``ListingOrder``).
    var listing: [Item] {
        ListingOrder.sorted(Array(items.values)) { ($0.service, $0.account, $0.accessGroup) }
    }
}

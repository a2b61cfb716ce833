import FobSystem

/// Values read from the unlocked vault, by name, each kept while the vault
/// stays unlocked and unchanged (``AgentCore/unlockedStamp()``): a write by
/// anyone, a lock or a timeout gives a new stamp, and the next lookup reads
/// again. A value read while the vault changed is returned but not kept.
final class StampedCache<Value>: @unchecked Sendable {
    private let core: AgentCore
    private let lock = Lock()
    private var entries: [String: (stamp: AgentCore.Stamp, value: Value)] = [:]

    /// - Parameter core: the agent whose vault the values come from.
    init(core: AgentCore) { self.core = core }

    /// The value of `name`: the one kept at `stamp` (every value kept at
    /// another stamp is dropped), else what `read` gives, kept when the
    /// vault's stamp is still `stamp` after it.
    /// - Parameters:
    ///   - stamp: the vault's stamp now, taken by the caller before it
    ///     decides what a locked vault means to it.
    ///   - read: reads the value from the vault; `nil` when there is none.
    /// - Throws: what `read` throws; nothing is kept then.
    func value<Failure: Error>(
        _ name: String, at stamp: AgentCore.Stamp, read: () throws(Failure) -> Value?
    ) throws(Failure) -> Value? {
        lock.lock()
        entries = entries.filter { $0.value.stamp == stamp }
        let kept = entries[name]?.value
        lock.unlock()
        if let kept { return kept }
        guard let fresh = try read() else { return nil }
        if core.unlockedStamp() == stamp {
            lock.lock()
            entries[name] = (stamp, fresh)
            lock.unlock()
        }
        return fresh
    }

    /// Drops every value kept (at a lock, or a change seen on the feed).
    func removeAll() {
        lock.lock()
        entries.removeAll()
        lock.unlock()
    }

    /// How many values are kept now.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}

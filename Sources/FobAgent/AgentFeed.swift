import FobStore
import FobSystem
import FoundationEssentials

/// The agent's change feed: what the agent knows of the vault's items (each
/// one's summary by persistent ID, as of a ``Vault/contentGeneration`` and
/// write counter), and the publishing of each change to the subscribers,
/// once, whoever wrote.
///
/// Not thread-safe by itself: ``AgentCore`` calls it with its own lock held
/// (the ``subscribers`` are thread-safe and drained without it).
final class AgentFeed: @unchecked Sendable {
    /// The subscribers of the change feed.
    let subscribers = AgentSubscribers()
    /// The items known (`nil` while locked, or before the first need). It
    /// answers ``AgentRequest/getItems(ids:detail:)`` without a scan, and the
    /// feed compares the vault with it.
    private var known: KnownItems?
    /// Whether the feed last told its subscribers that the vault is unlocked.
    private var saysUnlocked = false

    /// The items known now, read again when the vault changed since (another
    /// process wrote): then each difference is published, once. `nil` while
    /// only `afterFirstUnlock` items are open, or when the vault cannot be read.
    func snapshot(of vault: Vault) -> VaultSnapshot? {
        guard vault.lockLevel == .unlocked else { return nil }
        if let known, known.generation == vault.contentGeneration { return known.snapshot }
        guard let items = try? vault.allItems() else { return nil }
        let now = VaultSnapshot(items)
        if let known { subscribers.publish(known.snapshot.events(to: now)) }
        known = KnownItems(generation: vault.contentGeneration, counter: vault.writeCounter, snapshot: now)
        return now
    }

    /// Forgets the known items (a lock, a timeout, a replaced file) and
    /// tells the subscribers, once, that the vault locked.
    func forget() {
        known = nil
        if saysUnlocked { subscribers.publish([AgentEvent(kind: .locked, key: nil)]) }
        saysUnlocked = false
    }

    /// Tells the subscribers that the vault was just unlocked (after ``forget()``).
    func announceUnlock() {
        forget()
        saysUnlocked = true
        subscribers.publish([AgentEvent(kind: .unlocked, key: nil)])
    }

    /// A new subscriber's starting point: the vault's state now (`nil`: locked).
    func startFrom(_ vault: Vault?) {
        if let vault, vault.lockLevel == .unlocked {
            saysUnlocked = true
            _ = snapshot(of: vault)
        } else {
            saysUnlocked = false
        }
    }

    /// One look of the watcher at `vault` (`nil` or not fully unlocked: the
    /// feed says locked): an unlock not yet told, and what changed since.
    func look(at vault: Vault?) {
        guard let vault, vault.lockLevel == .unlocked else {
            forget()
            return
        }
        if !saysUnlocked {
            known = nil
            saysUnlocked = true
            subscribers.publish([AgentEvent(kind: .unlocked, key: nil)])
        }
        _ = snapshot(of: vault)
    }

    /// Publishes the changes of the agent's own write and patches the known
    /// items with them (those a listing shows:
    /// ``ItemQuery/isListed(accessGroup:)``), when nothing else changed the
    /// vault since they were read (the write counter grew by this write
    /// alone); otherwise the watcher compares the vault with them and
    /// publishes everything once.
    /// - Parameters:
    ///   - changes: the write's events.
    ///   - before: the vault's content generation and write counter before the write.
    ///   - vault: the vault written.
    func publishOwn(_ changes: [AgentEvent], before: (UInt64, UInt64?), _ vault: Vault) {
        guard var now = known, now.generation == before.0, let counter = now.counter, before.1 == counter,
            vault.writeCounter == counter + (changes.isEmpty ? 0 : 1)
        else {
            subscribers.wake()
            return
        }
        // Sync's own records (a reserved access group) are in no listing.
        let listed = changes.filter { $0.key.map { ItemQuery.isListed(accessGroup: $0.accessGroup) } ?? true }
        now.snapshot.apply(listed)
        now.generation = vault.contentGeneration
        now.counter = vault.writeCounter
        known = now
        subscribers.publish(listed)
    }
}

import FobAccess
import FobAgent // AgentEvent, which KeychainStore.watch hands on (docs/design.md)
import FobSessions
import FobStore
import FobSystem
import FoundationEssentials

/// Keeps the main screen's list in step with the store: reloads it, hears
/// of changes made by other processes (the store's ``KeychainStore/watch(_:)``
/// while it has one, as the agent's store does; else by polling its data
/// version), and remembers each token's expiry so a reload decrypts only
/// tokens that changed. Sync's overview is read in the background after
/// each reload (``BackgroundJob``; its store calls through a
/// ``UIThreadStore``) and shown at the tick after it ends: until then the
/// list keeps the marks it had.
final class ItemRefresh {
    /// How often ``poll(_:now:)`` asks the store whether it changed, in seconds.
    static let pollInterval: TimeInterval = 0.5

    private let store: any KeychainStore
    private var lastPoll: Date?
    private var knownVersion: Int64?
    private var expiryCache: [ItemKey: (modified: Date, expires: Date?)] = [:]
    private var watch: (any StoreWatch)?
    /// The agent's consent questions while the store reads the vault itself
    /// (unlocked here and handed to the agent), whose ``watch`` is then `nil`.
    private var questions: (any StoreWatch)?
    private let changed = ChangeFlag()

    /// Where sync's conflicts and last figures are read, or `nil` without sync.
    private let sync: (any SyncConflictSource)?
    /// Where the overview's read reaches the store on the UI thread.
    private let mailbox: UIThreadMailbox
    /// The overview being read, and the items a reload listed while it ran
    /// (read again once it ends).
    private var syncRead: BackgroundJob<Result<SyncOverview?, any Error>>?
    private var syncReadAgain: [Item]?

    /// Where the feed's consent questions go (``ConsentDesk``).
    private let consent: ConsentInbox

    init(store: any KeychainStore, sync: (any SyncConflictSource)?, mailbox: UIThreadMailbox, consent: ConsentInbox) {
        self.consent = consent
        self.store = store
        self.sync = sync
        self.mailbox = mailbox
    }

    deinit {
        watch?.cancel()
        questions?.cancel()
    }

    /// Reloads `main`'s list from the store, keeping selection and filter.
    /// When the item the form's retrieved values came from is gone, clears them.
    /// - Returns: whether the retrieved values were cleared.
    @discardableResult
    func reload(_ main: MainModel, now: Date) -> Bool {
        if watch?.isActive != true {
            changed.reset()
            watch = store.watch { [changed, consent] event in
                // Once the agent locks, it tells of nothing more: poll again.
                switch event.kind {
                case .locked: changed.end()
                case .added, .changed, .renamed:
                    changed.raise(event.summary.map { ItemChange.stored($0, formerly: event.oldKey) } ?? .unknown)
                case .deleted: changed.raise(event.key.map(ItemChange.deleted) ?? .unknown)
                case .unlocked: changed.raise(.unknown)
                case .question, .settled: consent.post(event)
                }
            }
        }
        if watch != nil {
            questions?.cancel()
            questions = nil
        } else if questions?.isActive != true {
            questions = store.watchAgent { [consent] event in
                if event.kind == .question || event.kind == .settled { consent.post(event) }
            }
        }
        knownVersion = try? store.dataVersion()
        let shown = main.form.retrievedKey
        let shownID = shown.flatMap { main.list.persistentID(of: $0) }
        let items: [Item]
        do { items = try store.allItems() } catch {
            main.form.message = .error(error.description)
            return false
        }
        var seen = Set<ItemKey>()
        var rows = items.map { item -> ItemRow in
            seen.insert(ItemKey(item))
            return row(for: item)
        }
        expiryCache = expiryCache.filter { seen.contains($0.key) }
        if let versions = main.sync?.versions, !versions.isEmpty {
            for i in rows.indices { rows[i].versions = versions[rows[i].key] ?? 0 }
        }
        readSync(listed: items)
        main.list.replace(with: rows)
        main.list.updateExpiryTexts(now: now)
        if let shown, !seen.contains(shown) {
            // Renamed elsewhere: the same item (by its persistent id) under its new name.
            if let new = main.list.renames[shown] ?? shownID.flatMap(main.list.key(persistentID:)) {
                follow(main, renameOf: shown, to: new)
                return false
            }
            main.form.clearRetrieved()
            return true
        }
        return false
    }

    /// The form's retrieved item was renamed elsewhere: its values stay,
    /// under the new name, and the status line says so (the editor follows
    /// at its next look, ``EditorSession/followOpenedItem()``).
    private func follow(_ main: MainModel, renameOf old: ItemKey, to new: ItemKey) {
        main.list.noteRename(old, to: new)
        main.form.retrievedKey = new
        main.form.retrievedID = new.account
        main.form.message = .info("Renamed elsewhere: \(old.shortName) is now \(new.shortName)")
    }

    /// Reloads `main` when the store's watch told of a change, else (at
    /// most every ``pollInterval``) when another process changed the store,
    /// saying so when the item shown in the form went away; then brings the
    /// expiry texts up to `now`.
    func poll(_ main: MainModel, now: Date) {
        finishSyncRead(main, now: now)
        if changed.hasEnded {
            watch?.cancel()
            watch = nil
        }
        let watched = watch?.isActive == true
        let due = !watched && (lastPoll.map { now.timeIntervalSince($0) >= ItemRefresh.pollInterval } ?? true)
        // The feed's changes are patched in; one that cannot be reads the list again.
        var reloadNow = false
        if watched, let events = changed.takeEvents() { reloadNow = !patch(main, with: events, now: now) }
        if reloadNow || (watched ? changed.take() : due) {
            lastPoll = now
            if watched || (try? store.dataVersion()).map({ $0 != knownVersion }) == true {
                let shown = main.form.retrievedKey
                if reload(main, now: now), let shown {
                    main.form.message = .warning(
                        "Deleted elsewhere: \(shown.shortName)" + HomeFormModel.retrievedClearedNote)
                }
            }
        }
        main.list.updateExpiryTexts(now: now)
    }

    /// Starts reading sync's overview in the background (or, while a read
    /// runs, reads again once it ends).
    private func readSync(listed items: [Item]) {
        guard let sync else { return }
        guard syncRead == nil else {
            syncReadAgain = items
            return
        }
        let store = UIThreadStore(self.store, mailbox: mailbox)
        syncRead = BackgroundJob {
            Result { () throws -> SyncOverview? in try sync.overview(listed: items, store: store) }
        }
    }

    /// Once the overview's read has ended: the overview into `main` and the
    /// list's marks; a sync newer than the one known (the first read
    /// included) is told on the status line.
    func finishSyncRead(_ main: MainModel, now: Date) {
        guard let read = syncRead, let result = read.finished else { return }
        syncRead = nil
        if let items = syncReadAgain {
            syncReadAgain = nil
            readSync(listed: items)
        }
        let overview: SyncOverview?
        do { overview = try result.get() } catch {
            main.sync = nil
            main.form.message = .warning("Sync state unreadable: \(error)")
            main.list.setVersions([:])
            return
        }
        if let overview, let summary = overview.summary {
            // The tone follows the count the line gives (the items marked `!`).
            let line: StatusLine = overview.versions.isEmpty ? .info(summary) : .warning(summary)
            let showsKnownSummary = main.sync?.summary.map { main.form.message.text == $0 } ?? false
            if showsKnownSummary {
                // The line shows the summary known so far (a warning too): it
                // follows the marks, after a newer sync or a resolve elsewhere;
                // an unchanged line is not set again (nor added to the history).
                if main.form.message != line { main.form.message = line }
            } else if overview.lastSync != main.sync?.lastSync {
                // News that came by itself never hides a message the user has
                // yet to read (a warning, an error, a delete's "Ctrl-Y undoes"):
                // then it goes to the message history (m) alone.
                if main.form.message.isEmpty || main.form.message.tone == .info {
                    main.form.message = line
                } else {
                    main.messages.append(line, at: now)
                }
            }
        }
        main.sync = overview
        main.list.setVersions(overview?.versions ?? [:])
    }

    /// The expiry of a token or OAuth item, decrypted only when the item
    /// changed since it was last read.
    /// The list's row for `item` (a token's expiry read once per modification).
    private func row(for item: Item) -> ItemRow {
        let key = ItemKey(item)
        return ItemRow(
            key: key, label: item.label ?? "", url: item.url ?? "", hasOneTimeCode: item.oneTimePassword != nil,
            kind: item.kind, modified: item.modified, revision: item.revision, expires: expiry(of: item, key: key),
            expiryText: nil, persistentID: item.persistentID, hasAccessRule: !item.accessRule.isDefault)
    }

    /// Puts `items` (as stored now) in the list in place of the rows of
    /// `removing` and of their own keys, without reading the store again
    /// (a Save's own write, the change feed's summaries).
    /// - Parameter renames: the renames among them (old key to new), which
    ///   the form's item follows.
    func patch(
        _ main: MainModel, upserting items: [Item], removing: [ItemKey] = [], renames: [ItemKey: ItemKey] = [:],
        now: Date
    ) {
        main.list.patch(upserting: items.map(row(for:)), removing: removing, renames: renames)
        main.list.updateExpiryTexts(now: now)
        if let shown = main.form.retrievedKey, removing.contains(shown),
            !items.contains(where: { ItemKey($0) == shown })
        {
            if let new = renames[shown] {
                follow(main, renameOf: shown, to: new)
                return
            }
            main.form.clearRetrieved()
            main.form.message = .warning("Deleted elsewhere: \(shown.shortName)" + HomeFormModel.retrievedClearedNote)
        }
    }

    /// Applies the change feed's events: each added, changed, renamed or
    /// deleted item patched from its summary (no secret; a token's expiry
    /// read for that token alone).
    /// - Returns: whether every event could be applied; else the caller
    ///   reloads (a lock, an unlock, an event without its summary, sync's
    ///   conflict marks to read again).
    private func patch(_ main: MainModel, with events: [ItemChange], now: Date) -> Bool {
        guard sync == nil else { return false }
        var upserts: [Item] = []
        var removals: [ItemKey] = []
        var renames: [ItemKey: ItemKey] = [:]
        for event in events {
            switch event {
            case .stored(let summary, let formerly):
                if let formerly {
                    removals.append(formerly)
                    renames[formerly] = ItemKey(summary)
                }
                upserts.removeAll { ItemKey($0) == ItemKey(summary) }
                upserts.append(summary)
            case .deleted(let key):
                upserts.removeAll { ItemKey($0) == key }
                removals.append(key)
            case .unknown:
                return false
            }
        }
        knownVersion = try? store.dataVersion()
        patch(main, upserting: upserts, removing: removals, renames: renames, now: now)
        return true
    }

    private func expiry(of item: Item, key: ItemKey) -> Date? {
        guard item.kind.isSessionToken else { return nil }
        if let cached = expiryCache[key], cached.modified == item.modified { return cached.expires }
        let expires = (try? store.item(key)).flatMap(TokenExpiry.expiry(of:))
        expiryCache[key] = (item.modified, expires)
        return expires
    }
}

/// One change the store's feed told of, as the list applies it.
enum ItemChange: Sendable {
    /// The item as stored now (no secret); `formerly` is the key it had
    /// before a rename.
    case stored(Item, formerly: ItemKey?)
    /// The item with this key went away.
    case deleted(ItemKey)
    /// A change the list cannot apply from what it was told (an unlock, an
    /// event without its summary): the list is read again.
    case unknown
}

/// Set by a store's watch on its own thread, taken by the UI thread.
final class ChangeFlag: @unchecked Sendable {
    private let lock = Lock()
    private var raised = false
    private var ended = false

    /// The events told since ``takeEvents()``, or `nil` once one came
    /// that cannot be kept (too many: the list is read again instead).
    private var events: [ItemChange]? = []

    /// The most events kept between two ticks before a reload is cheaper.
    static let eventLimit = 512

    /// Notes a change, and the event that told of it.
    func raise(_ event: ItemChange? = nil) {
        lock.withLock {
            raised = true
            if let event, events != nil, events!.count < ChangeFlag.eventLimit {
                events!.append(event)
            } else {
                events = nil
            }
        }
    }

    /// The events noted since the last call (and the change with them), or
    /// `nil` when there were none or too many to keep.
    func takeEvents() -> [ItemChange]? {
        lock.withLock {
            defer { events = [] }
            guard let events, !events.isEmpty else { return nil }
            raised = false
            return events
        }
    }

    /// Notes that the watch tells of nothing more.
    func end() { lock.withLock { ended = true } }

    /// Whether ``end()`` was called since ``reset()``.
    var hasEnded: Bool { lock.withLock { ended } }

    /// Forgets everything noted (a new watch starts).
    func reset() {
        lock.withLock {
            raised = false
            ended = false
            events = []
        }
    }

    /// Whether a change was noted since the last call.
    func take() -> Bool {
        lock.withLock {
            defer { raised = false }
            return raised
        }
    }
}

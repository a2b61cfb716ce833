import FobStore
import FoundationEssentials

/// What to do when an entry has the same key (service, user ID and the rest
/// of the primary key) as an item in the vault or an earlier entry.
public enum DuplicatePolicy: String, Sendable, CaseIterable {
    /// Keep both: the entry gets the service `NAME (2)` (or the next free number).
    case rename
    /// Keep what is there; the entry is skipped.
    case skip
    /// The entry replaces what is there.
    case replace
    /// The copy modified more recently wins; on a tie, what is there stays.
    case newer
}

/// An import's changes and how many of each, worked out before anything is written.
public struct ImportPlan: Sendable {
    /// The changes for ``Vault/applyImport(_:)``, in the source's order.
    public var changes: [ImportChange] = []
    /// Entries added under their own key.
    public var added = 0
    /// Entries added under a numbered service (`mail (2)`) beside the item they collide with.
    public var renamed = 0
    /// Stored items replaced by an entry.
    public var replaced = 0
    /// Entries left out because an item with their key is stored.
    public var skipped = 0
    /// One line per entry renamed, replaced or skipped: what happened and why.
    public var details: [String] = []
    /// Entries given a new persistent ID because theirs was in use.
    public var newIdentifiers = 0

    /// Plans an import.
    ///
    /// Two entries of the file with one key, or an entry whose key is
    /// stored, are resolved by `policy`; none is lost silently: each rename,
    /// replacement or skip is counted and listed in ``details``. A
    /// persistent ID is unique in a vault: an entry whose ID another item
    /// keeps (or an earlier entry took) gets a new one (``newIdentifiers``).
    /// - Parameters:
    ///   - entries: what a reader found.
    ///   - existing: the vault's items (attributes only).
    ///   - policy: what to do with a duplicate.
    ///   - now: the date of entries whose source has none.
    public init(entries: [ImportEntry], existing: [Item], policy: DuplicatePolicy, now: Date) {
        var taken: [Key: Slot] = [:]
        taken.reserveCapacity(existing.count + entries.count)
        for item in existing { taken[Key(item)] = .stored(item) }
        for entry in entries {
            var item = entry.item
            if !entry.datesKnown {
                item.created = now
                item.modified = now
            }
            let key = Key(item)
            let name = "\(entry.origin) (\(item.displayName))"
            guard let slot = taken[key] else {
                taken[key] = .planned(changes.count)
                changes.append(.add(item))
                added += 1
                continue
            }
            let old: Item
            switch slot {
            case .stored(let stored): old = stored
            case .planned(let index):
                switch changes[index] {
                case .add(let i), .replace(_, let i), .delete(let i): old = i
                }
            }
            let where_ = { if case .stored = slot { return "in the vault" } else { return "earlier in the file" } }()
            switch policy {
            case .skip:
                skipped += 1
                details.append("skipped \(name): the same key is \(where_)")
            case .newer where item.modified <= old.modified:
                skipped += 1
                details.append("skipped \(name): the copy \(where_) is as new or newer")
            case .replace, .newer:
                replaced += 1
                details.append("replaced \(item.displayName) \(where_) by \(entry.origin)")
                switch slot {
                case .stored(let stored):
                    taken[key] = .planned(changes.count)
                    changes.append(.replace(existing: stored, with: item))
                case .planned(let index):
                    if case .replace(let stored, _) = changes[index] {
                        changes[index] = .replace(existing: stored, with: item)
                    } else {
                        // The earlier entry of the file gives way: it was counted as added, this one as replaced.
                        changes[index] = .add(item)
                    }
                }
            case .rename:
                var n = 2
                var renamedItem = item
                repeat {
                    renamedItem.service = "\(item.service) (\(n))"
                    n += 1
                } while taken[Key(renamedItem)] != nil
                taken[Key(renamedItem)] = .planned(changes.count)
                changes.append(.add(renamedItem))
                renamed += 1
                details.append(
                    "renamed \(name) to service \"\(displaySafe(renamedItem.service))\": the same key is \(where_)")
            }
        }
        newIdentifiers = ImportPlan.giveUniqueIdentifiers(&changes, existing: existing)
        if newIdentifiers > 0 {
            details.append(
                "gave \(newIdentifiers) entr\(newIdentifiers == 1 ? "y" : "ies") a new persistent ID: theirs was in use"
            )
        }
    }

    /// Gives every added item a persistent ID no other item of the vault
    /// keeps after the import: the IDs of stored items stay, those of the
    /// items replaced are free again, and an entry whose ID is taken gets a
    /// new random one.
    /// - Returns: how many entries got a new ID.
    static func giveUniqueIdentifiers(_ changes: inout [ImportChange], existing: [Item]) -> Int {
        var used = Set(existing.map(\.persistentID))
        for change in changes { if case .replace(let stored, _) = change { used.remove(stored.persistentID) } }
        var given = 0
        for index in changes.indices {
            var item: Item
            switch changes[index] {
            case .add(let i), .replace(_, let i), .delete(let i): item = i
            }
            if used.contains(item.persistentID) {
                repeat { item.persistentID = UUID() } while used.contains(item.persistentID)
                given += 1
                switch changes[index] {
                case .add: changes[index] = .add(item)
                case .replace(let stored, _): changes[index] = .replace(existing: stored, with: item)
                case .delete: break
                }
            }
            used.insert(item.persistentID)
        }
        return given
    }

    /// The summary line: `12 added, 1 renamed, 0 replaced, 2 skipped`.
    public var summary: String {
        "\(added) added, \(renamed) renamed, \(replaced) replaced, \(skipped) skipped"
    }

    enum Slot {
        case stored(Item)
        case planned(Int)
    }

    /// The primary key of ``Item`` as a value (strings compared byte for byte).
    struct Key: Hashable {
        let parts: [[UInt8]]
        init(_ item: Item) {
            var parts = [
                Array(item.itemClass.rawValue.utf8), Array(item.accessGroup.utf8), Array(item.service.utf8),
                Array(item.account.utf8), [item.synchronizable ? 1 : 0],
            ]
            if item.itemClass == .internetPassword {
                parts += [
                    Array(item.internetProtocol.utf8), Array(item.authenticationType.utf8),
                    Array(String(item.port).utf8),
                    Array(item.path.utf8), Array(item.securityDomain.utf8),
                ]
            }
            self.parts = parts
        }
    }
}

import FobStore
import FoundationEssentials

/// A version of an item kept beside the merged one after a conflict.
public struct Sibling: Sendable {
    /// The version, whole.
    public var item: Item
    /// The parts it lost in the merge (both sides changed them): what
    /// `fob resolve --keep remote` takes from it, leaving the merged item's
    /// other parts as they are. `nil` for a version recorded before the
    /// parts were (its file holds none): then every part that differs.
    public var parts: Set<FieldGroup>?
    /// The id of the device that wrote the values it lost (its lost parts'
    /// write), for `fob conflicts --show` and the terminal UI to name it;
    /// `nil` for a version recorded before writers were (its file holds none).
    public var device: String?

    /// A sibling; see the properties.
    public init(item: Item, parts: Set<FieldGroup>?, device: String? = nil) {
        self.item = item
        self.parts = parts
        self.device = device
    }
}

/// What the tree says of one item: its live revisions merged.
public struct ItemView: Sendable {
    /// Everything the live revisions have seen.
    public var vector: VersionVector
    /// The write that set each part's value.
    public var fieldDots: [FieldGroup: Dot]
    /// The merged item, or `nil` when deleted.
    public var item: Item?
    /// Conflicting versions kept beside ``item`` (never dropped until resolved).
    public var siblings: [Sibling]
    /// Set when an edit won over a concurrent delete.
    public var editBeatDelete: Bool
    /// The live revisions it was merged from, oldest dot first.
    public var live: [Dot]

    /// Whether the item has versions to resolve.
    public var hasConflict: Bool { !siblings.isEmpty }
}

/// The merge of concurrent revisions: a pure, deterministic function, so
/// every device that holds the same revisions computes the same item.
public enum SyncMerge {
    /// The revisions no other one has seen (the others are superseded).
    public static func liveSet(_ revisions: [Revision]) -> [Revision] {
        revisions.filter { r in
            !revisions.contains { other in other.dot != r.dot && other.vector.includes(r.dot) }
        }.sorted { $0.dot < $1.dot }
    }

    /// The merged view of an item's revisions, or `nil` for none.
    ///
    /// One live revision is taken as it is. Concurrent ones are folded in
    /// dot order: an edit beats a delete; two deletes make one; two edits
    /// merge part by part: a part set by a write the other side has seen is
    /// taken from the newer side, and a part both sides changed goes to the
    /// higher dot (counter, then device id), the other version kept whole
    /// as a sibling with the parts it lost.
    public static func view(of revisions: [Revision]) -> ItemView? {
        let live = liveSet(revisions)
        guard var result = live.first.map(view(single:)) else { return nil }
        for next in live.dropFirst() { result = merge(result, view(single: next)) }
        result.siblings = unique(result.siblings, except: result.item)
        return result
    }

    static func view(single r: Revision) -> ItemView {
        ItemView(
            vector: r.vector, fieldDots: r.fieldDots, item: r.item, siblings: r.siblings, editBeatDelete: false,
            live: [r.dot])
    }

    static func merge(_ a: ItemView, _ b: ItemView) -> ItemView {
        var out = a
        out.vector = a.vector.joined(b.vector)
        out.live = a.live + b.live
        out.siblings = a.siblings + b.siblings
        switch (a.item, b.item) {
        case (nil, nil):
            return out
        case (nil, .some):
            out.item = b.item
            out.fieldDots = b.fieldDots
            out.editBeatDelete = true
            return out
        case (.some, nil):
            out.editBeatDelete = true
            return out
        case (.some(let x), .some(let y)):
            var merged = x
            var dots = a.fieldDots
            // The parts each side lost (usually one side loses them all).
            var lostX: Set<FieldGroup> = []
            var lostY: Set<FieldGroup> = []
            for group in FieldGroup.allCases {
                let da = a.fieldDots[group]
                let db = b.fieldDots[group]
                if da == db || group.same(x, y) {
                    if let da, let db { dots[group] = max(da, db) }
                    continue
                }
                let takeB: Bool
                if let da, b.vector.includes(da) {
                    takeB = true
                } else if let db, a.vector.includes(db) {
                    takeB = false
                } else {
                    // Both changed it: the higher dot wins on every device.
                    takeB = (db ?? Dot(device: "", counter: 0)) > (da ?? Dot(device: "", counter: 0))
                    if takeB { lostX.insert(group) } else { lostY.insert(group) }
                }
                if takeB {
                    group.copy(from: y, into: &merged)
                    dots[group] = db
                }
            }
            merged.created = min(x.created, y.created)
            merged.modified = max(x.modified, y.modified)
            out.item = merged
            out.fieldDots = dots
            if !lostX.isEmpty {
                out.siblings.append(Sibling(item: x, parts: lostX, device: writer(of: lostX, dots: a.fieldDots)))
            }
            if !lostY.isEmpty {
                out.siblings.append(Sibling(item: y, parts: lostY, device: writer(of: lostY, dots: b.fieldDots)))
            }
            return out
        }
    }

    /// The device whose write set the first of `parts` (in the tree's order) in `dots`.
    static func writer(of parts: Set<FieldGroup>, dots: [FieldGroup: Dot]) -> String? {
        parts.sorted().lazy.compactMap { dots[$0]?.device }.first
    }

    /// Siblings without repeats (a repeat's parts joined to the first's;
    /// unknown parts stay unknown) and without a copy of the item itself.
    static func unique(_ siblings: [Sibling], except item: Item?) -> [Sibling] {
        var out: [Sibling] = []
        for s in siblings where !(item.map { sameContent($0, s.item) } ?? false) {
            if let i = out.firstIndex(where: { sameContent($0.item, s.item) }) {
                out[i].parts = out[i].parts.flatMap { known in s.parts.map { known.union($0) } }
                out[i].device = out[i].device ?? s.device
            } else {
                out.append(s)
            }
        }
        return out
    }

    /// Whether two items hold the same values in every part the merge
    /// compares (dates and revision aside).
    public static func sameContent(_ a: Item, _ b: Item) -> Bool {
        FieldGroup.allCases.allSatisfy { $0.same(a, b) }
    }

    /// Whether `a` and `b` have one persistent ID, created date and modified date.
    static func sameIdentity(_ a: Item, _ b: Item) -> Bool {
        a.persistentID == b.persistentID && a.created == b.created && a.modified == b.modified
    }

    /// The persistent ID the item named `name` takes where another item
    /// keeps `id`: a keyed BLAKE2b of both under the naming key, as a
    /// version-4 UUID (every device derives the same).
    static func separateIdentity(_ id: UUID, name: String, keys: SyncKeys) -> UUID {
        var bytes = Sodium.genericHash(
            Array("fob-sync identity/\(id.uuidString)/\(name)".utf8), key: keys.naming, length: 16)
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }
}

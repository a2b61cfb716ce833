import FobStore
import FoundationEssentials

/// Every item's ``ItemSummary``, packed: per item one fixed entry (persistent
/// ID, revision, dates, flags) and its texts (primary key, label, content
/// type, attribute names and values) one after another in a single byte
/// buffer, each as a LEB128 length and its UTF-8 bytes. An item of three
/// short attributes takes a 48-byte entry and about 90 bytes of texts
/// here, where an ``ItemSummary`` (a struct of 136 bytes and an array of
/// pairs of about 140 more) took twice that. A summary is rebuilt from the
/// bytes when read (a few short strings), never kept.
struct ItemCatalog {
    private struct Entry {
        let stamp: ItemStamp
        /// Where the item's texts start in ``ItemCatalog/text``.
        let start: UInt32
    }

    private var entries: [Entry] = []
    private var text: [UInt8] = []
    /// The index of each persistent ID's first item.
    private var byID: [UUID: Int32] = [:]
    /// The index of the first item of each primary key (service, account,
    /// access group), by the key's hash: a hash two keys share keeps the
    /// first, and ``contains(service:account:accessGroup:)`` then compares
    /// every item's key.
    private var byKey: [Int: Int32] = [:]

    /// An empty catalog with room for `capacity` items.
    init(capacity: Int = 0) {
        entries.reserveCapacity(capacity)
        byID.reserveCapacity(capacity)
        byKey.reserveCapacity(capacity)
    }

    /// The number of items.
    var count: Int { entries.count }

    /// Adds the summary of `item` (its attributes as a client sees them).
    mutating func append(_ item: Item) { append(ItemSummary(item)) }

    /// Adds `summary`.
    mutating func append(_ summary: ItemSummary) {
        let start = UInt32(clamping: text.count)
        for field in [summary.service, summary.account, summary.accessGroup, summary.label, summary.contentType ?? ""] {
            put(field)
        }
        putLength(summary.attributes.count)
        for pair in summary.attributes {
            put(pair.key)
            put(pair.value)
        }
        if byID[summary.persistentID] == nil { byID[summary.persistentID] = Int32(entries.count) }
        let key = ItemCatalog.keyHash(summary.service, summary.account, summary.accessGroup)
        if byKey[key] == nil { byKey[key] = Int32(entries.count) }
        entries.append(
            Entry(stamp: summary.stamp, start: start))
    }

    /// Gives back the room reserved beyond what the items take.
    mutating func shrink() {
        entries = Array(entries)
        text = Array(text)
    }

    /// The index of the first item with this persistent ID.
    func index(of id: UUID) -> Int? { byID[id].map(Int.init) }

    /// Whether an item has this primary key: one hash lookup and one
    /// comparison (every item's key only when two keys share a hash).
    func contains(service: String, account: String, accessGroup: String) -> Bool {
        guard let index = byKey[ItemCatalog.keyHash(service, account, accessGroup)].map(Int.init) else {
            return false
        }
        if primaryKey(index) == (service, account, accessGroup) { return true }
        return (0..<count).contains { primaryKey($0) == (service, account, accessGroup) }
    }

    /// The hash of a primary key.
    private static func keyHash(_ service: String, _ account: String, _ accessGroup: String) -> Int {
        var hasher = Hasher()
        hasher.combine(service)
        hasher.combine(account)
        hasher.combine(accessGroup)
        return hasher.finalize()
    }

    /// The persistent ID and revision of the item at `index` (no texts decoded).
    func identity(_ index: Int) -> (id: UUID, revision: UInt64) {
        (entries[index].stamp.persistentID, entries[index].stamp.revision)
    }

    /// The summary of the item at `index`.
    subscript(index: Int) -> ItemSummary {
        let entry = entries[index]
        var at = Int(entry.start)
        let service = string(&at)
        let account = string(&at)
        let accessGroup = string(&at)
        let label = string(&at)
        let contentType = string(&at)
        let pairs = length(&at)
        var attributes: [(key: String, value: String)] = []
        attributes.reserveCapacity(pairs)
        for _ in 0..<pairs {
            let key = string(&at)
            attributes.append((key, string(&at)))
        }
        return ItemSummary(
            stamp: entry.stamp, service: service, account: account, accessGroup: accessGroup, label: label,
            attributes: attributes, contentType: contentType.isEmpty ? nil : contentType)
    }

    /// The service, account and access group of the item at `index`, read without its other texts.
    func primaryKey(_ index: Int) -> (service: String, account: String, accessGroup: String) {
        var at = Int(entries[index].start)
        let service = string(&at)
        let account = string(&at)
        return (service, account, string(&at))
    }

    /// The content type of the item at `index` (`nil` for `text/plain`), read without its other texts.
    func contentType(_ index: Int) -> String? {
        var at = Int(entries[index].start)
        for _ in 0..<4 { skip(&at) }
        let type = string(&at)
        return type.isEmpty ? nil : type
    }

    /// Whether the item at `index` has every pair of `query` (exact,
    /// case-sensitive; `[:]` matches all), compared on the bytes.
    func matches(_ index: Int, _ query: [(key: [UInt8], value: [UInt8])]) -> Bool {
        guard !query.isEmpty else { return true }
        var at = Int(entries[index].start)
        for _ in 0..<5 { skip(&at) }
        let pairs = length(&at)
        var found = 0
        for _ in 0..<pairs {
            let key = range(&at)
            let value = range(&at)
            for pair in query where bytes(key, equal: pair.key) && bytes(value, equal: pair.value) { found += 1 }
        }
        // Attribute names are unique within an item, so each query pair is found at most once.
        return found == query.count
    }

    private mutating func put(_ string: String) {
        putLength(string.utf8.count)
        text.append(contentsOf: string.utf8)
    }

    private mutating func putLength(_ value: Int) {
        var rest = UInt(value)
        while rest >= 0x80 {
            text.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        text.append(UInt8(rest))
    }

    private func length(_ at: inout Int) -> Int {
        var value = 0
        var shift = 0
        while true {
            let byte = text[at]
            at += 1
            value |= Int(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    private func range(_ at: inout Int) -> Range<Int> {
        let n = length(&at)
        defer { at += n }
        return at..<(at + n)
    }

    private func skip(_ at: inout Int) { _ = range(&at) }

    private func string(_ at: inout Int) -> String {
        let bytes = range(&at)
        return text.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[bytes]), as: UTF8.self)
        }
    }

    private func bytes(_ range: Range<Int>, equal other: [UInt8]) -> Bool {
        range.count == other.count && text[range].elementsEqual(other)
    }
}

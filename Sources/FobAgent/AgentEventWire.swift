import FobStore
import FoundationEssentials

/// The wire layout of an ``AgentEvent``: a message of code 5 (the header of
/// ``AgentProtocol``) with six fields, each empty when the event has no
/// such part:
///
/// 0. the kind (one byte, ``AgentEvent/Kind``);
/// 1. the key: a nested message of four fields (class, access group,
///    service, account, UTF-8);
/// 2. the revision (8 bytes, big-endian);
/// 3. the persistent ID (16 bytes);
/// 4. the old key of a rename, as field 1;
/// 5. the summary (``ItemWire``, never with a secret);
/// 6. only for a question or its settling: the ``AccessPrompt``.
///
/// An event is sent alone (to a subscriber) or nested as one field of a
/// ``AgentResponse/written(count:changes:)`` answer.
extension AgentEvent {
    /// The event's message code.
    static let code: UInt8 = 5

    /// The message of this event (no secret in it).
    func encoded() -> [UInt8] {
        var w = MessageWriter(code: AgentEvent.code)
        w.field([kind.rawValue])
        w.field(key.map(AgentEvent.encode) ?? [])
        w.field(revision.map { value in (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } } ?? [])
        w.field(id.map { id in withUnsafeBytes(of: id.uuid) { Array($0) } } ?? [])
        w.field(oldKey.map(AgentEvent.encode) ?? [])
        if let summary {
            w.field(ItemWire.encode(summary))
        } else {
            w.field([])
        }
        if let prompt { w.field(prompt.encoded()) }
        return w.bytes
    }

    private static func encode(_ key: ItemKey) -> [UInt8] {
        var w = MessageWriter(code: 0)
        w.field(key.itemClass.rawValue)
        w.field(key.accessGroup)
        w.field(key.service)
        w.field(key.account)
        return w.bytes
    }

    private static func key(_ raw: UnsafeRawBufferPointer, _ name: String) throws(AgentProtocolError) -> ItemKey? {
        guard !raw.isEmpty else { return nil }
        let r = try MessageReader(raw)
        guard r.version == AgentProtocol.version, r.code == 0, r.fields.count == 4,
            let itemClass = ItemClass(rawValue: try r.text(0, "\(name)'s class"))
        else { throw .badField("an event's \(name)") }
        return ItemKey(
            itemClass: itemClass, accessGroup: try r.text(1, "access group"), service: try r.text(2, "service"),
            account: try r.text(3, "account"))
    }

    /// Decodes an event message (from the agent: checked as a request is).
    /// - Throws: ``AgentProtocolError/badField(_:)`` for a wrong kind, count
    ///   or part; `.versionMismatch`, `.unknownCode`.
    init(_ r: MessageReader) throws(AgentProtocolError) {
        guard r.version == AgentProtocol.version else { throw .versionMismatch(r.version) }
        guard r.code == AgentEvent.code else { throw .unknownCode(r.code) }
        guard !r.fields.isEmpty, r.raw(0).count == 1, let kind = Kind(rawValue: r.raw(0)[0]) else {
            throw .badField("an event's kind")
        }
        let asks = kind == .question || kind == .settled
        try r.expect(asks ? 7 : 6)
        let revision = r.raw(2).isEmpty ? nil : try r.uint64(2, "an event's revision")
        var id: UUID?
        let idBytes = r.raw(3)
        if !idBytes.isEmpty {
            guard idBytes.count == 16 else { throw .badField("an event's persistent ID") }
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: idBytes) }
            id = UUID(uuid: bytes)
        }
        var summary: Item?
        if !r.raw(5).isEmpty {
            do { summary = try ItemWire.decode(r.raw(5), withSecret: false) } catch {
                throw .badField("an event's summary: \(error)")
            }
        }
        let key = try AgentEvent.key(r.raw(1), "key")
        let oldKey = try AgentEvent.key(r.raw(4), "old key")
        guard (kind == .renamed) == (oldKey != nil) else { throw .badField("an event's old key") }
        self.init(kind: kind, key: key, revision: revision, id: id, oldKey: oldKey, summary: summary)
        if asks { prompt = try AccessPrompt(r.raw(6)) }
    }
}

import FobStore
import FoundationEssentials

/// Builds a message: header, then length-prefixed fields.
///
/// A message that may hold a secret is built twice: first by a sizer
/// (``sizer(code:)``) that only counts, then into a buffer reserved at
/// exactly that size, so the buffer is never reallocated (a reallocation
/// would free a copy of the secret without wiping it).
struct MessageWriter {
    private(set) var bytes: [UInt8]
    /// The message's size so far, in bytes (counted by a sizer too).
    private(set) var count: Int
    private let counting: Bool

    /// - Parameters:
    ///   - code: the message code.
    ///   - version: the protocol version.
    ///   - capacity: the whole message's size when known (from a sizer): reserved at once.
    init(code: UInt8, version: UInt8 = AgentProtocol.version, capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(max(capacity, 6))
        bytes.append(contentsOf: AgentProtocol.magic)
        bytes.append(version)
        bytes.append(code)
        count = 6
        counting = false
    }

    private init(counting code: UInt8) {
        bytes = []
        count = 6
        counting = true
    }

    /// A writer that stores nothing and counts the bytes a message takes.
    static func sizer(code: UInt8) -> MessageWriter { MessageWriter(counting: code) }

    /// Counts a field of `length` bytes and, when writing, appends its
    /// length prefix (UInt32 big-endian); `false` for a sizer, which stops there.
    private mutating func startField(length: Int) -> Bool {
        count += 4 + length
        guard !counting else { return false }
        withUnsafeBytes(of: UInt32(length).bigEndian) { bytes.append(contentsOf: $0) }
        return true
    }

    mutating func field(_ data: UnsafeRawBufferPointer) {
        if startField(length: data.count) { bytes.append(contentsOf: data) }
    }

    mutating func field(_ data: [UInt8]) { data.withUnsafeBytes { field($0) } }

    /// Appends an import plan: per change a one-byte field (0 = add, then
    /// the item; 1 = replace, then the stored item and its replacement),
    /// reserving the whole room first, as ``fields(_:)`` does.
    mutating func importChanges(_ changes: [ImportChange]) {
        var items: [Item] = []
        var kinds: [UInt8] = []
        for change in changes {
            switch change {
            case .add(let item):
                kinds.append(0)
                items.append(item)
            case .replace(let existing, let with):
                kinds.append(1)
                items.append(existing)
                items.append(with)
            case .delete(let existing):
                kinds.append(2)
                items.append(existing)
            }
        }
        let encodings = items.map(ItemWire.prepare)
        if !counting {
            bytes.reserveCapacity(bytes.count + kinds.count * 5 + encodings.reduce(0) { $0 + 4 + $1.count })
        }
        var next = 0
        for kind in kinds {
            field([kind])
            for _ in 0..<(kind == 1 ? 2 : 1) {
                append(encodings[next])
                next += 1
            }
        }
    }

    private mutating func append(_ encoding: ItemWire.Encoding) {
        guard startField(length: encoding.count) else { return }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: encoding.count))
        bytes.withUnsafeMutableBytes { encoding.write(into: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
    }

    /// Appends one field per item, after reserving exactly the room they
    /// need: the buffer is not reallocated while it holds secrets, so the
    /// final ``wipe()`` wipes every copy.
    mutating func fields(_ items: [Item]) {
        let encodings = items.map(ItemWire.prepare)
        if !counting { bytes.reserveCapacity(bytes.count + encodings.reduce(0) { $0 + 4 + $1.count }) }
        for encoding in encodings { append(encoding) }
    }
    mutating func field(_ text: String) { field(Array(text.utf8)) }
    mutating func field(_ secret: SecretBytes) { secret.withUnsafeBytes { field($0) } }
    /// A number as 4 bytes, big-endian.
    mutating func field(_ value: UInt32) { withUnsafeBytes(of: value.bigEndian) { field($0) } }
    /// A number (a revision) as 8 bytes, big-endian.
    mutating func field(_ value: UInt64) { withUnsafeBytes(of: value.bigEndian) { field($0) } }

    /// An optional change: 0 = leave, 1 = remove, 2 + UTF-8 = set.
    mutating func change(_ value: String??) {
        switch value {
        case .none: field([0])
        case .some(.none): field([1])
        case .some(.some(let text)): field([2] + Array(text.utf8))
        }
    }

    /// An optional text: 0 = none, 1 + UTF-8 = the text.
    mutating func optional(_ value: String?) {
        if let value { field([1] + Array(value.utf8)) } else { field([0]) }
    }

    /// Wipes the bytes (they may hold a secret).
    mutating func wipe() { bytes.wipe() }
}

/// Reads a message: checks the header and splits the fields; every read is
/// bounds-checked and fails with a typed error.
struct MessageReader {
    let code: UInt8
    let version: UInt8
    private(set) var fields: [Range<Int>] = []
    private let bytes: UnsafeRawBufferPointer

    /// - Throws: `.badMagic`, `.truncated`, `.tooLarge`; a foreign version is
    ///   not an error here (``version`` says it).
    init(_ bytes: UnsafeRawBufferPointer, limit: Int = AgentProtocol.maxMessageBytes) throws(AgentProtocolError) {
        guard bytes.count <= limit else { throw .tooLarge(bytes.count) }
        guard bytes.count >= 6 else {
            throw bytes.count >= 4 && !bytes.starts(with: AgentProtocol.magic) ? .badMagic : .truncated
        }
        guard bytes.starts(with: AgentProtocol.magic) else { throw .badMagic }
        version = bytes[4]
        code = bytes[5]
        self.bytes = bytes
        var i = 6
        while i < bytes.count {
            guard bytes.count - i >= 4 else { throw .truncated }
            let n = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            i += 4
            guard n <= bytes.count - i else { throw .truncated }
            fields.append(i..<(i + n))
            i += n
        }
    }

    func expect(_ count: Int) throws(AgentProtocolError) {
        guard fields.count == count else { throw .badField("\(fields.count) fields where \(count) belong") }
    }

    func raw(_ index: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[fields[index]]) }

    func text(_ index: Int, _ name: String) throws(AgentProtocolError) -> String {
        guard let text = String(checkingUTF8: raw(index)) else { throw .badField("\(name) is not UTF-8") }
        guard raw(index).count <= Item.maxTextBytes else { throw .badField("\(name) is too long") }
        return text
    }

    func secret(_ index: Int) throws(AgentProtocolError) -> SecretBytes {
        let field = raw(index)
        guard field.count <= Item.maxSecretBytes else {
            throw .badField("the secret is over \(Item.maxSecretBytes) bytes")
        }
        return SecretBytes(count: field.count) {
            $0.baseAddress.map { base in
                _ = field.copyBytes(to: UnsafeMutableRawBufferPointer(start: base, count: field.count))
            }
        }
    }

    func uint32(_ index: Int, _ name: String) throws(AgentProtocolError) -> UInt32 {
        UInt32(truncatingIfNeeded: try bigEndian(index, name, bytes: 4))
    }

    func uint64(_ index: Int, _ name: String) throws(AgentProtocolError) -> UInt64 {
        try bigEndian(index, name, bytes: 8)
    }

    private func bigEndian(_ index: Int, _ name: String, bytes: Int) throws(AgentProtocolError) -> UInt64 {
        let field = raw(index)
        guard field.count == bytes else { throw .badField("\(name) is not \(bytes) bytes") }
        return field.reduce(0) { $0 << 8 | UInt64($1) }
    }

    func change(_ index: Int, _ name: String) throws(AgentProtocolError) -> String?? {
        let field = raw(index)
        guard let mode = field.first else { throw .badField("\(name) is empty") }
        switch mode {
        case 0 where field.count == 1: return .none
        case 1 where field.count == 1: return .some(nil)
        case 2:
            let rest = UnsafeRawBufferPointer(rebasing: field[1...])
            guard rest.count <= Item.maxTextBytes, let text = String(checkingUTF8: rest) else {
                throw .badField("\(name) is not UTF-8 or too long")
            }
            return .some(text)
        default: throw .badField("\(name) has mode \(mode)")
        }
    }

    func optional(_ index: Int, _ name: String) throws(AgentProtocolError) -> String? {
        let field = raw(index)
        guard let mode = field.first else { throw .badField("\(name) is empty") }
        if mode == 0 && field.count == 1 { return nil }
        guard mode == 1, field.count - 1 <= Item.maxTextBytes,
            let text = String(checkingUTF8: UnsafeRawBufferPointer(rebasing: field[1...]))
        else {
            throw .badField("\(name) is malformed")
        }
        return text
    }

    func enumeration<E: RawRepresentable>(_ index: Int, _ name: String, _ type: E.Type) throws(AgentProtocolError) -> E?
    where E.RawValue == String {
        guard let text = try optional(index, name) else { return nil }
        guard let value = E(rawValue: text) else { throw .badField("\(name) '\(text)' is unknown") }
        return value
    }
}

extension AgentRequest {
    /// The message for this request, built in a buffer reserved at its exact
    /// size (see ``MessageWriter``).
    /// - Important: it may hold a password or secret: wipe it after sending.
    public func encoded() -> [UInt8] {
        var reallocated = false
        return encoded(reallocated: &reallocated)
    }

    /// As ``encoded()``; `reallocated` says whether the buffer moved while
    /// it was filled (never, unless the sizer and the writer disagree).
    func encoded(reallocated: inout Bool) -> [UInt8] {
        var sizer = MessageWriter.sizer(code: code)
        write(to: &sizer)
        var w = MessageWriter(code: code, capacity: sizer.count)
        let buffer = w.bytes.withUnsafeBufferPointer { $0.baseAddress }
        write(to: &w)
        reallocated = w.bytes.withUnsafeBufferPointer { $0.baseAddress } != buffer
        return w.bytes
    }

    /// Writes the fields into `w` (a sizer or the real writer).
    func write(to w: inout MessageWriter) {
        switch self {
        case .status, .lock, .subscribe: break
        case .unlock(let secret, let idle, let max), .unlockWithKey(let secret, let idle, let max):
            w.field(secret)
            w.field(idle)
            w.field(max)
        case .applyImport(let changes):
            w.importChanges(changes)
        case .list(let service):
            w.optional(service)
        case .add(let item):
            w.field(ItemWire.encode(item))
        case .save(let service, let account, let secret, let changes):
            // Every attribute travels (URL, notes, fields, seed …): the agent
            // must never report success for a change it did not make.
            var bag = changes.bag
            w.field(service)
            w.field(account)
            w.field(secret)
            w.field(bag.bytes)
            bag.wipe()
        case .get(let query, let one, let detail):
            w.field(query.bag.bytes)
            w.field([one ? 1 : 0, detail.rawValue])
        case .update(let query, let changes):
            var bag = changes.bag
            w.field(query.bag.bytes)
            w.field(bag.bytes)
            bag.wipe()
        case .delete(let query):
            w.field(query.bag.bytes)
        case .getItems(let ids, let detail):
            var packed: [UInt8] = []
            packed.reserveCapacity(ids.count * 16)
            for id in ids { withUnsafeBytes(of: id.uuid) { packed.append(contentsOf: $0) } }
            w.field(packed)
            w.field([detail.rawValue])
        case .accessLog(let filter):
            AccessLogWire.write(filter, to: &w)
        case .answer(let question, let answer):
            w.field(question)
            w.field(answer.encoded())
        case .forClient(let pid, let request):
            w.field(UInt32(bitPattern: pid))
            var inner = request.encoded()
            w.field(inner)
            inner.wipe()
        }
    }

    /// The persistent IDs of a `getItems` request: one field of 16 bytes each.
    private static func ids(_ r: MessageReader) throws(AgentProtocolError) -> [UUID] {
        let packed = r.raw(0)
        guard packed.count % 16 == 0, packed.count / 16 <= AgentProtocol.maxIDsPerRequest else {
            throw .badField("persistent IDs")
        }
        return stride(from: 0, to: packed.count, by: 16).map { start in
            var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &bytes) {
                $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: packed[start..<(start + 16)]))
            }
            return UUID(uuid: bytes)
        }
    }

    private static func importChanges(_ r: MessageReader) throws(AgentProtocolError) -> [ImportChange] {
        var changes: [ImportChange] = []
        var index = 0
        func item(_ i: Int) throws(AgentProtocolError) -> Item {
            guard i < r.fields.count else { throw .badField("an import change without its item") }
            do { return try ItemWire.decode(r.raw(i)) } catch { throw .badField("an imported item: \(error)") }
        }
        while index < r.fields.count {
            let kind = r.raw(index)
            guard kind.count == 1, kind[0] <= 2 else { throw .badField("an import change's kind") }
            if kind[0] == 0 {
                changes.append(.add(try item(index + 1)))
                index += 2
            } else if kind[0] == 2 {
                changes.append(.delete(existing: try item(index + 1)))
                index += 2
            } else {
                changes.append(.replace(existing: try item(index + 1), with: try item(index + 2)))
                index += 3
            }
        }
        return changes
    }

    /// Decodes a request: the agent's parser of outside input, a pure
    /// function from bytes to a request or a typed error (the fuzz target
    /// `agent-request` calls it).
    /// - Parameter bytes: one frame's payload (the length prefix removed).
    /// - Throws: ``AgentProtocolError``: `.versionMismatch` for another
    ///   version, `.unknownCode`, `.badField`, `.truncated`, `.badMagic`, `.tooLarge`.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(AgentProtocolError) -> AgentRequest {
        // Only an import request may be larger than any other.
        let isImport =
            bytes.count >= 6 && bytes.starts(with: AgentProtocol.magic) && bytes[5] == AgentRequest.importCode
        let r = try MessageReader(
            bytes, limit: isImport ? AgentProtocol.maxImportMessageBytes : AgentProtocol.maxMessageBytes)
        guard r.version == AgentProtocol.version else { throw .versionMismatch(r.version) }
        switch r.code {
        case 1, 4, 12:
            try r.expect(0)
            return r.code == 1 ? .status : r.code == 4 ? .lock : .subscribe
        case 2, 3:
            try r.expect(3)
            let secret = try r.secret(0)
            let (idle, max) = (try r.uint32(1, "idle"), try r.uint32(2, "max"))
            if r.code == 3 {
                guard secret.count == 32 else { throw .badField("a vault key is 32 bytes") }
                return .unlockWithKey(vaultKey: secret, idleSeconds: idle, maxSeconds: max)
            }
            guard secret.count <= Vault.maxPasswordBytes else { throw .badField("the password is too long") }
            return .unlock(password: secret, idleSeconds: idle, maxSeconds: max)
        case 5:
            try r.expect(2)
            let flags = r.raw(1)
            guard flags.count == 2, flags[0] <= 1, let detail = ItemDetail(rawValue: flags[1]) else {
                throw .badField("get flags")
            }
            return .get(try ItemQuery(bag: AttributeBag(reading: r.raw(0))), limitOne: flags[0] == 1, detail: detail)
        case 6:
            try r.expect(1)
            return .list(service: try r.optional(0, "service"))
        case 7:
            try r.expect(1)
            do {
                return .add(try ItemWire.decode(r.raw(0)))
            } catch {
                throw .badField("the item: \(error)")
            }
        case 8:
            try r.expect(4)
            var bag = try AttributeBag(reading: r.raw(3))
            defer { bag.wipe() }
            return .save(
                service: try r.text(0, "service"), account: try r.text(1, "account"), secret: try r.secret(2),
                changes: try ItemChanges(bag: bag))
        case 9:
            try r.expect(2)
            var bag = try AttributeBag(reading: r.raw(1))
            defer { bag.wipe() }
            return .update(try ItemQuery(bag: AttributeBag(reading: r.raw(0))), try ItemChanges(bag: bag))
        case 10:
            try r.expect(1)
            return .delete(try ItemQuery(bag: AttributeBag(reading: r.raw(0))))
        case AgentRequest.importCode:
            return .applyImport(try importChanges(r))
        case 13:
            try r.expect(2)
            guard r.raw(1).count == 1, let detail = ItemDetail(rawValue: r.raw(1)[0]) else {
                throw .badField("get detail")
            }
            return .getItems(ids: try ids(r), detail: detail)
        case AgentRequest.accessLogCode:
            return .accessLog(try AccessLogWire.filter(r))
        case AgentRequest.answerCode:
            try r.expect(2)
            return .answer(question: try r.uint64(0, "question"), try AccessAnswer(wire: r.raw(1)))
        case AgentRequest.forClientCode:
            try r.expect(2)
            let pid = Int32(bitPattern: try r.uint32(0, "pid"))
            guard pid > 0 else { throw .badField("a client's pid") }
            let inner = try decode(r.raw(1))
            switch inner {
            case .forClient, .subscribe, .applyImport, .answer: throw .badField("a request made for a client")
            default: return .forClient(pid: pid, request: inner)
            }
        default: throw .unknownCode(r.code)
        }
    }
}

extension AgentResponse {
    /// The code of a `.revisionMismatch` failure: the item's name and the two revisions.
    static let revisionMismatchCode: UInt8 = 0x18
    /// The code of a `.consentMissing` failure: its text, then how the question ended (one byte, ``ConsentMiss``).
    static let consentMissingCode: UInt8 = 0x1A

    private static let failureCodes: [(UInt8, @Sendable (String) -> KeychainError)] = [
        (0x10, { .duplicateItem($0) }), (0x11, { .itemNotFound($0) }), (0x12, { _ in .authFailed }),
        (0x13, { .interactionNotAllowed($0) }), (0x14, { .decode($0) }), (0x15, { .param($0) }),
        (0x16, { .noSuchKeychain($0) }), (0x17, { .io($0) }), (0x19, { .accessDenied($0) }),
    ]

    /// The message for this response.
    /// - Important: an `.item` holds a secret: wipe the bytes after sending.
    public func encoded() -> [UInt8] {
        switch self {
        case .ok:
            return MessageWriter(code: 0).bytes
        case .event(let event):
            return event.encoded()
        case .written(let count, let changes):
            var w = MessageWriter(code: 6)
            w.field(UInt32(clamping: max(0, count)))
            for change in changes { w.field(change.encoded()) }
            return w.bytes
        case .items(let items):
            var w = MessageWriter(code: 2)
            w.fields(items)
            return w.bytes
        case .accessLog(let records, let problems):
            return AccessLogWire.encoded(records, problems)
        case .status(let s):
            var w = MessageWriter(code: 3)
            w.field([s.state.rawValue])
            w.field(UInt32(bitPattern: s.pid))
            w.field(s.vault)
            w.field(s.idleSecondsLeft.map { $0 } ?? UInt32.max)
            w.field(s.maxSecondsLeft ?? UInt32.max)
            return w.bytes
        case .failure(.revisionMismatch(let name, let expected, let current)):
            // The name, then both revisions as UInt64 big-endian.
            var w = MessageWriter(code: AgentResponse.revisionMismatchCode)
            w.field(name)
            w.field(expected)
            w.field(current)
            return w.bytes
        case .failure(.consentMissing(let why, let miss)):
            var w = MessageWriter(code: AgentResponse.consentMissingCode)
            w.field(why)
            w.field([miss.rawValue])
            return w.bytes
        case .failure(let error):
            // Every other failure is its code (from the table the decoder
            // reads too) and its message.
            let message = AgentResponse.message(of: error)
            guard let code = AgentResponse.failureCodes.first(where: { $0.1(message) == error })?.0 else {
                preconditionFailure("no code for \(error)")
            }
            var w = MessageWriter(code: code)
            w.field(message)
            return w.bytes
        }
    }

    /// The text a failure carries (empty for `.authFailed`).
    private static func message(of error: KeychainError) -> String {
        switch error {
        case .duplicateItem(let m), .itemNotFound(let m), .interactionNotAllowed(let m), .decode(let m), .param(let m),
            .noSuchKeychain(let m), .io(let m), .revisionMismatch(let m, _, _), .accessDenied(let m),
            .consentMissing(let m, _):
            return m
        case .authFailed: return ""
        }
    }

    /// The answer to a request of another version.
    static func versionMismatch() -> [UInt8] {
        var w = MessageWriter(code: AgentProtocol.versionMismatchCode)
        w.field("protocol version \(AgentProtocol.version)")
        return w.bytes
    }

    /// Decodes a response (from the agent: checked as carefully as a request).
    /// - Parameters:
    ///   - bytes: one frame's payload.
    ///   - withSecrets: keep secrets of `.item`.
    ///   - eachItem: when given, each item of an `.items` answer is handed to
    ///     it as soon as it is decoded, and the answer is `.items([])`.
    /// - Throws: ``AgentProtocolError``; `.versionMismatch` names the agent's version.
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, withSecrets: Bool = true, eachItem: ((Item) -> Void)? = nil
    ) throws(AgentProtocolError) -> AgentResponse {
        let r = try MessageReader(bytes, limit: AgentProtocol.maxResponseBytes)
        guard r.version == AgentProtocol.version else { throw .versionMismatch(r.version) }
        func item(_ index: Int) throws(AgentProtocolError) -> Item {
            do { return try ItemWire.decode(r.raw(index), withSecret: withSecrets) } catch {
                throw .badField("an item: \(error)")
            }
        }
        switch r.code {
        case 0:
            try r.expect(0)
            return .ok
        case 5:
            return .event(try AgentEvent(r))
        case AccessLogWire.answerCode:
            let (records, problems) = try AccessLogWire.answer(r)
            return .accessLog(records: records, problems: problems)
        case 6:
            guard r.fields.count >= 1 else { throw .badField("a write's answer without its count") }
            var changes: [AgentEvent] = []
            for index in r.fields.indices.dropFirst() {
                changes.append(try AgentEvent(MessageReader(r.raw(index))))
            }
            return .written(count: Int(try r.uint32(0, "count")), changes: changes)
        case 2:
            if let eachItem {
                for index in r.fields.indices { eachItem(try item(index)) }
                return .items([])
            }
            var items: [Item] = []
            for index in r.fields.indices { items.append(try item(index)) }
            return .items(items)
        case 3:
            try r.expect(5)
            guard r.raw(0).count == 1, let state = AgentStatus.State(rawValue: r.raw(0)[0]) else {
                throw .badField("state")
            }
            let idle = try r.uint32(3, "idle")
            let max = try r.uint32(4, "max")
            return .status(
                AgentStatus(
                    state: state, pid: Int32(bitPattern: try r.uint32(1, "pid")), vault: try r.text(2, "vault"),
                    idleSecondsLeft: idle == .max ? nil : idle, maxSecondsLeft: max == .max ? nil : max))
        case AgentProtocol.versionMismatchCode:
            throw .versionMismatch(r.version)
        case AgentResponse.revisionMismatchCode:
            try r.expect(3)
            return .failure(
                .revisionMismatch(
                    try r.text(0, "message"), expected: try r.uint64(1, "a revision"),
                    current: try r.uint64(2, "a revision")))
        case AgentResponse.consentMissingCode:
            try r.expect(2)
            guard r.raw(1).count == 1, let miss = ConsentMiss(rawValue: r.raw(1)[0]) else {
                throw .badField("how the question ended")
            }
            return .failure(.consentMissing(try r.text(0, "message"), miss))
        default:
            guard let make = failureCodes.first(where: { $0.0 == r.code })?.1 else { throw .unknownCode(r.code) }
            try r.expect(1)
            return .failure(make(try r.text(0, "message")))
        }
    }
}

import FobStore
import FoundationEssentials

/// Queries and changes on the wire (for the `SecItem…` calls and the
/// terminal UI): one field holding entries of a tag, a mode (0 = not given,
/// 1 = remove, 2 = value) and length-prefixed bytes.
struct AttributeBag {
    private(set) var bytes: [UInt8] = []
    /// Tag, mode and where the value lies in ``bytes``; a bag holds a few,
    /// and at most one a tag (256), so a scan finds one.
    private var entries: [(tag: UInt8, mode: UInt8, value: Range<Int>)] = []

    init() {}

    // MARK: Writing

    private mutating func put(_ tag: UInt8, _ mode: UInt8, _ value: UnsafeRawBufferPointer) {
        let n = UInt32(value.count)
        makeRoom(6 + value.count)
        for byte in [tag, mode, UInt8(n >> 24), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] {
            bytes.append(byte)
        }
        bytes.append(contentsOf: value)
    }

    /// Makes room for `extra` more bytes: the bag may hold a secret (a seed,
    /// a field's value), so a larger buffer is a fresh array and the old
    /// one is wiped before it is freed, never left to a reallocation.
    private mutating func makeRoom(_ extra: Int) {
        guard bytes.capacity < bytes.count + extra else { return }
        var larger: [UInt8] = []
        larger.reserveCapacity(max(bytes.count + extra, bytes.capacity * 2, 256))
        larger.append(contentsOf: bytes)
        bytes.wipe()
        bytes = larger
    }
    private mutating func put(_ tag: UInt8, _ mode: UInt8, _ value: [UInt8]) {
        value.withUnsafeBytes { put(tag, mode, $0) }
    }

    mutating func text(_ tag: UInt8, _ value: String?) { if let value { put(tag, 2, Array(value.utf8)) } }
    mutating func text(_ tag: UInt8, _ value: String??) {
        switch value {
        case .none: break
        case .some(.none): put(tag, 1, [])
        case .some(.some(let v)): put(tag, 2, Array(v.utf8))
        }
    }
    mutating func raw(_ tag: UInt8, _ value: [UInt8]??) {
        switch value {
        case .none: break
        case .some(.none): put(tag, 1, [])
        case .some(.some(let v)): put(tag, 2, v)
        }
    }
    mutating func secret(_ tag: UInt8, _ value: SecretBytes??) {
        switch value {
        case .none: break
        case .some(.none): put(tag, 1, [])
        case .some(.some(let v)): v.withUnsafeBytes { put(tag, 2, $0) }
        }
    }
    mutating func number<N: BinaryInteger>(_ tag: UInt8, _ value: N??) {
        switch value {
        case .none: break
        case .some(.none): put(tag, 1, [])
        case .some(.some(let v)): put(tag, 2, Array(String(v).utf8))
        }
    }
    mutating func flag(_ tag: UInt8, _ value: Bool?) { if let value { put(tag, 2, [value ? 1 : 0]) } }

    // MARK: Reading

    /// Splits `field`; every entry bounds-checked; a repeated tag is an error.
    init(reading field: UnsafeRawBufferPointer) throws(AgentProtocolError) {
        bytes = Array(field)
        var i = 0
        while i < bytes.count {
            guard bytes.count - i >= 6 else { throw .truncated }
            let tag = bytes[i]
            let mode = bytes[i + 1]
            let n = Int(bytes[i + 2]) << 24 | Int(bytes[i + 3]) << 16 | Int(bytes[i + 4]) << 8 | Int(bytes[i + 5])
            i += 6
            guard n <= bytes.count - i else { throw .truncated }
            guard mode == 1 || mode == 2, mode == 2 || n == 0 else {
                throw .badField("attribute \(tag) has mode \(mode)")
            }
            guard !entries.contains(where: { $0.tag == tag }) else { throw .badField("attribute \(tag) twice") }
            entries.append((tag, mode, i..<(i + n)))
            i += n
        }
    }

    private func entry(_ tag: UInt8) -> (mode: UInt8, value: ArraySlice<UInt8>)? {
        entries.first(where: { $0.tag == tag }).map { ($0.mode, bytes[$0.value]) }
    }

    func text(_ tag: UInt8) throws(AgentProtocolError) -> String? {
        guard let e = entry(tag) else { return nil }
        guard e.mode == 2, e.value.count <= Item.maxTextBytes, let text = String(checkingUTF8: e.value)
        else {
            throw .badField("attribute \(tag) is not text")
        }
        return text
    }
    func change(_ tag: UInt8) throws(AgentProtocolError) -> String?? {
        guard let e = entry(tag) else { return .none }
        if e.mode == 1 { return .some(nil) }
        return .some(try text(tag))
    }
    func raw(_ tag: UInt8) -> [UInt8]?? {
        guard let e = entry(tag) else { return .none }
        return e.mode == 1 ? .some(nil) : .some(Array(e.value))
    }
    func secret(_ tag: UInt8) throws(AgentProtocolError) -> SecretBytes?? {
        guard let e = entry(tag) else { return .none }
        if e.mode == 1 { return .some(nil) }
        guard e.value.count <= Item.maxSecretBytes else { throw .badField("attribute \(tag) is too long") }
        return .some(SecretBytes(e.value))
    }
    func number<N: FixedWidthInteger>(_ tag: UInt8, _ type: N.Type) throws(AgentProtocolError) -> N?? {
        guard let e = entry(tag) else { return .none }
        if e.mode == 1 { return .some(nil) }
        guard e.value.count <= 24, let value = N(String(decoding: e.value, as: UTF8.self)) else {
            throw .badField("attribute \(tag) is not a number")
        }
        return .some(value)
    }
    func flag(_ tag: UInt8) throws(AgentProtocolError) -> Bool? {
        guard let e = entry(tag) else { return nil }
        guard e.mode == 2, e.value.count == 1, e.value.first! <= 1 else {
            throw .badField("attribute \(tag) is not a flag")
        }
        return e.value.first! == 1
    }
    func enumeration<E: RawRepresentable>(_ tag: UInt8, _ type: E.Type) throws(AgentProtocolError) -> E?
    where E.RawValue == String {
        guard let text = try text(tag) else { return nil }
        guard let value = E(rawValue: text) else { throw .badField("attribute \(tag) '\(text)' is unknown") }
        return value
    }

    mutating func wipe() { bytes.wipe() }
}

/// The attributes of one type that a query or a change carries as they
/// are, each with its tag: both directions read the same table.
/// Kept in a `static let` (built once, not at every request): its key
/// paths are immutable objects, hence `@unchecked Sendable`.
private struct AttributeTable<Root>: @unchecked Sendable {
    var texts: [(UInt8, WritableKeyPath<Root, String?>)] = []
    var changes: [(UInt8, WritableKeyPath<Root, String??>)] = []
    var flags: [(UInt8, WritableKeyPath<Root, Bool?>)] = []
    var numbers: [(UInt8, WritableKeyPath<Root, UInt32??>)] = []

    func write(_ value: Root, to b: inout AttributeBag) {
        for (tag, path) in texts { b.text(tag, value[keyPath: path]) }
        for (tag, path) in changes { b.text(tag, value[keyPath: path]) }
        for (tag, path) in flags { b.flag(tag, value[keyPath: path]) }
        for (tag, path) in numbers { b.number(tag, value[keyPath: path]) }
    }

    func read(_ b: AttributeBag, into value: inout Root) throws(AgentProtocolError) {
        for (tag, path) in texts { value[keyPath: path] = try b.text(tag) }
        for (tag, path) in changes { value[keyPath: path] = try b.change(tag) }
        for (tag, path) in flags { value[keyPath: path] = try b.flag(tag) }
        for (tag, path) in numbers { value[keyPath: path] = try b.number(tag, UInt32.self) }
    }
}

extension ItemQuery {
    private static let table: AttributeTable<ItemQuery> =
        AttributeTable(
            texts: [
                (2, \.service), (3, \.account), (4, \.accessGroup), (5, \.label), (8, \.url),
                (10, \.internetProtocol), (11, \.authenticationType), (13, \.path), (14, \.securityDomain),
            ],
            flags: [(9, \.synchronizable)])

    var bag: AttributeBag {
        var b = AttributeBag()
        Self.table.write(self, to: &b)
        b.text(1, itemClass?.rawValue)
        b.text(6, kind?.rawValue)
        b.text(7, accessible?.rawValue)
        b.number(12, port.map { Optional($0) })
        b.text(15, persistentID?.uuidString)
        // 16: whether itemClass is nil (any class) rather than not given.
        b.flag(16, itemClass == nil)
        b.number(17, expectedRevision.map { Optional($0) })
        return b
    }

    init(bag b: AttributeBag) throws(AgentProtocolError) {
        self.init(itemClass: try b.flag(16) == true ? nil : try b.enumeration(1, ItemClass.self) ?? .genericPassword)
        try Self.table.read(b, into: &self)
        kind = try b.enumeration(6, ItemKind.self)
        accessible = try b.enumeration(7, Accessibility.self)
        port = try b.number(12, Int.self) ?? nil
        if let id = try b.text(15) {
            guard let uuid = UUID(uuidString: id) else { throw .badField("persistent id") }
            persistentID = uuid
        }
        expectedRevision = try b.number(17, UInt64.self) ?? nil
    }
}

extension ItemChanges {
    private static let table: AttributeTable<ItemChanges> =
        AttributeTable(
            texts: [
                (1, \.service), (2, \.account), (3, \.accessGroup), (14, \.internetProtocol),
                (15, \.authenticationType), (17, \.path), (18, \.securityDomain),
            ],
            changes: [(4, \.label), (5, \.comment), (10, \.url), (19, \.itemDescription)],
            flags: [(13, \.synchronizable), (22, \.isInvisible), (23, \.isNegative)],
            numbers: [(20, \.itemType), (21, \.creator)])

    var bag: AttributeBag {
        var b = AttributeBag()
        Self.table.write(self, to: &b)
        b.text(6, kind?.rawValue)
        b.text(7, accessible?.rawValue)
        b.raw(8, generic)
        b.secret(9, secret.map { Optional($0) })
        b.secret(11, oneTimePassword)
        if let customFields {
            // The fields travel as an item holding only them.
            let holder = Item(service: "", account: "", customFields: customFields, secret: nil)
            b.secret(12, .some(ItemWire.encode(holder)))
        }
        b.number(16, port.map { Optional($0) })
        b.number(24, accessControlFlags)
        b.number(25, expectedRevision.map { Optional($0) })
        b.text(26, deviceBinding.map { $0?.rawValue })
        b.raw(27, accessRule.map { .some($0.encoded) })
        return b
    }

    init(bag b: AttributeBag) throws(AgentProtocolError) {
        self.init()
        try Self.table.read(b, into: &self)
        kind = try b.enumeration(6, ItemKind.self)
        accessible = try b.enumeration(7, Accessibility.self)
        generic = b.raw(8)
        secret = try b.secret(9) ?? nil
        oneTimePassword = try b.secret(11)
        if case .some(.some(let holder)) = try b.secret(12) {
            do {
                customFields = try holder.withUnsafeBytes { raw in
                    Result { () throws(KeychainError) in try ItemWire.decode(raw) }
                }.get().customFields
            } catch {
                throw .badField("custom fields: \(error)")
            }
        }
        port = try b.number(16, Int.self) ?? nil
        accessControlFlags = try b.number(24, UInt64.self)
        expectedRevision = try b.number(25, UInt64.self) ?? nil
        if let binding = try b.change(26) {
            if let name = binding {
                guard let value = DeviceBinding(rawValue: name) else {
                    throw .badField("attribute 26 '\(name)' is unknown")
                }
                deviceBinding = .some(value)
            } else {
                deviceBinding = .some(nil)
            }
        }
        if case .some(.some(let encoded)) = b.raw(27) {
            do {
                accessRule = try AccessRule(encoded: encoded)
            } catch {
                throw .badField("attribute 27: \(error)")
            }
        }
    }
}

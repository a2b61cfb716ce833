import FobStore
import FoundationEssentials

/// Queries and changes on the wire (for the `SecItem…` calls and the
/// terminal UI): one field holding entries of a tag, a mode (0 = not given,
/// 1 = remove, 2 = value) and length-prefixed bytes.
struct AttributeBag {
    private(set) var bytes: [UInt8] = []
    private var entries: [UInt8: (mode: UInt8, value: Range<Int>)] = [:]

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
            guard entries[tag] == nil else { throw .badField("attribute \(tag) twice") }
            entries[tag] = (mode, i..<(i + n))
            i += n
        }
    }

    private func entry(_ tag: UInt8) -> (mode: UInt8, value: ArraySlice<UInt8>)? {
        entries[tag].map { ($0.mode, bytes[$0.value]) }
    }

    func text(_ tag: UInt8) throws(AgentProtocolError) -> String? {
        guard let e = entry(tag) else { return nil }
        guard e.mode == 2, e.value.count <= Item.maxTextBytes, let text = String(validating: e.value, as: UTF8.self)
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

extension ItemQuery {
    var bag: AttributeBag {
        var b = AttributeBag()
        b.text(1, itemClass?.rawValue)
        b.text(2, service)
        b.text(3, account)
        b.text(4, accessGroup)
        b.text(5, label)
        b.text(6, kind?.rawValue)
        b.text(7, accessible?.rawValue)
        b.text(8, url)
        b.flag(9, synchronizable)
        b.text(10, internetProtocol)
        b.text(11, authenticationType)
        b.number(12, port.map { Optional($0) })
        b.text(13, path)
        b.text(14, securityDomain)
        b.text(15, persistentID?.uuidString)
        // 16: whether itemClass is nil (any class) rather than not given.
        b.flag(16, itemClass == nil)
        b.number(17, expectedRevision.map { Optional($0) })
        return b
    }

    init(bag b: AttributeBag) throws(AgentProtocolError) {
        self.init(itemClass: try b.flag(16) == true ? nil : try b.enumeration(1, ItemClass.self) ?? .genericPassword)
        service = try b.text(2)
        account = try b.text(3)
        accessGroup = try b.text(4)
        label = try b.text(5)
        kind = try b.enumeration(6, ItemKind.self)
        accessible = try b.enumeration(7, Accessibility.self)
        url = try b.text(8)
        synchronizable = try b.flag(9)
        internetProtocol = try b.text(10)
        authenticationType = try b.text(11)
        port = try b.number(12, Int.self) ?? nil
        path = try b.text(13)
        securityDomain = try b.text(14)
        if let id = try b.text(15) {
            guard let uuid = UUID(uuidString: id) else { throw .badField("persistent id") }
            persistentID = uuid
        }
        expectedRevision = try b.number(17, UInt64.self) ?? nil
    }
}

extension ItemChanges {
    var bag: AttributeBag {
        var b = AttributeBag()
        b.text(1, service)
        b.text(2, account)
        b.text(3, accessGroup)
        b.text(4, label)
        b.text(5, comment)
        b.text(6, kind?.rawValue)
        b.text(7, accessible?.rawValue)
        b.raw(8, generic)
        b.secret(9, secret.map { Optional($0) })
        b.text(10, url)
        b.secret(11, oneTimePassword)
        if let customFields {
            // The fields travel as an item holding only them.
            let holder = Item(service: "", account: "", customFields: customFields, secret: nil)
            b.secret(12, .some(ItemWire.encode(holder)))
        }
        b.flag(13, synchronizable)
        b.text(14, internetProtocol)
        b.text(15, authenticationType)
        b.number(16, port.map { Optional($0) })
        b.text(17, path)
        b.text(18, securityDomain)
        b.text(19, itemDescription)
        b.number(20, itemType)
        b.number(21, creator)
        b.flag(22, isInvisible)
        b.flag(23, isNegative)
        b.number(24, accessControlFlags)
        b.number(25, expectedRevision.map { Optional($0) })
        b.text(26, deviceBinding.map { $0?.rawValue })
        return b
    }

    init(bag b: AttributeBag) throws(AgentProtocolError) {
        self.init()
        service = try b.text(1)
        account = try b.text(2)
        accessGroup = try b.text(3)
        label = try b.change(4)
        comment = try b.change(5)
        kind = try b.enumeration(6, ItemKind.self)
        accessible = try b.enumeration(7, Accessibility.self)
        generic = b.raw(8)
        secret = try b.secret(9) ?? nil
        url = try b.change(10)
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
        synchronizable = try b.flag(13)
        internetProtocol = try b.text(14)
        authenticationType = try b.text(15)
        port = try b.number(16, Int.self) ?? nil
        path = try b.text(17)
        securityDomain = try b.text(18)
        itemDescription = try b.change(19)
        itemType = try b.number(20, UInt32.self)
        creator = try b.number(21, UInt32.self)
        isInvisible = try b.flag(22)
        isNegative = try b.flag(23)
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
    }
}

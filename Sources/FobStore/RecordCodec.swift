import CSodium
import FoundationEssentials

/// The plaintext layout of an item record (before encryption), format 1:
/// a version byte (1), then fields as tag (1 byte) ‖ length (UInt32 LE) ‖ bytes.
///
/// Tags 1–12 are the first release's; 13 and later were added without a new
/// format, and are written only when their attribute is set, so an item that
/// uses none of them encodes to the same bytes as before.
///
/// | tag | field | bytes |
/// | --- | --- | --- |
/// | 1–12 | class, service, account, access group, label, comment, kind, accessible, generic, created, modified, secret | UTF-8, or 8-byte LE `Double` dates |
/// | 13 | url | UTF-8 |
/// | 14 | one-time-password seed | UTF-8 `otpauth://` URI |
/// | 15 | custom field (one per field, in order) | flags (bit 0: hidden) ‖ name length (UInt32 LE) ‖ name ‖ value |
/// | 16, 17 | protocol, authentication type | UTF-8 |
/// | 18 | port | UInt32 LE |
/// | 19, 20, 21 | path, security domain, description | UTF-8 |
/// | 22, 23 | type, creator | UInt32 LE |
/// | 24, 25, 26 | is-invisible, is-negative, synchronizable | one byte, 1 |
/// | 27 | access-control flags | UInt64 LE |
/// | 28 | persistent ID | 16 bytes |
/// | 29 | revision (``Item/revision``, written when not 0: every record of format 3) | UInt64 LE |
/// | 30 | device binding (`thisDeviceOnly`, `whenPasscodeSetThisDeviceOnly`) | UTF-8 |
/// | 31 | access rule (``AccessRule/encoded``), written when the item has one of its own | bytes |
///
/// Every length is bounded: tags 13 and later by ``Item/checkLimits()``,
/// the first release's by 1 MiB (it had no other limit, and its records must
/// stay readable; such an item must be shortened to be rewritten). A field
/// over its limit is a decode error. Unknown tags are kept in ``Item/unknownFields`` and
/// written back after the known ones, so a record that a later version
/// wrote keeps its fields through an update made by this one. (Versions
/// before tag 13 skip unknown tags and drop them when they rewrite a record.)
enum RecordCodec {
    private enum Tag: UInt8 {
        case itemClass = 1, service, account, accessGroup, label, comment, kind, accessible,
            generic, created, modified, secret
        case url = 13, oneTimePassword, customField, internetProtocol, authenticationType, port,
            path, securityDomain, itemDescription, itemType, creator, isInvisible, isNegative,
            synchronizable, accessControl, persistentID, revision, deviceBinding, accessRule

        /// Whether the field is UTF-8 text. The others are never read as
        /// text: a secret must not be copied into a `String`.
        var isText: Bool {
            switch self {
            case .itemClass, .service, .account, .accessGroup, .label, .comment, .kind, .accessible, .url,
                .internetProtocol, .authenticationType, .path, .securityDomain, .itemDescription, .deviceBinding:
                return true
            default: return false
            }
        }
    }

    /// A field's bytes: plain, or held in protected memory.
    fileprivate enum Piece {
        case plain([UInt8])
        case secret(SecretBytes)

        var count: Int {
            switch self {
            case .plain(let bytes): return bytes.count
            case .secret(let bytes): return bytes.count
            }
        }
    }

    /// An item's encoding, laid out but not yet written: its exact size is
    /// known first, so that a caller can reserve the room once and never
    /// leave a copy of a secret behind in a reallocated buffer.
    struct Prepared {
        fileprivate let fields: [(UInt8, [Piece])]
        /// The encoded size in bytes.
        let count: Int

        /// Writes the `count` bytes at `out` (which must hold at least that many).
        func write(into out: UnsafeMutableRawBufferPointer) {
            guard let base = out.baseAddress, out.count >= count else { preconditionFailure("record buffer too small") }
            var i = 0
            func put(_ bytes: UnsafeRawBufferPointer) {
                if let src = bytes.baseAddress, !bytes.isEmpty {
                    (base + i).copyMemory(from: src, byteCount: bytes.count)
                }
                i += bytes.count
            }
            base.storeBytes(of: 1, toByteOffset: 0, as: UInt8.self)
            i = 1
            for (tag, pieces) in fields {
                base.storeBytes(of: tag, toByteOffset: i, as: UInt8.self)
                i += 1
                let length = UInt32(pieces.reduce(0) { $0 + $1.count }).littleEndian
                withUnsafeBytes(of: length) { put($0) }
                for piece in pieces {
                    switch piece {
                    case .plain(let bytes): bytes.withUnsafeBytes { put($0) }
                    case .secret(let bytes): bytes.withUnsafeBytes { put($0) }
                    }
                }
            }
        }
    }

    /// Lays out `item`'s fields (see the table above) without writing them.
    static func prepare(_ item: Item) -> Prepared {
        func text(_ tag: Tag, _ value: String) -> (UInt8, [Piece]) { (tag.rawValue, [.plain(Array(value.utf8))]) }
        var fields: [(UInt8, [Piece])] = [
            text(.itemClass, item.itemClass.rawValue),
            text(.service, item.service),
            text(.account, item.account),
            text(.accessGroup, item.accessGroup),
            text(.kind, item.kind.rawValue),
            text(.accessible, item.accessible.rawValue),
            (Tag.created.rawValue, [.plain(le(item.created.timeIntervalSince1970.bitPattern, bytes: 8))]),
            (Tag.modified.rawValue, [.plain(le(item.modified.timeIntervalSince1970.bitPattern, bytes: 8))]),
        ]
        if let label = item.label { fields.append(text(.label, label)) }
        if let comment = item.comment { fields.append(text(.comment, comment)) }
        if let generic = item.generic { fields.append((Tag.generic.rawValue, [.plain(generic)])) }
        if let url = item.url { fields.append(text(.url, url)) }
        if let seed = item.oneTimePassword { fields.append((Tag.oneTimePassword.rawValue, [.secret(seed)])) }
        for field in item.customFields {
            let name = Array(field.name.utf8)
            fields.append(
                (
                    Tag.customField.rawValue,
                    [
                        .plain([field.isHidden ? 1 : 0] + le(UInt64(name.count), bytes: 4) + name),
                        .secret(field.value),
                    ]
                ))
        }
        for (tag, value) in [
            (Tag.internetProtocol, item.internetProtocol), (.authenticationType, item.authenticationType),
            (.path, item.path), (.securityDomain, item.securityDomain),
        ] where !value.isEmpty {
            fields.append(text(tag, value))
        }
        if item.port != 0 {
            fields.append((Tag.port.rawValue, [.plain(le(UInt64(truncatingIfNeeded: item.port), bytes: 4))]))
        }
        if let description = item.itemDescription { fields.append(text(.itemDescription, description)) }
        if let type = item.itemType { fields.append((Tag.itemType.rawValue, [.plain(le(UInt64(type), bytes: 4))])) }
        if let creator = item.creator { fields.append((Tag.creator.rawValue, [.plain(le(UInt64(creator), bytes: 4))])) }
        for (tag, flag) in [
            (Tag.isInvisible, item.isInvisible), (.isNegative, item.isNegative), (.synchronizable, item.synchronizable),
        ] where flag {
            fields.append((tag.rawValue, [.plain([1])]))
        }
        if let flags = item.accessControlFlags {
            fields.append((Tag.accessControl.rawValue, [.plain(le(flags, bytes: 8))]))
        }
        fields.append((Tag.persistentID.rawValue, [.plain(withUnsafeBytes(of: item.persistentID.uuid) { Array($0) })]))
        if item.revision != 0 { fields.append((Tag.revision.rawValue, [.plain(le(item.revision, bytes: 8))])) }
        if let binding = item.deviceBinding {
            fields.append((Tag.deviceBinding.rawValue, [.plain(Array(binding.rawValue.utf8))]))
        }
        if !item.accessRule.isDefault {
            fields.append((Tag.accessRule.rawValue, [.plain(item.accessRule.encoded)]))
        }
        for unknown in item.unknownFields { fields.append((unknown.tag, [.secret(unknown.bytes)])) }
        if let secret = item.secret {
            fields.append((Tag.secret.rawValue, [.secret(secret)]))
        } else {
            fields.append((Tag.secret.rawValue, []))
        }
        let total = 1 + fields.reduce(0) { sum, field in sum + 5 + field.1.reduce(0) { $0 + $1.count } }
        return Prepared(fields: fields, count: total)
    }

    /// `item` encoded into wiped-on-free memory.
    static func encode(_ item: Item) -> SecretBytes {
        let prepared = prepare(item)
        return SecretBytes(count: prepared.count) { out in prepared.write(into: UnsafeMutableRawBufferPointer(out)) }
    }

    /// - Throws: `.decode` when the layout is broken (which authenticated
    ///   encryption makes possible only with a bug or a foreign writer), or
    ///   when a field is over its limit (``Item/checkLimits()``).
    static func decode(_ raw: UnsafeRawBufferPointer, withSecret: Bool) throws(KeychainError) -> Item {
        guard raw.count >= 1, raw[0] == 1 else { throw .decode("unknown record format") }
        var item = Item(
            service: "", account: "", created: Date(timeIntervalSince1970: 0),
            modified: Date(timeIntervalSince1970: 0), persistentID: nilUUID, secret: nil)
        // Bit n is set once tag n has been read.
        var seen: UInt64 = 0
        var i = 1
        while i < raw.count {
            guard i + 5 <= raw.count else { throw .decode("truncated record") }
            let tag = raw[i]
            var n = 0
            for k in 0..<4 { n |= Int(raw[i + 1 + k]) << (8 * k) }
            i += 5
            guard n <= raw.count - i else { throw .decode("truncated record field") }
            let field = UnsafeRawBufferPointer(rebasing: raw[i..<(i + n)])
            i += n
            guard let known = Tag(rawValue: tag) else {
                guard item.unknownFields.count < maxUnknownFields, n <= Item.maxSecretBytes else {
                    throw .decode("too many or too large unknown record fields")
                }
                item.unknownFields.append(UnknownRecordField(tag: tag, bytes: SecretBytes(field)))
                continue
            }
            // The first release's fields had no limit but the secret's; they are
            // read up to 1 MiB, so that no record it wrote becomes unreadable.
            if known.rawValue <= Tag.secret.rawValue, n > Item.maxSecretBytes {
                throw .decode("a record field is over its limit")
            }
            if known.isText {
                try readText(known, field, into: &item)
            } else {
                try readBinary(known, field, into: &item, withSecret: withSecret)
            }
            seen |= 1 << UInt64(tag)
        }
        func saw(_ tag: Tag) -> Bool { seen & (1 << UInt64(tag.rawValue)) != 0 }
        guard saw(.service), saw(.account) else { throw .decode("record without service or account") }
        if !saw(.persistentID) { item.persistentID = derivedPersistentID(of: item) }
        return item
    }

    /// Reads one text field (``Tag/isText``) into `item`.
    private static func readText(_ tag: Tag, _ field: UnsafeRawBufferPointer, into item: inout Item)
        throws(KeychainError)
    {
        let text = String(checkingUTF8: field)
        // A field added after the first release is bounded like every text.
        let bounded = field.count <= Item.maxTextBytes ? text : nil
        switch tag {
        case .itemClass:
            guard let c = text.flatMap(ItemClass.init(rawValue:)) else { throw .decode("bad item class") }
            item.itemClass = c
        case .service, .account:
            guard let text else { throw .decode("bad \(tag)") }
            if tag == .service { item.service = text } else { item.account = text }
        case .accessGroup: item.accessGroup = text ?? ""
        case .label: item.label = text
        case .comment: item.comment = text
        case .kind: item.kind = text.flatMap(ItemKind.init(rawValue:)) ?? .password
        case .accessible: item.accessible = text.flatMap(Accessibility.init(rawValue:)) ?? .whenUnlocked
        case .url, .internetProtocol, .authenticationType, .path, .securityDomain, .itemDescription:
            guard let bounded else { throw .decode("bad \(tag)") }
            switch tag {
            case .url: item.url = bounded
            case .internetProtocol: item.internetProtocol = bounded
            case .authenticationType: item.authenticationType = bounded
            case .path: item.path = bounded
            case .securityDomain: item.securityDomain = bounded
            default: item.itemDescription = bounded
            }
        case .deviceBinding:
            guard let binding = bounded.flatMap(DeviceBinding.init(rawValue:)) else {
                throw .decode("bad device binding")
            }
            item.deviceBinding = binding
        default:
            preconditionFailure("\(tag) is not a text field")
        }
    }

    /// Reads one known field that is not text: dates, the secrets, numbers,
    /// flags and identifiers, each of its exact size.
    private static func readBinary(
        _ tag: Tag, _ field: UnsafeRawBufferPointer, into item: inout Item, withSecret: Bool
    ) throws(KeychainError) {
        let n = field.count
        switch tag {
        case .generic: item.generic = Array(field)
        case .created: item.created = date(field)
        case .modified: item.modified = date(field)
        case .secret:
            if withSecret { item.secret = SecretBytes(field) }
        case .oneTimePassword:
            guard n <= Item.maxOneTimePasswordBytes else { throw .decode("a record field is over its limit") }
            item.oneTimePassword = SecretBytes(field)
        case .customField:
            guard item.customFields.count < Item.maxCustomFields else { throw .decode("too many custom fields") }
            guard let custom = customField(field) else { throw .decode("bad custom field") }
            item.customFields.append(custom)
        case .port:
            guard n == 4, let port = Int(exactly: uint(field)), port <= Item.maxPort else {
                throw .decode("bad port")
            }
            item.port = port
        case .itemType, .creator:
            guard n == 4 else { throw .decode("bad four-character code") }
            if tag == .itemType { item.itemType = UInt32(uint(field)) } else { item.creator = UInt32(uint(field)) }
        case .isInvisible, .isNegative, .synchronizable:
            guard n == 1, field[0] <= 1 else { throw .decode("bad flag") }
            let flag = field[0] == 1
            switch tag {
            case .isInvisible: item.isInvisible = flag
            case .isNegative: item.isNegative = flag
            default: item.synchronizable = flag
            }
        case .accessControl:
            guard n == 8 else { throw .decode("bad access control") }
            item.accessControlFlags = uint(field)
        case .persistentID:
            guard n == 16 else { throw .decode("bad persistent ID") }
            var bytes = nilUUID.uuid
            withUnsafeMutableBytes(of: &bytes) { $0.copyMemory(from: field) }
            item.persistentID = UUID(uuid: bytes)
        case .revision:
            guard n == 8 else { throw .decode("bad revision") }
            item.revision = uint(field)
        case .accessRule:
            guard n <= AccessRule.maxEncodedBytes else { throw .decode("access rule over its limit") }
            item.accessRule = try AccessRule(encoded: Array(field))
        default:
            preconditionFailure("\(tag) is a text field")
        }
    }

    /// The most unknown fields a record may carry: 64.
    static let maxUnknownFields = 64

    /// The all-zero UUID, a placeholder until the real identifier is known.
    static let nilUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// flags (bit 0: hidden) ‖ name length (UInt32 LE) ‖ name ‖ value, bounded.
    private static func customField(_ field: UnsafeRawBufferPointer) -> CustomField? {
        guard field.count >= 5, field[0] <= 1 else { return nil }
        var nameCount = 0
        for k in 0..<4 { nameCount |= Int(field[1 + k]) << (8 * k) }
        guard nameCount >= 1, nameCount <= Item.maxFieldNameBytes, nameCount <= field.count - 5 else { return nil }
        let valueCount = field.count - 5 - nameCount
        guard valueCount <= Item.maxFieldValueBytes,
            let name = String(checkingUTF8: UnsafeRawBufferPointer(rebasing: field[5..<(5 + nameCount)]))
        else { return nil }
        return CustomField(
            name: name, value: SecretBytes(UnsafeRawBufferPointer(rebasing: field[(5 + nameCount)...])),
            isHidden: field[0] == 1)
    }

    /// A stable identifier for a record written before persistent IDs: the
    /// first 16 bytes of BLAKE2b of its primary key and creation date, so it
    /// is the same on every read; the first rewrite stores it.
    private static func derivedPersistentID(of item: Item) -> UUID {
        let input =
            Array("fob persistent id v1".utf8) + primaryKey(of: item)
            + le(item.created.timeIntervalSince1970.bitPattern, bytes: 8)
        var out = nilUUID.uuid
        withUnsafeMutableBytes(of: &out) { buffer in
            _ = crypto_generichash(
                buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), 16,
                input, UInt64(input.count), nil, 0)
        }
        return UUID(uuid: out)
    }

    private static func le(_ v: UInt64, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) }
    }

    private static func uint(_ field: UnsafeRawBufferPointer) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<field.count { v |= UInt64(field[k]) << (8 * UInt64(k)) }
        return v
    }

    private static func date(_ field: UnsafeRawBufferPointer) -> Date {
        guard field.count == 8 else { return Date(timeIntervalSince1970: 0) }
        return Date(timeIntervalSince1970: Double(bitPattern: uint(field)))
    }

    /// The primary key bytes hashed into `lookup`: class, access group,
    /// service, account, each as length (UInt32 LE) ‖ UTF-8 — exactly the
    /// first release's bytes — then, only when one of them is set, the
    /// attributes added since, each length-prefixed the same way:
    /// synchronizable (one byte) for generic passwords; protocol,
    /// authentication type, port (UInt32 LE), path, security domain and
    /// synchronizable for internet passwords. Every field is length-prefixed,
    /// so a longer key can never equal a shorter one.
    static func primaryKey(of item: Item) -> [UInt8] {
        // Written in place (no array per field): every lookup and every
        // record read computes it.
        var out: [UInt8] = []
        out.reserveCapacity(
            48 + item.itemClass.rawValue.utf8.count + item.accessGroup.utf8.count + item.service.utf8.count
                + item.account.utf8.count)
        func length(_ count: Int) {
            let n = UInt32(truncatingIfNeeded: count)
            out.append(UInt8(truncatingIfNeeded: n))
            out.append(UInt8(truncatingIfNeeded: n >> 8))
            out.append(UInt8(truncatingIfNeeded: n >> 16))
            out.append(UInt8(truncatingIfNeeded: n >> 24))
        }
        func field(_ text: String) {
            length(text.utf8.count)
            out.append(contentsOf: text.utf8)
        }
        func field(byte: UInt8) {
            length(1)
            out.append(byte)
        }
        field(item.itemClass.rawValue)
        field(item.accessGroup)
        field(item.service)
        field(item.account)
        switch item.itemClass {
        case .genericPassword:
            if item.synchronizable { field(byte: 1) }
        case .internetPassword:
            if item.synchronizable || !item.internetProtocol.isEmpty || !item.authenticationType.isEmpty
                || item.port != 0 || !item.path.isEmpty || !item.securityDomain.isEmpty
            {
                field(item.internetProtocol)
                field(item.authenticationType)
                length(4)
                let port = UInt32(truncatingIfNeeded: item.port)
                for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: port >> shift)) }
                field(item.path)
                field(item.securityDomain)
                field(byte: item.synchronizable ? 1 : 0)
            }
        }
        return out
    }
}

extension String {
    /// `bytes` as text when they are valid UTF-8, else `nil`: the answer of
    /// `String(validating: bytes, as: UTF8.self)`, but ASCII (most names and
    /// attributes) is taken as it is, without that general check whose
    /// unspecialized code costs about a thousand instructions a call (a
    /// listing reads several fields an item).
    @inlinable
    public init?<Bytes: Collection<UInt8>>(checkingUTF8 bytes: Bytes) {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            self = String(decoding: bytes, as: UTF8.self)
            return
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        self = text
    }
}

import Foundation

/// The plaintext layout of an item record (before encryption), format 1:
/// a version byte (1), then fields as tag (1 byte) ‖ length (UInt32 LE) ‖ bytes.
/// Unknown tags are skipped, so later formats can add fields.
enum RecordCodec {
    private enum Tag: UInt8 {
        case itemClass = 1, service, account, accessGroup, label, comment, kind, accessible,
             generic, created, modified, secret
    }

    static func encode(_ item: Item) -> SecretBytes {
        var fields: [(Tag, [UInt8])] = [
            (.itemClass, Array(item.itemClass.rawValue.utf8)),
            (.service, Array(item.service.utf8)),
            (.account, Array(item.account.utf8)),
            (.accessGroup, Array(item.accessGroup.utf8)),
            (.kind, Array(item.kind.rawValue.utf8)),
            (.accessible, Array(item.accessible.rawValue.utf8)),
            (.created, le64(item.created.timeIntervalSince1970.bitPattern)),
            (.modified, le64(item.modified.timeIntervalSince1970.bitPattern)),
        ]
        if let label = item.label { fields.append((.label, Array(label.utf8))) }
        if let comment = item.comment { fields.append((.comment, Array(comment.utf8))) }
        if let generic = item.generic { fields.append((.generic, generic)) }
        let secret = item.secret ?? SecretBytes([])
        let total = 1 + fields.reduce(0) { $0 + 5 + $1.1.count } + 5 + secret.count
        return SecretBytes(count: total) { out in
            var i = 0
            func put(_ b: UInt8) { out[i] = b; i += 1 }
            func header(_ tag: Tag, _ n: Int) {
                put(tag.rawValue)
                for s in stride(from: 0, to: 32, by: 8) { put(UInt8(truncatingIfNeeded: UInt32(n) >> UInt32(s))) }
            }
            put(1)
            for (tag, bytes) in fields {
                header(tag, bytes.count)
                for b in bytes { put(b) }
            }
            header(.secret, secret.count)
            secret.withUnsafeBytes { for b in $0 { put(b) } }
        }
    }

    /// - Throws: `.decode` when the layout is broken (which authenticated
    ///   encryption makes possible only with a bug or a foreign writer).
    static func decode(_ raw: UnsafeRawBufferPointer, withSecret: Bool) throws(KeychainError) -> Item {
        var item = Item(service: "", account: "", created: Date(timeIntervalSince1970: 0),
                        modified: Date(timeIntervalSince1970: 0), secret: nil)
        var sawService = false, sawAccount = false
        let failure: KeychainError? = { () -> KeychainError? in
            guard raw.count >= 1, raw[0] == 1 else { return .decode("unknown record format") }
            var i = 1
            while i < raw.count {
                guard i + 5 <= raw.count else { return .decode("truncated record") }
                let tag = raw[i]
                var n = 0
                for k in 0..<4 { n |= Int(raw[i + 1 + k]) << (8 * k) }
                i += 5
                guard n <= raw.count - i else { return .decode("truncated record field") }
                let field = UnsafeRawBufferPointer(rebasing: raw[i..<(i + n)])
                i += n
                func text() -> String? { String(validating: field, as: UTF8.self) }
                switch Tag(rawValue: tag) {
                case .itemClass:
                    guard let c = text().flatMap(ItemClass.init(rawValue:)) else { return .decode("bad item class") }
                    item.itemClass = c
                case .service:
                    guard let s = text() else { return .decode("bad service") }
                    item.service = s; sawService = true
                case .account:
                    guard let s = text() else { return .decode("bad account") }
                    item.account = s; sawAccount = true
                case .accessGroup: item.accessGroup = text() ?? ""
                case .label: item.label = text()
                case .comment: item.comment = text()
                case .kind: item.kind = text().flatMap(ItemKind.init(rawValue:)) ?? .password
                case .accessible: item.accessible = text().flatMap(Accessibility.init(rawValue:)) ?? .whenUnlocked
                case .generic: item.generic = Array(field)
                case .created: item.created = date(field)
                case .modified: item.modified = date(field)
                case .secret: if withSecret { item.secret = SecretBytes(field) }
                case nil: break
                }
            }
            return nil
        }()
        if let failure { throw failure }
        guard sawService, sawAccount else { throw .decode("record without service or account") }
        return item
    }

    private static func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    private static func date(_ field: UnsafeRawBufferPointer) -> Date {
        guard field.count == 8 else { return Date(timeIntervalSince1970: 0) }
        var v: UInt64 = 0
        for k in 0..<8 { v |= UInt64(field[k]) << (8 * UInt64(k)) }
        return Date(timeIntervalSince1970: Double(bitPattern: v))
    }

    /// The primary key bytes hashed into `lookup`: class, access group,
    /// service, account, each as length (UInt32 LE) ‖ UTF-8.
    static func primaryKey(itemClass: ItemClass, accessGroup: String, service: String, account: String) -> [UInt8] {
        var out: [UInt8] = []
        for s in [itemClass.rawValue, accessGroup, service, account] {
            let b = Array(s.utf8)
            out += (0..<4).map { UInt8(truncatingIfNeeded: UInt32(b.count) >> (8 * UInt32($0))) }
            out += b
        }
        return out
    }
}

import FobStore
import FoundationEssentials

/// Fob's own export, `fob-json`: every attribute of every item, so that an
/// export imported into another vault reproduces each item exactly.
///
/// `{"format":"fob-json","version":1,"items":[…]}`; each item is an object
/// with `class` (`genp`/`inet`), `service`, `account`, `accessGroup`,
/// `label`, `notes`, `kind`, `accessible`, `created` and `modified` (seconds
/// since 1970 as a JSON number, written so that they read back to the same
/// value), `persistentID`, `secret` (UTF-8 text) or `secretBase64`, `url`,
/// `oneTimePassword`, `customFields` (`name`, `value` or `valueBase64`,
/// `hidden`), `generic` (base64), `synchronizable`, `protocol`,
/// `authenticationType`, `port`, `path`, `securityDomain`, `description`,
/// `type`, `creator`, `invisible`, `negative`, `accessControlFlags`,
/// `deviceBinding` (`thisDeviceOnly`, `whenPasscodeSetThisDeviceOnly`; may be absent).
/// `null` stands for an attribute not set.
public enum FobJSON {
    /// The `version` this build writes and reads.
    public static let version = 1

    struct File: Decodable {
        let format: String
        let version: Int
        let items: [Entry]
    }

    struct Field: Decodable {
        let name: String
        let value: String?
        let valueBase64: String?
        let hidden: Bool
    }

    /// A member's name, as a coding key.
    struct Key: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.init(stringValue) }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// One member that holds an attribute as it is: the reader and the
    /// writer both go through ``members``, so they cannot disagree.
    struct Member {
        let name: String
        let write: (Item, inout [UInt8]) -> Void
        let read: (inout Item, KeyedDecodingContainer<Key>) throws -> Void

        init<V: FobJSONValue>(_ name: String, _ path: WritableKeyPath<Item, V>) {
            self.name = name
            write = { item, out in item[keyPath: path].writeJSON(&out) }
            read = { item, c in item[keyPath: path] = try V.read(c, Key(name)) }
        }
    }

    /// The members that name and describe an item, `class` to `persistentID`.
    static var nameMembers: [Member] {
        [
            Member("class", \.itemClass), Member("service", \.service), Member("account", \.account),
            Member("accessGroup", \.accessGroup), Member("label", \.label), Member("notes", \.comment),
            Member("kind", \.kind), Member("accessible", \.accessible), Member("created", \.createdSeconds),
            Member("modified", \.modifiedSeconds), Member("persistentID", \.persistentID),
        ]
    }

    /// The URL and the Keychain attributes, `synchronizable` to `deviceBinding`.
    static var attributeMembers: [Member] {
        [
            Member("url", \.url), Member("synchronizable", \.synchronizable),
            Member("protocol", \.internetProtocol), Member("authenticationType", \.authenticationType),
            Member("port", \.port), Member("path", \.path), Member("securityDomain", \.securityDomain),
            Member("description", \.itemDescription), Member("type", \.itemType), Member("creator", \.creator),
            Member("invisible", \.isInvisible), Member("negative", \.isNegative),
            Member("accessControlFlags", \.accessControlFlags), Member("deviceBinding", \.deviceBinding),
        ]
    }

    /// One exported item: the attributes read into `item`, the values
    /// (checked in ``read(_:)``, which names the entry) as they stand.
    struct Entry: Decodable {
        var item = Item(service: "", account: "", secret: nil)
        let secret: String?
        let secretBase64: String?
        let oneTimePassword: String?
        let customFields: [Field]
        let generic: String?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Key.self)
            for member in FobJSON.nameMembers + FobJSON.attributeMembers { try member.read(&item, c) }
            secret = try c.decodeIfPresent(String.self, forKey: Key("secret"))
            secretBase64 = try c.decodeIfPresent(String.self, forKey: Key("secretBase64"))
            oneTimePassword = try c.decodeIfPresent(String.self, forKey: Key("oneTimePassword"))
            customFields = try c.decode([Field].self, forKey: Key("customFields"))
            generic = try c.decodeIfPresent(String.self, forKey: Key("generic"))
        }
    }

    /// Reads a `fob-json` export.
    ///
    /// A pure function (a fuzz target).
    /// - Throws: `.encoding` for text that is not UTF-8; `.malformed` for text
    ///   that is not JSON (or is truncated) or not a fob-json export;
    ///   `.wrongType` naming the item and attribute whose value has the wrong type.
    public static func read(_ bytes: [UInt8]) throws(ImportError) -> ImportRead {
        let text = try TextDecoding.utf8(bytes)
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(text))
        } catch let error as DecodingError {
            throw describe(error)
        } catch {
            throw .malformed("not JSON: \(error)")
        }
        guard file.format == "fob-json" else {
            throw .malformed("not a fob-json export (format \"\(displaySafe(file.format))\")")
        }
        guard file.version == version else {
            throw .wrongType("fob-json version \(file.version); this Fob reads version \(version)")
        }
        var read = ImportRead()
        read.entries.reserveCapacity(file.items.count)
        for (index, e) in file.items.enumerated() {
            let origin = "entry \(index + 1)"
            let secret: SecretBytes
            if let text = e.secret {
                secret = SecretBytes(utf8: text)
            } else if let b64 = e.secretBase64, let data = Data(base64Encoded: b64) {
                secret = SecretBytes(data)
            } else {
                throw .wrongType("\(origin): neither \"secret\" nor a valid \"secretBase64\"")
            }
            var fields: [CustomField] = []
            for field in e.customFields {
                if let value = field.value {
                    fields.append(
                        CustomField(name: field.name, value: SecretBytes(utf8: value), isHidden: field.hidden))
                } else if let b64 = field.valueBase64, let data = Data(base64Encoded: b64) {
                    fields.append(CustomField(name: field.name, value: SecretBytes(data), isHidden: field.hidden))
                } else {
                    throw .wrongType(
                        "\(origin): custom field \"\(displaySafe(field.name))\" has neither \"value\" nor a valid \"valueBase64\""
                    )
                }
            }
            var generic: [UInt8]?
            if let g = e.generic {
                guard let data = Data(base64Encoded: g) else {
                    throw .wrongType("\(origin): \"generic\" is not base64")
                }
                generic = Array(data)
            }
            var item = e.item
            item.generic = generic
            item.oneTimePassword = e.oneTimePassword.map { SecretBytes(utf8: $0) }
            item.customFields = fields
            item.secret = secret
            read.entries.append(ImportEntry(item: item, datesKnown: true, origin: origin))
        }
        return read
    }

    /// A decoding error as a message naming the place (`items[3].port`).
    static func describe(_ error: DecodingError) -> ImportError {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." }.description
        }
        switch error {
        case .typeMismatch(let type, let context):
            return .wrongType("\(path(context.codingPath)): expected \(typeName(type))")
        case .valueNotFound(let type, let context):
            return .wrongType("\(path(context.codingPath)): expected \(typeName(type)), found null")
        case .keyNotFound(let key, let context):
            return .wrongType("\(path(context.codingPath + [key])): missing")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty { return .malformed("not JSON, or a truncated file") }
            return .wrongType("\(path(context.codingPath)): \(context.debugDescription)")
        @unknown default:
            return .malformed("not a fob-json export")
        }
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "text"
        case is Bool.Type: return "true or false"
        case is Int.Type, is UInt32.Type, is UInt64.Type, is Double.Type: return "a number"
        default: return "\(type)".contains("Array") ? "an array" : "an object"
        }
    }

    /// Writes `items` (with their secrets) as a `fob-json` export.
    /// - Important: the result holds every secret; the caller wipes it.
    public static func write(_ items: [Item]) -> [UInt8] {
        var out = Array("{\"format\":\"fob-json\",\"version\":\(version),\"items\":[".utf8)
        for (index, item) in items.enumerated() {
            if index > 0 { out.append(0x2C) }
            out += Array("\n{".utf8)
            for (i, member) in nameMembers.enumerated() {
                JSONWriter.key(member.name, &out, first: i == 0)
                member.write(item, &out)
            }
            writeValues(item, &out)
            for member in attributeMembers {
                JSONWriter.key(member.name, &out)
                member.write(item, &out)
            }
            out.append(0x7D)
        }
        out += Array("\n]}\n".utf8)
        return out
    }

    /// The secret, one-time seed, custom fields and generic bytes.
    private static func writeValues(_ item: Item, _ out: inout [UInt8]) {
        if let secret = item.secret { JSONWriter.secret(secret, name: "secret", &out) }
        JSONWriter.key("oneTimePassword", &out)
        if let seed = item.oneTimePassword {
            seed.withUnsafeBytes { JSONWriter.string(bytes: $0, &out) }
        } else {
            out += Array("null".utf8)
        }
        JSONWriter.key("customFields", &out)
        out.append(0x5B)
        for (i, field) in item.customFields.enumerated() {
            if i > 0 { out.append(0x2C) }
            JSONWriter.key("name", &out, first: true, open: true)
            JSONWriter.string(field.name, &out)
            JSONWriter.secret(field.value, name: "value", &out)
            JSONWriter.key("hidden", &out)
            out += Array((field.isHidden ? "true" : "false").utf8)
            out.append(0x7D)
        }
        out.append(0x5D)
        JSONWriter.key("generic", &out)
        if let generic = item.generic {
            JSONWriter.string(Data(generic).base64EncodedString(), &out)
        } else {
            out += Array("null".utf8)
        }
    }
}

/// Writes JSON (RFC 8259) byte by byte, so that a secret never passes through a `String`.
enum JSONWriter {
    static let hex = Array("0123456789abcdef".utf8)

    static func key(_ name: String, _ out: inout [UInt8], first: Bool = false, open: Bool = false) {
        if open { out.append(0x7B) }
        if !first { out.append(0x2C) }
        string(name, &out)
        out.append(0x3A)
    }

    static func string(_ text: String, _ out: inout [UInt8]) {
        var text = text
        text.withUTF8 { string(bytes: UnsafeRawBufferPointer($0), &out) }
    }

    static func optional(_ text: String?, _ out: inout [UInt8]) {
        if let text { string(text, &out) } else { out += Array("null".utf8) }
    }

    /// `"name":"text"` for UTF-8 bytes, else `"nameBase64":"…"`.
    static func secret(_ value: SecretBytes, name: String, _ out: inout [UInt8]) {
        if value.isValidUTF8 {
            key(name, &out)
            value.withUnsafeBytes { string(bytes: $0, &out) }
        } else {
            key(name + "Base64", &out)
            out.append(0x22)
            value.base64().withUnsafeBytes { out.append(contentsOf: $0) }
            out.append(0x22)
        }
    }

    static func string(bytes: UnsafeRawBufferPointer, _ out: inout [UInt8]) {
        out.append(0x22)
        for byte in bytes {
            switch byte {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20, 0x7F:
                out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(0x22)
    }
}

/// A value that a fob-json member holds as one JSON scalar (or `null`).
protocol FobJSONValue: Decodable {
    /// Appends the value's JSON text.
    func writeJSON(_ out: inout [UInt8])
    /// Reads the member `key` of `c`.
    static func read(_ c: KeyedDecodingContainer<FobJSON.Key>, _ key: FobJSON.Key) throws -> Self
}

extension FobJSONValue {
    static func read(_ c: KeyedDecodingContainer<FobJSON.Key>, _ key: FobJSON.Key) throws -> Self {
        try c.decode(Self.self, forKey: key)
    }
}

extension FobJSONValue where Self: LosslessStringConvertible {
    /// A number or `true`/`false`, as its description.
    func writeJSON(_ out: inout [UInt8]) { out += Array(description.utf8) }
}

extension FobJSONValue where Self: RawRepresentable, RawValue == String {
    func writeJSON(_ out: inout [UInt8]) { JSONWriter.string(rawValue, &out) }
}

extension String: FobJSONValue {
    func writeJSON(_ out: inout [UInt8]) { JSONWriter.string(self, &out) }
}

extension Bool: FobJSONValue {}
extension Int: FobJSONValue {}
extension UInt32: FobJSONValue {}
extension UInt64: FobJSONValue {}
extension Double: FobJSONValue {}
extension ItemClass: FobJSONValue {}
extension ItemKind: FobJSONValue {}
extension Accessibility: FobJSONValue {}
extension DeviceBinding: FobJSONValue {}

extension UUID: FobJSONValue {
    func writeJSON(_ out: inout [UInt8]) { JSONWriter.string(uuidString, &out) }
}

/// An optional member may be `null` or absent.
extension Optional: FobJSONValue where Wrapped: FobJSONValue {
    func writeJSON(_ out: inout [UInt8]) {
        if let value = self { value.writeJSON(&out) } else { out += Array("null".utf8) }
    }

    static func read(_ c: KeyedDecodingContainer<FobJSON.Key>, _ key: FobJSON.Key) throws -> Self {
        try c.decodeIfPresent(Wrapped.self, forKey: key)
    }
}

extension Item {
    /// ``created`` as seconds since 1970 (a fob-json number).
    fileprivate var createdSeconds: Double {
        get { created.timeIntervalSince1970 }
        set { created = Date(timeIntervalSince1970: newValue) }
    }

    /// ``modified`` as seconds since 1970 (a fob-json number).
    fileprivate var modifiedSeconds: Double {
        get { modified.timeIntervalSince1970 }
        set { modified = Date(timeIntervalSince1970: newValue) }
    }
}

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

    struct Entry: Decodable {
        let `class`: ItemClass
        let service: String
        let account: String
        let accessGroup: String
        let label: String?
        let notes: String?
        let kind: ItemKind
        let accessible: Accessibility
        let created: Double
        let modified: Double
        let persistentID: UUID
        let secret: String?
        let secretBase64: String?
        let url: String?
        let oneTimePassword: String?
        let customFields: [Field]
        let generic: String?
        let synchronizable: Bool
        let `protocol`: String
        let authenticationType: String
        let port: Int
        let path: String
        let securityDomain: String
        let description: String?
        let type: UInt32?
        let creator: UInt32?
        let invisible: Bool
        let negative: Bool
        let accessControlFlags: UInt64?
        let deviceBinding: DeviceBinding?
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
            var item = Item(
                itemClass: e.class, service: e.service, account: e.account, accessGroup: e.accessGroup,
                label: e.label, comment: e.notes, kind: e.kind, accessible: e.accessible, generic: generic,
                created: Date(timeIntervalSince1970: e.created), modified: Date(timeIntervalSince1970: e.modified),
                url: e.url, oneTimePassword: e.oneTimePassword.map { SecretBytes(utf8: $0) },
                customFields: fields, persistentID: e.persistentID, secret: secret)
            item.synchronizable = e.synchronizable
            item.internetProtocol = e.protocol
            item.authenticationType = e.authenticationType
            item.port = e.port
            item.path = e.path
            item.securityDomain = e.securityDomain
            item.itemDescription = e.description
            item.itemType = e.type
            item.creator = e.creator
            item.isInvisible = e.invisible
            item.isNegative = e.negative
            item.accessControlFlags = e.accessControlFlags
            item.deviceBinding = e.deviceBinding
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
            writeNames(item, &out)
            writeValues(item, &out)
            writeAttributes(item, &out)
            out.append(0x7D)
        }
        out += Array("\n]}\n".utf8)
        return out
    }

    /// The members that name and describe an item, `class` to `persistentID`.
    private static func writeNames(_ item: Item, _ out: inout [UInt8]) {
        JSONWriter.key("class", &out, first: true)
        JSONWriter.string(item.itemClass.rawValue, &out)
        JSONWriter.key("service", &out)
        JSONWriter.string(item.service, &out)
        JSONWriter.key("account", &out)
        JSONWriter.string(item.account, &out)
        JSONWriter.key("accessGroup", &out)
        JSONWriter.string(item.accessGroup, &out)
        JSONWriter.key("label", &out)
        JSONWriter.optional(item.label, &out)
        JSONWriter.key("notes", &out)
        JSONWriter.optional(item.notes, &out)
        JSONWriter.key("kind", &out)
        JSONWriter.string(item.kind.rawValue, &out)
        JSONWriter.key("accessible", &out)
        JSONWriter.string(item.accessible.rawValue, &out)
        JSONWriter.key("created", &out)
        out += Array(item.created.timeIntervalSince1970.description.utf8)
        JSONWriter.key("modified", &out)
        out += Array(item.modified.timeIntervalSince1970.description.utf8)
        JSONWriter.key("persistentID", &out)
        JSONWriter.string(item.persistentID.uuidString, &out)
    }

    /// The secret, URL, one-time seed, custom fields and generic bytes.
    private static func writeValues(_ item: Item, _ out: inout [UInt8]) {
        if let secret = item.secret { JSONWriter.secret(secret, name: "secret", &out) }
        JSONWriter.key("url", &out)
        JSONWriter.optional(item.url, &out)
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

    /// The Keychain attributes, `synchronizable` to `accessControlFlags`.
    private static func writeAttributes(_ item: Item, _ out: inout [UInt8]) {
        JSONWriter.key("synchronizable", &out)
        out += Array((item.synchronizable ? "true" : "false").utf8)
        JSONWriter.key("protocol", &out)
        JSONWriter.string(item.internetProtocol, &out)
        JSONWriter.key("authenticationType", &out)
        JSONWriter.string(item.authenticationType, &out)
        JSONWriter.key("port", &out)
        out += Array(String(item.port).utf8)
        JSONWriter.key("path", &out)
        JSONWriter.string(item.path, &out)
        JSONWriter.key("securityDomain", &out)
        JSONWriter.string(item.securityDomain, &out)
        JSONWriter.key("description", &out)
        JSONWriter.optional(item.itemDescription, &out)
        JSONWriter.key("type", &out)
        out += Array((item.itemType.map { String($0) } ?? "null").utf8)
        JSONWriter.key("creator", &out)
        out += Array((item.creator.map { String($0) } ?? "null").utf8)
        JSONWriter.key("invisible", &out)
        out += Array((item.isInvisible ? "true" : "false").utf8)
        JSONWriter.key("negative", &out)
        out += Array((item.isNegative ? "true" : "false").utf8)
        JSONWriter.key("accessControlFlags", &out)
        out += Array((item.accessControlFlags.map { String($0) } ?? "null").utf8)
        JSONWriter.key("deviceBinding", &out)
        out += Array((item.deviceBinding.map { "\"\($0.rawValue)\"" } ?? "null").utf8)
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
